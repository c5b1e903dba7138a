#!/usr/bin/env bash
# Several nodes on this machine, with real TCP between them (issue 31): each
# node a network namespace joined to the others by a bridge, and, at launch,
# its own UTS (hostname) and mount namespace (its own /dev/shm and /tmp).
#
#   scripts/cluster-local.sh start --nodes N [--rate RATE] [--share PATH]... [DIR]   # prints the environment to use
#   scripts/cluster-local.sh status [DIR]                           # exit 0 when up, 3 when not
#   scripts/cluster-local.sh stop [DIR]                             # removes all it made; idempotent
#   scripts/cluster-local.sh exec NODE COMMAND...                   # COMMAND on NODE, as a launcher does
#   scripts/cluster-local.sh link NODE down|up [DIR]                # a node's link to the others cut or restored
#   scripts/cluster-local.sh rate RATE|none NODE...|all [DIR]       # a live link's shaping changed (faults)
#
# Needs root, iproute2 (ip, tc), util-linux (unshare, taskset). Nodes
# cmpi-n0 .. cmpi-n(N-1) (N at most 16) are network namespaces of those
# names, each with a veth pair into the bridge cmpi-br0; the nodes get
# 10.213.0.10+K/24 on their eth0 and the bridge (the launcher's side, where
# mpirun runs) 10.213.0.1. No node has a route beyond that subnet, and the
# machine does not forward, so no traffic leaves these namespaces.
# `--rate RATE` (tc's units: 1gbit, 500mbit) shapes each node link, both
# ways, with tbf. State in DIR (default $CHECKMPI_CLUSTER_DIR, else
# /run/checkmpi-cluster): the hostfile, a hosts file that each node sees as
# its /etc/hosts (the machine's own /etc/hosts is left alone), the launcher
# wrapper `rsh` and `env`, the environment that `start` prints:
#
#   OMPI_MCA_plm_rsh_agent=DIR/rsh          Open MPI starts its daemons through the wrapper (no sshd)
#   OMPI_MCA_btl=self,vader,tcp ...         TCP between nodes, on this subnet only (shared memory within one)
#   OMPI_MCA_osc=^ucx                       one-sided through pt2pt where rdma has no BTL for TCP
#   OMPI_MCA_mpi_yield_when_idle=1          a rank waiting in MPI yields its CPU: a node has one, which two ranks
#                                           of it, or other nodes, may share (busy polling: 4-16 ms a step)
#   UCX_TLS=self,tcp UCX_NET_DEVICES=eth0   MPICH (Debian's runs on UCX, which takes the nodes for one host and
#                                           would read the other node's memory, bypassing the network)
#   CHECKMPI_CLUSTER_MPICH='-launcher ssh -launcher-exec DIR/rsh -iface cmpi-br0 -bind-to none'   for hydra
#
# DIR/hostfile names the nodes for Open MPI (`cmpi-n0 slots=1`: a node has one
# CPU), DIR/hostfile.mpich for MPICH's hydra (`cmpi-n0:1`).
# Each node has its own /tmp: the job's working folder and output files must
# lie outside /tmp and /dev/shm (DIR too), e.g. under /var/tmp, or be shared:
# `--share PATH` (a folder under /tmp, e.g. a checkout there) is bound into
# every node's /tmp at the same path.
#
# The wrapper enters the node's network namespace, then new UTS and mount
# namespaces (and IPC), sets the hostname, mounts a private tmpfs on /dev/shm and /tmp,
# binds the hosts file over /etc/hosts and confines the node to its own CPU
# (node K on CPU K mod CPUs): every node believes it owns CPU 0, so MPI must
# not bind (`--bind-to none`, which the environment sets), or every rank of
# every node lands on CPU 0 and each message waits for a scheduler tick.
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"
PREFIX=cmpi-n
BRIDGE=cmpi-br0
VETH=cmpi-v     # the root namespace's end of node K's pair: cmpi-vK
NET=10.213.0    # /24
MAX_NODES=16

