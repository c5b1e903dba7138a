#!/usr/bin/env bash
# Point-to-point sweeps on this machine, 2 ranks, default options:
#   1. checkmpi-p2p pingpong and bw against a reference compiled here from the
#      loops of the OSU micro-benchmarks' osu_latency and osu_bw (same counts,
#      same window, same formulas), alternating ROUNDS times; per size the
#      best round of each and their ratio (and the median rounds' ratio).
#      Target: within 5%.
#   2. the full default sweeps of ring, loggp and datatype, as printed.
#   bench/p2p.sh [ROUNDS]   default 3; CHECKMPI_BIN picks the build (build/bin)
# Timings on a shared machine are noisy: only figures taken together compare.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-p2p" ] || { echo "bench: $bin/checkmpi-p2p not found (build first)" >&2; exit 2; }
# The reference must use the same MPI as the build: take it from its cache.
cache="$bin/../CMakeCache.txt"
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$cache" 2>/dev/null || true)
mpicxx=$(sed -n 's/^MPI_CXX_COMPILER:[A-Z]*=//p' "$cache" 2>/dev/null || true)
mpiexec=${mpiexec:-mpiexec}
mpicc=${MPICC:-$(echo "${mpicxx:-mpicxx}" | sed 's/mpicxx/mpicc/')}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run2() { "$mpiexec" -n 2 "$@"; }

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
for r in $(seq "$rounds"); do
  run2 "$out/osu_ref" lat >"$out/ref_lat.$r"
  run2 "$bin/checkmpi-p2p" pingpong --json "$out/lat.$r.json" >/dev/null
  run2 "$out/osu_ref" bw >"$out/ref_bw.$r"
  run2 "$bin/checkmpi-p2p" bw --json "$out/bw.$r.json" >/dev/null
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def ref(name):
    return [{int(a): float(b) for a, b in (l.split() for l in open(f"{out}/{name}.{r}"))} for r in range(1, rounds + 1)]
def ours(name, value):
    docs = [json.load(open(f"{out}/{name}.{r}.json")) for r in range(1, rounds + 1)]
    return [{x["size"]: value(x) for x in d["results"]} for d in docs]
# Other work on the machine only ever adds time: the best round of each
# (least latency, most bandwidth) is the cleanest comparison, the median
# round shows the spread.
def summary(rows, best):
    return {s: (best(row[s] for row in rows), statistics.median(row[s] for row in rows)) for s in rows[0]}
ref_lat, ref_bw = summary(ref("ref_lat"), min), summary(ref("ref_bw"), max)
lat = summary(ours("lat", lambda r: r["latency"]["mean"] * 1e6), min)
bw = summary(ours("bw", lambda r: r["bandwidth"] / 1e6), max)
print(f"# {rounds} alternating rounds; ratio = checkmpi-p2p / reference, best round (median round)")
print(f"{'# Size':<10}{'ref (us)':>10}{'p2p (us)':>10}{'ratio':>16}{'ref (MB/s)':>12}{'p2p (MB/s)':>12}{'ratio':>16}")
outside, lr, br = [], [], []
for s in sorted(ref_lat):
    a = [lat[s][k] / ref_lat[s][k] for k in (0, 1)]
    b = [bw[s][k] / ref_bw[s][k] for k in (0, 1)]
    lr.append(a[0])
    br.append(b[0])
    outside += [f"latency at {s}"] * (abs(a[0] - 1) > 0.05) + [f"bandwidth at {s}"] * (abs(b[0] - 1) > 0.05)
    print(f"{s:<10}{ref_lat[s][0]:10.2f}{lat[s][0]:10.2f}{a[0]:9.3f} ({a[1]:.3f}){ref_bw[s][0]:12.1f}"
          f"{bw[s][0]:12.1f}{b[0]:9.3f} ({b[1]:.3f})")
print(f"# latency ratio, best rounds: median {statistics.median(lr):.3f}, range {min(lr):.3f} .. {max(lr):.3f}")
print(f"# bandwidth ratio, best rounds: median {statistics.median(br):.3f}, range {min(br):.3f} .. {max(br):.3f}")
print("# outside 5% (best rounds): " + (", ".join(outside) if outside else "none"))
PY

for mode in ring loggp datatype; do
  echo
  run2 "$bin/checkmpi-p2p" "$mode"
done
