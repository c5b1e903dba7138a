#!/usr/bin/env bash
# Point-to-point sweeps on this machine, 2 ranks, default options:
#   1. checkmpi-p2p pingpong and bw against a reference compiled here from the
#      loops of the OSU micro-benchmarks' osu_latency and osu_bw (same counts,
#      same window, same formulas), alternating ROUNDS times, the reference
#      twice per round; per size the best round of each, the ratio
#      checkmpi-p2p / reference and, as a control, reference / reference.
#      Target: within 5%.
#   2. the full default sweeps of ring, loggp and datatype, as printed.
#   bench/p2p.sh [ROUNDS]   default 6; CHECKMPI_BIN picks the build (build/bin)
# Timings on a shared machine are noisy: only figures taken together compare.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6}
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-p2p" ] || { echo "bench: $bin/checkmpi-p2p not found (build first)" >&2; exit 2; }
# shellcheck source=bench/build_mpi.sh
source bench/build_mpi.sh  # the build's MPI: mpiexec, mpicc, run2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The reference: osu_latency's and osu_bw's timed loops (OSU 7), nothing else.
cat >"$out/osu_ref.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
enum { MAX = 1 << 22, LARGE = 8192, WINDOW = 64 };
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int bw = argc > 1 && strcmp(argv[1], "bw") == 0;
  char* s_buf = aligned_alloc(sysconf(_SC_PAGESIZE), MAX);  /* page-aligned, as OSU */
  char* r_buf = aligned_alloc(sysconf(_SC_PAGESIZE), MAX);
  memset(s_buf, 'a', MAX);
  memset(r_buf, 'b', MAX);
  MPI_Request req[WINDOW];
  for (int size = 1; size <= MAX; size *= 2) {
    int iters = bw ? (size > LARGE ? 20 : 100) : (size > LARGE ? 1000 : 10000);
    int skip = bw ? (size > LARGE ? 2 : 10) : (size > LARGE ? 10 : 100);
    double t_start = 0, t_end = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip; i++) {
      if (i == skip) t_start = MPI_Wtime();
      if (bw && rank == 0) {
        for (int j = 0; j < WINDOW; j++) MPI_Isend(s_buf, size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, req + j);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Recv(r_buf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (bw) {
        for (int j = 0; j < WINDOW; j++) MPI_Irecv(r_buf, size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, req + j);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Send(s_buf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
      } else if (rank == 0) {
        MPI_Send(s_buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(r_buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(r_buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(s_buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
    }
    t_end = MPI_Wtime();
    double t = t_end - t_start;
    if (rank == 0 && bw) printf("%d %.6f\n", size, size / 1e6 * iters * WINDOW / t);   /* MB/s */
    if (rank == 0 && !bw) printf("%d %.6f\n", size, t * 1e6 / (2.0 * iters));          /* us */
  }
  MPI_Finalize();
  return 0;
}
C
"$mpicc" -O2 -o "$out/osu_ref" "$out/osu_ref.c"

echo "# bench/p2p.sh: $(uname -n), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(date -u +%FT%TZ)"
echo "# MPI: $("$mpiexec" --version 2>&1 | head -1); reference built with $mpicc"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# The reference runs twice per round: its second run against its first is
# the control, the spread this machine gives when nothing differs. The order
# of the three runs rotates from round to round: in a fixed order the first
# run of every round came out slower here, and no run may own a place.
run_as() {  # run_as WHICH KIND ROUND
  case $1 in
    p2p) run2 "$bin/checkmpi-p2p" "$([ "$2" = lat ] && echo pingpong || echo bw)" --json "$out/$2.$3.json" >/dev/null ;;
    *) run2 "$out/osu_ref" "$2" >"$out/$1_$2.$3" ;;
  esac
}
order=(ref p2p ctl)
for r in $(seq "$rounds"); do
  for kind in lat bw; do
    for i in 0 1 2; do run_as "${order[$(((i + r) % 3))]}" "$kind" "$r"; done
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
# Other work on the machine only ever adds time: the best round of each run
# (least latency, most bandwidth) is the cleanest figure.
def ref(name, best):
    rows = [{int(a): float(b) for a, b in (l.split() for l in open(f"{out}/{name}.{r}"))} for r in range(1, rounds + 1)]
    return {s: best(row[s] for row in rows) for s in rows[0]}
def ours(name, value, best):
    rows = [{x["size"]: value(x) for x in json.load(open(f"{out}/{name}.{r}.json"))["results"]}
            for r in range(1, rounds + 1)]
    return {s: best(row[s] for row in rows) for s in rows[0]}
lat = (ref("ref_lat", min), ours("lat", lambda r: r["latency"]["mean"] * 1e6, min), ref("ctl_lat", min))
bw = (ref("ref_bw", max), ours("bw", lambda r: r["bandwidth"] / 1e6, max), ref("ctl_bw", max))
print(f"# best of {rounds} rounds; p2p/ref: checkmpi-p2p over the reference; ref2/ref: the reference's")
print("# second run over its first (control: the machine's own spread)")
print(f"{'# Size':<10}{'ref (us)':>10}{'p2p (us)':>10}{'p2p/ref':>9}{'ref2/ref':>9}"
      f"{'ref (MB/s)':>12}{'p2p (MB/s)':>12}{'p2p/ref':>9}{'ref2/ref':>9}")
for s in sorted(lat[0]):
    print(f"{s:<10}{lat[0][s]:10.2f}{lat[1][s]:10.2f}{lat[1][s] / lat[0][s]:9.3f}{lat[2][s] / lat[0][s]:9.3f}"
          f"{bw[0][s]:12.1f}{bw[1][s]:12.1f}{bw[1][s] / bw[0][s]:9.3f}{bw[2][s] / bw[0][s]:9.3f}")
for name, (r, p, c) in (("latency", lat), ("bandwidth", bw)):
    ours_r = [p[s] / r[s] for s in r]
    ctl_r = [c[s] / r[s] for s in r]
    off = [s for s in r if abs(p[s] / r[s] - 1) > 0.05]
    print(f"# {name}: p2p/ref median {statistics.median(ours_r):.3f} (range {min(ours_r):.3f} .. {max(ours_r):.3f}),"
          f" ref2/ref median {statistics.median(ctl_r):.3f} (range {min(ctl_r):.3f} .. {max(ctl_r):.3f});"
          f" p2p/ref outside 5% at {len(off)} of {len(r)} sizes, ref2/ref at"
          f" {sum(abs(c[s] / r[s] - 1) > 0.05 for s in r)}")
PY

for mode in ring loggp datatype; do
  echo
  run2 "$bin/checkmpi-p2p" "$mode"
done
echo
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
