#!/usr/bin/env bash
# A Slurm cluster on this machine, for trying and testing `checkmpi campaign`
# with executor "slurm" (docs/campaign.md):
#
#   scripts/slurm-local.sh start [--nodes N] [--cpus C] [DIR]   # prints SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh start --nodes N --netns [--rate R] [--share PATH]... [--cpus C] [DIR]   # each node its own host
#   scripts/slurm-local.sh status [DIR]                         # exit 0 when it answers, 3 when not
#   scripts/slurm-local.sh stop [DIR]                           # cancels its jobs, stops its daemons
#
# Debian's slurm-wlm and munge (`bash scripts/setup.sh --slurm` installs
# them and nothing else; `--tests` installs them too), all state in DIR (default $CHECKMPI_SLURM_DIR, else
# /tmp/checkmpi-slurm-$UID): its own munge key and socket, slurm.conf,
# spool, logs and free ports, so it touches no system-wide Slurm or munge.
# Point the Slurm commands at it with `export SLURM_CONF=DIR/slurm.conf`.
#
# The one host is declared as N nodes (default 2) of C CPUs (default 8),
# each with its own slurmd, whatever the real core count
# (SlurmdParameters=config_overrides), so that ranks_per_node spreads ranks
# over nodes as on a real cluster. The nodes share one hostname, so the
# TaskProlog gives Open MPI's shared-memory transport a folder per node (its
# segment names would collide) and keeps its TCP traffic on loopback.
#
# --netns (issue 31, root): the nodes are scripts/cluster-local.sh's emulated nodes cmpi-n0 .. (its state in
# DIR/cluster), each slurmd started inside its node's namespaces (network, hostname, /tmp and /dev/shm, CPU), so
# that `sbatch` and `srun` place ranks on different hosts with real TCP between them; slurmctld runs on the
# bridge's side (10.213.0.1), every slurmd on the same port of its node's address. The TaskProlog gives every task
# the cluster's Open MPI settings (TCP on the nodes' subnet, no binding, yielding when idle). DIR must then lie
# outside /tmp and /dev/shm (each node has its own): the default is /var/tmp/checkmpi-slurm-$UID. `stop` stops the
# daemons, then the nodes. `--rate` shapes the node links, `--share` binds a folder under /tmp (a checkout there,
# whose Python the jobs run) into every node's /tmp (cluster-local.sh's options).
set -euo pipefail

usage() { echo "usage: $0 start|stop|status [--nodes N] [--cpus C] [--netns [--rate R]] [DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
action=$1
shift
nodes=2
cpus=8
netns=0
rate=""
shares=()
dir=${CHECKMPI_SLURM_DIR:-}
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) [ $# -ge 2 ] || usage; nodes=$2; shift 2 ;;
    --cpus) [ $# -ge 2 ] || usage; cpus=$2; shift 2 ;;
    --netns) netns=1; shift ;;
    --rate) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
    --share) [ $# -ge 2 ] || usage; shares+=(--share "$2"); shift 2 ;;
    -*) usage ;;
    *) dir=$1; shift ;;
  esac
