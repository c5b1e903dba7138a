#!/usr/bin/env bash
# Overlap of non-blocking collectives on this machine (checkmpi-p2p nbc, OSU's
# definition), 2 ranks, with Open MPI (build/) and MPICH (build-mpich/), with
# and without MPI_Test calls during the compute (--progress 0,1,8,64), and
# with MPICH's progress thread (--progress-thread; Open MPI 4.1 has none for
# shared memory, so it is not run). The configurations run interleaved,
# ROUNDS times, their order rotating from round to round; per operation,
# size and MPI_Test count the tables give the median overlap over the rounds
# (and its range); the medians of MPI_Wait after the compute and of the
# MPI_Test calls over the median pure communication (where the
# communication went: a wait of about 1 means nothing moved during the
# compute); the medians of pure communication and of the blocking
# collective (bench/nbc_summary.py).
#   bench/nbc.sh [ROUNDS]   default 3; NBC_ARGS replaces the ops/sizes/counts
#   below; NBC_KEEP=DIR keeps the JSON files there.
# Timings on a shared machine are noisy: only figures taken together compare.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
args=${NBC_ARGS:-"--op ialltoall,iallreduce,ibcast -m 1024:1048576 -i 100 -x 10 --progress 0,1,8,64"}
pencil_args="--pencil 2x1 --grid 32x32x32,64x64x64,128x128x128 -i 100 -x 10 --progress 0,1,8,64"
if [ -n "${NBC_KEEP:-}" ]; then
  out=$NBC_KEEP
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# name, build folder, extra option: the configurations compared.
configs=()
add() {
  local mpiexec
  [ -x "$2/bin/checkmpi-p2p" ] || { echo "# $2/bin/checkmpi-p2p not built: $1 left out" >&2; return; }
  mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$2/CMakeCache.txt")
  configs+=("$1|$2|$mpiexec|$3")
}
add ompi build ""
add mpich build-mpich ""
add mpich+thread build-mpich --progress-thread
[ ${#configs[@]} -gt 0 ] || { echo "bench: nothing built (bash scripts/setup.sh --mpich)" >&2; exit 2; }

echo "# bench/nbc.sh: $(uname -n), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(date -u +%FT%TZ)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
for c in "${configs[@]}"; do
  IFS='|' read -r name dir mpiexec extra <<<"$c"
  echo "# $name: $mpiexec -n 2 $dir/bin/checkmpi-p2p nbc ... $extra"
done
echo "# ops: $args"
echo "# pencil: $pencil_args"
n=${#configs[@]}
for r in $(seq "$rounds"); do
  for i in $(seq 0 $((n - 1))); do
    IFS='|' read -r name dir mpiexec extra <<<"${configs[$(((i + r) % n))]}"
    # shellcheck disable=SC2086
    "$mpiexec" -n 2 "$dir/bin/checkmpi-p2p" nbc $args $extra --json "$out/$name.ops.$r.json" >/dev/null
    # shellcheck disable=SC2086
    "$mpiexec" -n 2 "$dir/bin/checkmpi-p2p" nbc $pencil_args $extra --json "$out/$name.pencil.$r.json" >/dev/null
  done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

names=()
for c in "${configs[@]}"; do names+=("${c%%|*}"); done
python3 "$(dirname "$0")/nbc_summary.py" "$out" "$rounds" "${names[@]}"
