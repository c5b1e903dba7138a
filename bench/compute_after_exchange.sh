#!/usr/bin/env bash
# How much step2's exchange slows the in-place compute that follows it, on
# one rank, with the project's own backend (bench/compute_after_exchange.cpp:
# the variants, interleaved, and what is printed). Builds the program
# against the static libraries of a configured build, then runs it LAUNCHES
# times (each launch its own process, as the VM's memory has spells).
#
#   bench/compute_after_exchange.sh [EDGE] [ROUNDS] [LAUNCHES]
#       EDGE^3 cells per field (default 128), ROUNDS per launch (default 21),
#       LAUNCHES (default 3); CHECKMPI_BUILD names the build (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
edge=${1:-128} rounds=${2:-21} launches=${3:-3} build=${CHECKMPI_BUILD:-build}
libs=(halo strategies backends grid core)
for l in "${libs[@]}"; do
  [ -f "$build/src/libcheckmpi_$l.a" ] || { echo "bench: $build/src/libcheckmpi_$l.a not found (build first)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpicxx -O3 -std=c++17 -fopenmp -Isrc -I"$build/generated" bench/compute_after_exchange.cpp \
  $(printf "$build/src/libcheckmpi_%s.a " "${libs[@]}") -o "$out/compute_after_exchange"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
echo "# $edge^3 x 3 fields, 1 rank, $OMP_NUM_THREADS thread(s), $rounds rounds x $launches launches;" \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "L2 $(cat /sys/devices/system/cpu/cpu0/cache/index2/size 2>/dev/null || echo ?)," \
  "L3 $(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo ?)"
for i in $(seq "$launches"); do
  echo "# launch $i"
  mpiexec -n 1 "$out/compute_after_exchange" "$edge" "$rounds"
done