done
[[ $nodes =~ ^[1-9][0-9]*$ && $cpus =~ ^[1-9][0-9]*$ ]] || { echo "slurm-local: --nodes and --cpus take positive integers" >&2; exit 2; }
[ -z "$rate" ] && [ ${#shares[@]} -eq 0 ] || [ $netns -eq 1 ] ||
  { echo "slurm-local: --rate and --share are for --netns nodes; give --netns" >&2; exit 2; }
if [ -z "$dir" ]; then
  # Each emulated node has its own /tmp: their DIR lies elsewhere (stop and status find it there too).
  dir=/tmp/checkmpi-slurm-$(id -u)
  if [ $netns -eq 1 ] || [ -f "/var/tmp/checkmpi-slurm-$(id -u)/netns" ]; then dir=/var/tmp/checkmpi-slurm-$(id -u); fi
fi
dir=$(realpath -m "$dir")
conf=$dir/slurm.conf
export SLURM_CONF=$conf
cluster=$dir/cluster  # --netns: cluster-local.sh's state
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac  # no dirname: on a bare PATH it must still say what is missing
here=$(cd "$here" && pwd)

say() { echo "slurm-local: $*" >&2; }
export PATH="$PATH:/usr/sbin:/sbin"  # the daemons live there; a user's PATH may lack it

stop_cluster() {  # --netns: the emulated nodes, once the daemons in them are stopped
  if [ -f "$dir/netns" ]; then
    CHECKMPI_CLUSTER_DIR=$cluster bash "$here/cluster-local.sh" stop "$cluster" || return 1
    rm -f "$dir/netns"
  fi
}

cancel_jobs() {  # this cluster's jobs (its own controller's), so that no job step outlives the daemons
  answers || return 0
  scancel --user "$(id -un)" 2>/dev/null || true
  for _ in $(seq 100); do  # until none is left, completing ones too: 10 s at most
    [ -z "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && break
    sleep 0.1
  done
}

stop_daemons() {  # the daemons of this DIR only, by their pid files: SIGTERM, SIGKILL after 10 s
  local pidfile pid pids=()
  for pidfile in "$dir"/slurmd-*.pid "$dir"/slurmctld.pid "$dir"/munge/munged.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$pidfile"
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

answers() { [ -f "$conf" ] && timeout 10 sinfo -h -o %t >/dev/null 2>&1; }

free_ports() {  # N free TCP ports on 127.0.0.1
  python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

start() {
  local missing=() tool
  for tool in slurmctld slurmd munged mungekey sinfo; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "error: ${missing[*]} not found; install Debian's slurm-wlm and munge with: bash scripts/setup.sh --slurm"
    exit 2
  fi
  if [ $netns -eq 1 ]; then
    case $dir/ in
      /tmp/* | /dev/shm/*) say "error: DIR '$dir' is under /tmp or /dev/shm, which every node has its own of: take one outside them"; exit 2 ;;
    esac
    [ "$(id -u)" -eq 0 ] || { say "error: --netns needs root (network namespaces)"; exit 2; }
  fi
  stop_daemons
  stop_cluster
  mkdir -p "$dir/munge" "$dir/ctld"
  chmod 755 "$dir" "$dir/munge"
  [ -f "$dir/munge/munge.key" ] || mungekey -c -k "$dir/munge/munge.key" -b 1024
  chmod 600 "$dir/munge/munge.key"
  munged -f --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"

  local host ports ctld_port node_ports i ctld_addr=127.0.0.1 nodes_line names
  host=$(hostname -s)
  read -r -a ports <<<"$(free_ports $((nodes + 1)))"
  ctld_port=${ports[0]}
  node_ports=$(IFS=,; echo "${ports[*]:1}")
  nodes_line="NodeName=node[1-$nodes] NodeHostname=$host NodeAddr=127.0.0.1 Port=$node_ports CPUs=$cpus State=UNKNOWN"
  if [ $netns -eq 1 ]; then
    # The nodes, each its own network: slurmctld on the bridge's side, every slurmd on the same port of its own
    # address. Their names are the nodes' host names (cmpi-n0 ...), as the jobs see them.
    touch "$dir/netns"
    CHECKMPI_CLUSTER_DIR=$cluster bash "$here/cluster-local.sh" start --nodes "$nodes" ${rate:+--rate "$rate"} \
      "${shares[@]}" "$cluster" >/dev/null || { say "error: the emulated nodes did not start"; rm -f "$dir/netns"; exit 1; }
    ctld_addr=10.213.0.1
    nodes_line=$(awk -v port="${ports[1]}" -v cpus="$cpus" \
      '{printf "NodeName=%s NodeHostname=%s NodeAddr=%s Port=%s CPUs=%s State=UNKNOWN\n", $1, $1, $2, port, cpus}' \
      "$cluster/nodes")
    names=$(awk '{print $1}' "$cluster/nodes")
    # Every task gets the cluster's Open MPI settings: TCP between the nodes, shared memory within one.
    {
      echo "#!/bin/sh"
      grep -E '^(OMPI_MCA_(btl|pml|osc|btl_tcp_if_include|oob_tcp_if_include|hwloc_base_binding_policy|rmaps_base_oversubscribe|mpi_yield_when_idle)|UCX_TLS|UCX_NET_DEVICES)=' \
        "$cluster/env" | sed "s/'//g; s/^/echo \"export /; s/\$/\"/"
    } >"$dir/task-prolog.sh"
  else
    names=$(seq -f node%g "$nodes")
    cat >"$dir/task-prolog.sh" <<EOF
#!/bin/sh
echo "export OMPI_MCA_btl_vader_backing_directory=$dir/tmp-\$SLURMD_NODENAME"
echo "export OMPI_MCA_btl_tcp_if_include=lo"
EOF
  fi
  chmod 755 "$dir/task-prolog.sh"
  for i in $names; do mkdir -p "$dir/spool-$i" "$dir/tmp-$i"; done
  cat >"$conf" <<EOF
# Generated by scripts/slurm-local.sh: $nodes nodes x $cpus CPUs on $host.
ClusterName=checkmpi
SlurmctldHost=$host($ctld_addr)
SlurmctldPort=$ctld_port
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool-%n
TmpFS=$dir/tmp-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
TaskProlog=$dir/task-prolog.sh
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
KillWait=5
$nodes_line
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -f "$conf"
  if [ $netns -eq 1 ]; then
    # `ip netns exec` gives the node a /sys of its network, without the cgroup file systems slurmd looks for:
    # mounted there again as this machine has them (the same hierarchies).
    grep -E '^[^ ]+ /sys/fs/cgroup(/[^ ]*)? ' /proc/self/mounts | awk '{print $1, $2, $3, $4}' >"$dir/cgroup-mounts"
  fi
  for i in $names; do
    if [ $netns -eq 1 ]; then  # inside the node, as a launcher's command runs there
      CHECKMPI_CLUSTER_DIR=$cluster bash "$here/cluster-local.sh" exec "$i" \
        "while read -r src at type opts; do mkdir -p \$at && mount -t \$type -o \$opts \$src \$at || exit 1; done <$dir/cgroup-mounts && exec $(command -v slurmd) -f $conf -N $i"
    else
      slurmd -f "$conf" -N "$i"
    fi
  done
  for _ in $(seq 60); do
    if [ "$(timeout 10 sinfo -h -o %T 2>/dev/null | sort -u)" = idle ]; then
      if [ $netns -eq 1 ]; then
        say "$nodes nodes x $cpus CPUs up, each slurmd in its emulated node ($(echo $names); state in $dir)"
      else
        say "$nodes nodes x $cpus CPUs up (state in $dir)"
      fi
      echo "SLURM_CONF=$conf"
      return 0
    fi
    sleep 0.5
  done
  say "error: the nodes did not come up within 30 s; the logs' last lines:"
  tail -n 5 "$dir"/*.log "$dir"/munge/munged.log >&2 || true
  stop_daemons
  stop_cluster || true
  exit 1
}

case $action in
  start) start ;;
  stop) cancel_jobs; stop_daemons; stop_cluster; say "stopped (state kept in $dir)" ;;
  status)
    if answers; then sinfo; else say "not running (no answer from $conf)"; exit 3; fi ;;
  *) usage ;;
esac