say() { echo "cluster-local: $*" >&2; }
die() { say "error: $*"; exit 2; }
usage() {
  echo "usage: $0 start --nodes N [--rate RATE] [DIR] | status [DIR] | stop [DIR] | exec NODE COMMAND..." \
    "| link NODE down|up [DIR] | rate RATE|none NODE...|all [DIR]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
action=$1
shift

if [ "$action" = exec ]; then
  # NODE COMMAND...: what `ssh NODE COMMAND...` would do (the words joined by blanks, run by sh). Leading ssh
  # options (Open MPI and hydra may pass -x, -o ...) are skipped. Also used as DIR/rsh.
  while [ $# -gt 0 ]; do
    case $1 in
      -[1246AaCfgKkMNnqsTtVvXxYy]*) shift ;;
      -[BbcDEeFIiJLlmOopQRSWw]) shift 2 ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  [ $# -ge 2 ] || { echo "cluster-local exec: usage: exec NODE COMMAND..." >&2; exit 255; }
  node=$1
  shift
  dir=$(realpath -m "${CHECKMPI_CLUSTER_DIR:-/run/checkmpi-cluster}")
  # The wrapper that `start` writes sets these; a node's name, CPU and files are looked up in its table.
  dir=${CLUSTER_LOCAL_DIR:-$dir}
  line=$(awk -v n="$node" '$1 == n || $2 == n' "$dir/nodes" 2>/dev/null | head -n 1)
  [ -n "$line" ] || { echo "cluster-local exec: '$node' is no node of the cluster in $dir" >&2; exit 255; }
  read -r name addr cpu <<<"$line"
  # The node's /tmp: a tmpfs made aside (in DIR/stage, seen by this mount namespace alone), the shared folders
  # (start --share) bound into it, then moved over /tmp.
  exec ip netns exec "$name" unshare --uts --ipc --mount --propagation private -- taskset -c "$cpu" \
    /bin/sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && mount -t tmpfs -o mode=1777,size=50% "tmpfs-$1" /dev/shm &&
      mount -t tmpfs -o mode=1777 "tmpfs-$1" "$3" &&
      { [ ! -s "$4" ] || while read -r p; do mkdir -p "$3${p#/tmp}" && mount --rbind "$p" "$3${p#/tmp}" || exit 1; done <"$4"; } &&
      mount --move "$3" /tmp && shift 4 && exec /bin/sh -c "$*"' \
    cluster-local "$name" "$dir/hosts" "$dir/stage" "$dir/share" "$*"
fi

nodes=""
rate=""
shares=()
dir=${CHECKMPI_CLUSTER_DIR:-/run/checkmpi-cluster}
targets=()  # link and rate: the nodes (and link's state, rate's rate first)
case $action in
  link) [ $# -ge 2 ] || usage; targets=("$1" "$2"); shift 2 ;;
  rate) [ $# -ge 2 ] || usage; rate=$1; shift; while [ $# -gt 0 ] && [[ $1 == cmpi-n* || $1 == all ]]; do targets+=("$1"); shift; done ;;
esac
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) [ $# -ge 2 ] || usage; nodes=$2; shift 2 ;;
    --rate) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
    --share) [ $# -ge 2 ] || usage; shares+=("$2"); shift 2 ;;
    -*) usage ;;
    *) dir=$1; shift ;;
  esac
