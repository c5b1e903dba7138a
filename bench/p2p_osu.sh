#!/usr/bin/env bash
# checkmpi-p2p beside the OSU micro-benchmarks themselves, mode by mode:
#   OSU_DIR=/path/to/osu-micro-benchmarks bench/p2p_osu.sh [ROUNDS] [MODE...]
# OSU_DIR is an OMB 7.x build or install tree (its osu_* executables are
# found anywhere below it, built against the same MPI as CHECKMPI_BIN's
# build: bench/p2p.sh's rule). Each round runs OSU's program and
# checkmpi-p2p's mode one after the other, the order alternating from round
# to round; per size the median over rounds of each figure OSU prints and of
# checkmpi-p2p's same figure (its JSON), and their ratio p2p/osu. The last
# line of each mode is the median ratio over sizes: 1.00 is parity. Where
# OSU times every iteration alone (osu_latency, osu_latency_mt, osu_bw,
# osu_bibw) checkmpi-p2p runs with --block 1, so both figures hold the clock
# reads; the one-sided latencies time the whole loop, as checkmpi-p2p's blocks.
# nbc runs osu_ialltoall a second time in every round with the heap held as
# checkmpi-p2p nbc holds it (bench/osu_heap_hold.cpp, preloaded into the ranks
# only; built here with the build's mpicxx, under TMPDIR, which a run over
# several nodes must share) and adds p2p/held: Open MPI's libnbc costs
# 40-50 ns more per small call in a heap with free chunks, which OSU's own
# allocations may leave (they did in every launch on an AMD VM;
# docs/p2p_osu.md item 15).
# Modes (default all): pingpong bw bibw mbw-mr threads coll rma nbc barrier;
# one row of coll or rma alone by its name in the output, e.g. coll-bcast or
# rma-put-lock-all, for more rounds where a row's interval is wide.
# SIZES (default 1:65536) and ITERS (e.g. "-i 1000 -x 100"; default the tools'
# own, which are OSU's) apply to both. CONTROL=1 runs OSU's program a second
# time in every round (order rotating over the three) and adds osu2/osu per
# size: the noise floor of the machine. OSU_BARE names a second OMB build
# whose osu_put_latency, osu_get_latency and osu_acc_latency lack the two
# MPI_Wtime calls per iteration that OMB 7.x reads for its -G graphs with or
# without -G (docs/p2p_osu.md, "How OMB was built"): the rma comparisons then
# run it too in every round and add p2p/bare, the same loop without OSU's
# clock; and its osu_latency_mt with each sender thread's own clock reads and
# sum (OMB 7.2's threads share t_start, t_end and t_total unguarded), which
# threads then runs too, as p2p/own. RUN_TIMEOUT (default 900 s) bounds
# each program; one that fails or times out is reported and its comparison
# skipped, and the script then exits 1. Without OSU_DIR the script says so
# and exits 2; it compares figures, it does not judge them.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(pingpong bw bibw mbw-mr threads coll rma nbc barrier)
bin=${CHECKMPI_BIN:-build/bin}
sizes=${SIZES:-1:65536}
control=${CONTROL:-0}
limit=${RUN_TIMEOUT:-900}
read -r -a iters <<<"${ITERS:-}"
[ -n "${OSU_DIR:-}" ] || { echo "bench: set OSU_DIR to an OSU micro-benchmarks 7.x build (no OSU here)" >&2; exit 2; }
[ -d "$OSU_DIR" ] || { echo "bench: OSU_DIR '$OSU_DIR' is not a directory" >&2; exit 2; }
[ -x "$bin/checkmpi-p2p" ] || { echo "bench: $bin/checkmpi-p2p not found (build first)" >&2; exit 2; }
case $control in 0 | 1) ;; *) echo "bench: CONTROL '$control' is not 0 or 1" >&2; exit 2 ;; esac
[ -z "${OSU_BARE:-}" ] || [ -d "$OSU_BARE" ] || { echo "bench: OSU_BARE '$OSU_BARE' is not a directory" >&2; exit 2; }
# shellcheck source=bench/build_mpi.sh
source bench/build_mpi.sh  # the build's MPI
mpiexec=${MPIEXEC:-$mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=${NP:-2}          # ranks for the pair modes; coll, nbc, barrier and mbw-mr take NP too
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

osu() {  # osu NAME [DIR]: the executable, or nothing
  find -L "${2:-$OSU_DIR}" -name "$1" -type f -perm -u+x 2>/dev/null | sort | head -1
}

# job NAME OSU-PROGRAM OSU-ARGS P2P-ARGS: one comparison (its files under $out/NAME.*).
declare -a jobs=()
job() { jobs+=("$1|$2|$3|$4"); }
for mode in "${modes[@]}"; do
  before=${#jobs[@]}
  case $mode in
    # osu_latency(_mt), osu_bw and osu_bibw read the clock around every
    # iteration (its cost is in their figures): --block 1 does so too
    pingpong) job pingpong osu_latency "" "pingpong --block 1" ;;
    bw) job bw osu_bw "" "bw --block 1" ;;
    bibw) job bibw osu_bibw "" "bibw --block 1" ;;
    mbw-mr) job mbw-mr osu_mbw_mr "" "mbw-mr" ;;
    threads) job threads osu_latency_mt "-t 2:2" "pingpong --threads 2 --block 1" ;;
    coll | coll-*)
      for op in allreduce alltoall alltoallv bcast allgather reduce-scatter; do
        [ "$mode" = coll ] || [ "$mode" = "coll-$op" ] || continue
        # checkmpi-p2p reduces floats; OSU's default type is MPI_CHAR
        t=""
        [ "$op" != allreduce ] && [ "$op" != reduce-scatter ] || t="-T mpi_float"
        job "coll-$op" "osu_${op/-/_}" "$t" "coll --op $op"
      done ;;
    rma | rma-put-* | rma-get-* | rma-acc-*)
      for op in put get acc; do
        for sync in flush fence pscw lock lock-all; do
          [ "$mode" = rma ] || [ "$mode" = "rma-$op-$sync" ] || continue
          job "rma-$op-$sync" "osu_${op}_latency" "-w allocate -s ${sync/-/_}" "rma --op $op --sync $sync"
        done
      done ;;
    # osu_ialltoall reads the clock around each phase of its overlapped loop: --osu-clock does so too
    nbc) job nbc osu_ialltoall "" "nbc --op ialltoall --osu-clock" ;;
    barrier) job barrier osu_barrier "" "coll --op barrier" ;;
    *) ;;
  esac
  [ ${#jobs[@]} -gt "$before" ] || { echo "bench: unknown mode '$mode'" >&2; exit 2; }
done

echo "# bench/p2p_osu.sh: $(uname -n), $(nproc) CPUs, $(date -u +%FT%TZ); $rounds rounds; $np ranks; sizes $sizes"
# the first line of the launcher's version text that holds a version number
# ("mpiexec (OpenRTE) 4.1.4"; MPICH's Hydra: "Version: 4.0.2")
echo "# MPI: $("$mpiexec" --version 2>&1 | grep -m1 -E '[0-9]+\.[0-9]+' | tr -s ' '); OSU_DIR $OSU_DIR"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
for entry in "${jobs[@]}"; do
  IFS='|' read -r name prog oargs pargs <<<"$entry"
  exe=$(osu "$prog")
  if [ -z "$exe" ]; then
    echo "# $name: no $prog under OSU_DIR: skipped"
    continue
  fi
  variant="" extra=""
  if [ -n "${OSU_BARE:-}" ] && { [ "${name%%-*}" = rma ] || [ "$name" = threads ]; }; then
    kind=bare
    [ "$name" != threads ] || kind=own
    variant=$(osu "$prog" "$OSU_BARE")
    [ -n "$variant" ] && extra=$kind || echo "# $name: no $prog under OSU_BARE: no p2p/$kind"
  fi
  if [ "$name" = nbc ]; then
    if [ ! -f "$out/osu_heap_hold.so" ] && ! "${mpicxx:-mpicxx}" -O2 -shared -fPIC -Isrc -o "$out/osu_heap_hold.so" \
      bench/osu_heap_hold.cpp src/p2p/heap.cpp >"$out/hold.log" 2>&1; then
      echo "# nbc: bench/osu_heap_hold.cpp did not build ($(tail -n 1 "$out/hold.log")): no p2p/held"
    else
      extra=held
    fi
  fi
  m=$sizes
  [ "$name" != barrier ] || m=""
  ok=1
  # run WHICH ROUND: one program of one round; false (and a line saying why) when it failed
  run() {
    local file rc=0
    if [ "$1" = p2p ]; then
      file="$out/$name.p2p.$2.txt"
      # shellcheck disable=SC2086
      timeout "$limit" "$mpiexec" -n "$np" "$bin/checkmpi-p2p" $pargs ${m:+-m $m} "${iters[@]}" \
        --json "$out/$name.p2p.$2.json" >"$file" 2>&1 || rc=$?
    else
      file="$out/$name.$1.$2"
      local -a program=("$exe")
      [ "$1" != bare ] && [ "$1" != own ] || program=("$variant")
      [ "$1" != held ] || program=(env "LD_PRELOAD=$out/osu_heap_hold.so${LD_PRELOAD:+:$LD_PRELOAD}" "$exe")
      # shellcheck disable=SC2086
      timeout "$limit" "$mpiexec" -n "$np" "${program[@]}" $oargs ${m:+-m $m} "${iters[@]}" >"$file" 2>&1 || rc=$?
    fi
    [ "$rc" -eq 0 ] && return 0
    # OMB 7.2's osu_latency_mt never calls MPI_Finalize: Open MPI's mpiexec then says a process exited
    # improperly and exits 1, after the program printed its whole table, which is used.
    if [ "$1" != p2p ] && [ "$rc" -eq 1 ] && [ -n "$m" ] && grep -q 'exiting improperly' "$file" &&
      grep -qE "^${m##*:}[[:space:]]" "$file"; then
      [ -n "${finalize_noted:-}" ] ||
        echo "# $name: $prog ends without MPI_Finalize (its launcher exits 1): its whole table is used"
      finalize_noted=1
      return 0
    fi
    local why="exit $rc"
    [ "$rc" -ne 124 ] || why="timed out after $limit s"
    echo "# $name: $([ "$1" = p2p ] && echo "checkmpi-p2p $pargs" || echo "$prog ($1)") failed ($why): $(grep -v '^\s*$' "$file" | tail -n 1)"
    return 1
  }
  order=(osu p2p)
  [ "$control" = 0 ] || order+=(osu2)
  [ -z "$extra" ] || order+=("$extra")
  for r in $(seq "$rounds"); do
    n=${#order[@]}
    for j in $(seq 0 $((n - 1))); do
      which=${order[$(((j + r - 1) % n))]}
      run "$which" "$r" || { ok=0; break; }
    done
    [ "$ok" = 1 ] || break
  done
  if [ "$ok" = 1 ]; then
    python3 bench/p2p_osu_compare.py "$out" "$name" "$rounds" "$control" "$extra"
  else
    failed=1
  fi
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$failed"