done
dir=$(realpath -m "$dir")
# The path goes into the env file, the wrapper and launchers' command lines.
[[ $dir =~ ^[A-Za-z0-9_./-]+$ ]] || die "DIR '$dir': letters, digits, '_', '.', '-' and '/' only"
case $action:$dir/ in
  start:/tmp/* | start:/dev/shm/*) die "DIR '$dir' is under /tmp or /dev/shm, which every node has its own of: take one outside them" ;;
esac

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, a bridge)"
  local tool
  for tool in ip tc unshare taskset nsenter; do
    command -v "$tool" >/dev/null || die "$tool not found (iproute2, util-linux)"
  done
}

ours() {  # the namespaces and links of ours that exist, one per line
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" || true
  ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | grep -E "^(${VETH}[0-9]+|${BRIDGE})$" || true
}

stop() {
  local ns pid pids links link
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" || true); do
    # Whatever still runs in the node (ranks, daemons of a crashed job): SIGTERM, SIGKILL after 5 s.
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [ -n "$pids" ]; then
      say "$ns: stopping what still runs there (PIDs $(echo $pids))"
      for pid in $pids; do kill "$pid" 2>/dev/null || true; done
      for _ in $(seq 50); do
        [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
        sleep 0.1
      done
      for pid in $(ip netns pids "$ns" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
      for _ in $(seq 50); do
        [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
        sleep 0.1
      done
    fi
    ip netns delete "$ns" 2>/dev/null || true
  done
  links=$(ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' |
    grep -E "^(${VETH}[0-9]+|${BRIDGE})$" || true)
  for link in $links; do ip link delete "$link" 2>/dev/null || true; done
  rm -f "$dir/env" "$dir/hostfile" "$dir/hostfile.mpich" "$dir/hosts" "$dir/nodes" "$dir/rsh" "$dir/rate" \
    "$dir/share"
  rmdir "$dir/stage" 2>/dev/null || true
  rmdir "$dir" 2>/dev/null || true
  local left
  left=$(ours)
  if [ -n "$left" ]; then
    say "error: could not remove: $(echo $left)"
    exit 1
  fi
}

subnet_free() {  # nothing on this machine uses NET.0/24 but us
  ! ip -4 -o addr show | awk '{print $4}' | grep -q "^${NET//./\\.}\." &&
    ! ip -4 route show | grep -q "^${NET//./\\.}\."
}

start() {
  need_root
  [[ $nodes =~ ^[1-9][0-9]*$ ]] && [ "$nodes" -le $MAX_NODES ] ||
    die "--nodes '$nodes': a whole number from 1 to $MAX_NODES"
  if [ -n "$rate" ]; then
    [[ $rate =~ ^[1-9][0-9]*(\.[0-9]+)?(bit|kbit|mbit|gbit|bps|kbps|mbps|gbps)$ ]] ||
      die "--rate '$rate': a rate in tc's units, e.g. 500mbit or 1gbit"
  fi
  local p resolved=()
  for p in "${shares[@]}"; do
    [ -d "$p" ] && [[ $(realpath "$p") =~ ^/tmp/[A-Za-z0-9_./-]+$ ]] ||
      die "--share '$p': a folder under /tmp (letters, digits, '_', '.', '-' and '/'), which the nodes would not see"
    resolved+=("$(realpath "$p")")
  done
  if [ -n "$(ours)" ]; then
    say "a cluster is already up; stopping it first"
    stop
  fi
  subnet_free || die "$NET.0/24 is already used on this machine ($(ip -4 -o addr show | awk '{print $2, $4}' |
    grep " ${NET//./\\.}\." | head -n 1)); stop whatever uses it"
  mkdir -p "$dir" "$dir/stage"
  chmod 755 "$dir"
  trap 'say "error: start failed; removing what it made"; stop' ERR
  printf '%s\n' "${resolved[@]}" | sed '/^$/d' >"$dir/share"
  local cpus k name addr burst
  cpus=$(nproc)
  ip link add "$BRIDGE" type bridge
  ip addr add "$NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  : >"$dir/nodes.tmp"
  {
    echo "127.0.0.1 localhost"
    echo "$NET.1 cmpi-head"
  } >"$dir/hosts.tmp"
  : >"$dir/hostfile.tmp"
  : >"$dir/hostfile.mpich.tmp"
  for k in $(seq 0 $((nodes - 1))); do
    name=$PREFIX$k
    addr=$NET.$((10 + k))
    ip netns add "$name"
    ip link add "$VETH$k" type veth peer name eth0 netns "$name"
    ip link set "$VETH$k" master "$BRIDGE" up
    ip -n "$name" addr add "$addr/24" dev eth0
    ip -n "$name" link set lo up
    ip -n "$name" link set eth0 up
    if [ -n "$rate" ]; then
      # Both ways: the node's sending on its eth0, its receiving on the bridge's port. burst: 1 ms at the rate
      # (at least 64 KiB, a TSO segment), queue: 50 ms.
      burst=$(tc_burst "$rate")
      tc -n "$name" qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 50ms
      tc qdisc add dev "$VETH$k" root tbf rate "$rate" burst "$burst" latency 50ms
    fi
    echo "$name $addr $((k % cpus))" >>"$dir/nodes.tmp"
    echo "$addr $name" >>"$dir/hosts.tmp"
    echo "$name slots=1" >>"$dir/hostfile.tmp"
    echo "$name:1" >>"$dir/hostfile.mpich.tmp"
  done
  mv "$dir/nodes.tmp" "$dir/nodes"
  mv "$dir/hosts.tmp" "$dir/hosts"
  mv "$dir/hostfile.tmp" "$dir/hostfile"
  mv "$dir/hostfile.mpich.tmp" "$dir/hostfile.mpich"
  echo "${rate:-none}" >"$dir/rate"
  cat >"$dir/rsh.tmp" <<EOF
#!/bin/sh
# Generated by scripts/cluster-local.sh: the launcher's 'ssh' into the nodes in $dir.
CLUSTER_LOCAL_DIR='$dir' exec /bin/bash '$(realpath "$0")' exec "\$@"
EOF
  chmod 755 "$dir/rsh.tmp"
  mv "$dir/rsh.tmp" "$dir/rsh"
  # Shell syntax (values quoted): `set -a; . DIR/env; set +a` exports it.
  cat >"$dir/env.tmp" <<EOF
OMPI_MCA_plm_rsh_agent='$dir/rsh'
OMPI_MCA_plm_rsh_no_tree_spawn=1
OMPI_MCA_orte_default_hostfile='$dir/hostfile'
OMPI_MCA_btl=self,vader,tcp
OMPI_MCA_osc=^ucx
OMPI_MCA_pml=ob1
OMPI_MCA_btl_tcp_if_include=$NET.0/24
OMPI_MCA_oob_tcp_if_include=$NET.0/24
OMPI_MCA_hwloc_base_binding_policy=none
OMPI_MCA_rmaps_base_oversubscribe=1
OMPI_MCA_mpi_yield_when_idle=1
UCX_TLS=self,tcp
UCX_NET_DEVICES=eth0
CHECKMPI_CLUSTER_HOSTFILE='$dir/hostfile'
CHECKMPI_CLUSTER_HOSTFILE_MPICH='$dir/hostfile.mpich'
CHECKMPI_CLUSTER_MPICH='-launcher ssh -launcher-exec $dir/rsh -iface $BRIDGE -bind-to none'
EOF
  mv "$dir/env.tmp" "$dir/env"
  ip link set "$BRIDGE" alias "checkmpi cluster-local $dir"
  trap - ERR
  # Every node reaches every other (and the launcher's side) before start says it is up.
  for k in $(seq 0 $((nodes - 1))); do
    local j
    for j in $(seq 0 $((nodes - 1))) head; do
      local to=$NET.1
      [ "$j" = head ] || to=$NET.$((10 + j))
      reach "$PREFIX$k" "$to" || { say "error: $PREFIX$k does not reach $to"; stop; exit 1; }
    done
  done
  say "$nodes node(s) up: $(awk '{printf "%s%s (%s, CPU %s)", (NR > 1 ? ", " : ""), $1, $2, $3}' "$dir/nodes")" \
    "; link rate ${rate:-not shaped}; state in $dir"
  say "use: set -a; . $dir/env; set +a; mpirun -n $nodes --hostfile $dir/hostfile ..." \
    "(MPICH: mpiexec.mpich \$CHECKMPI_CLUSTER_MPICH -f $dir/hostfile.mpich ...)"
  sed 's/^/export /' "$dir/env"
}

tc_burst() {  # 1 ms of RATE in bytes, at least 64 KiB (awk: no interpreter to start while a link is changed mid-run)
  echo "$1" | awk '{
    match($0, /^[0-9.]+/); v = substr($0, 1, RLENGTH); u = substr($0, RLENGTH + 1)
    f["bit"] = 1 / 8; f["kbit"] = 125; f["mbit"] = 125e3; f["gbit"] = 125e6
    f["bps"] = 1; f["kbps"] = 1e3; f["mbps"] = 1e6; f["gbps"] = 1e9
    b = int(v * f[u] / 1000); print (b > 65536 ? b : 65536) }'
}

reach() {  # NODE ADDRESS: a TCP connection from NODE to ADDRESS is refused or accepted, not lost (no ping here)
  local i out
  for i in $(seq 20); do
    out=$(ip netns exec "$1" timeout 2 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1) && return 0
    case $out in *refused*) return 0 ;; esac
    sleep 0.2
  done
  return 1
}

node_index() {  # NODE -> K, from the cluster's table; exit 2 naming it when it is none of its nodes
  local k
  k=$(awk -v n="$1" '$1 == n {print NR - 1}' "$dir/nodes" 2>/dev/null)
  [ -n "$k" ] || die "'$1' is no node of the cluster in $dir (its nodes: $(awk '{print $1}' "$dir/nodes" 2>/dev/null | paste -sd' '))"
  echo "$k"
}

link() {  # NODE down|up: the bridge's port of the node's link, so that nothing reaches it or leaves it
  need_root
  local k
  k=$(node_index "${targets[0]}")
  case ${targets[1]} in
    down | up) ip link set "$VETH$k" "${targets[1]}" ;;
    *) die "link ${targets[0]} '${targets[1]}': down or up" ;;
  esac
  say "${targets[0]}: link ${targets[1]}"
}

rerate() {  # RATE|none NODE...|all: each node's shaping (both ways) replaced, or removed with none
  need_root
  [ "$rate" = none ] || [[ $rate =~ ^[1-9][0-9]*(\.[0-9]+)?(bit|kbit|mbit|gbit|bps|kbps|mbps|gbps)$ ]] ||
    die "rate '$rate': a rate in tc's units, e.g. 500mbit or 1gbit, or none"
  [ ${#targets[@]} -ge 1 ] || die "rate $rate: name the nodes (cmpi-n0 ...) or all"
  local names=() name k burst
  if [ "${targets[*]}" = all ]; then
    mapfile -t names < <(awk '{print $1}' "$dir/nodes" 2>/dev/null)
    [ ${#names[@]} -ge 1 ] || die "no cluster in $dir"
  else
    names=("${targets[@]}")
  fi
  for name in "${names[@]}"; do
    k=$(node_index "$name")
    tc -n "$name" qdisc del dev eth0 root 2>/dev/null || true
    tc qdisc del dev "$VETH$k" root 2>/dev/null || true
    if [ "$rate" != none ]; then
      burst=$(tc_burst "$rate")
      tc -n "$name" qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 50ms
      tc qdisc add dev "$VETH$k" root tbf rate "$rate" burst "$burst" latency 50ms
    fi
  done
  [ "${targets[*]}" != all ] || echo "$rate" >"$dir/rate"
  say "${names[*]}: link rate $([ "$rate" = none ] && echo 'not shaped' || echo "$rate")"
}

status() {
  local n
  n=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -cE "^${PREFIX}[0-9]+$" || true)
  if [ -f "$dir/nodes" ] && ip link show "$BRIDGE" >/dev/null 2>&1 && [ "$n" -ge 1 ]; then
    say "$n node(s) up, link rate $(cat "$dir/rate" 2>/dev/null || echo '?'), state in $dir:"
    local name addr cpu
    while read -r name addr cpu; do
      echo "$name $addr cpu=$cpu processes=$(ip netns pids "$name" 2>/dev/null | wc -l)"
    done <"$dir/nodes"
    return 0
  fi
  if [ -n "$(ours)" ]; then
    say "not up in $dir, but left over: $(echo $(ours)) (scripts/cluster-local.sh stop removes them)"
  else
    say "not running"
  fi
  exit 3
}

case $action in
  start) start ;;
  stop) need_root; stop; say "stopped; nothing of the cluster is left" ;;
  status) status ;;
  link) link ;;
  rate) rerate ;;
  *) usage ;;
esac
