#!/usr/bin/env bash
# nbc's own cost at small messages: checkmpi-p2p nbc --op ialltoall against a
# reference compiled here from osu_ialltoall's pure-communication loop
# of OMB 7.x (t_start; MPI_Ialltoall; MPI_Wait; t_stop; MPI_Barrier; same
# counts: 1000 timed after 100 warm-up; page-aligned buffers allocated once
# for the largest size; each rank's mean, averaged over ranks: OSU's figure;
# and the median of every rank's iterations, which the machine's other work
# disturbs far less), 2 ranks, sizes 1 .. MAX bytes.
#   bench/nbc_overhead.sh [ROUNDS] [MAX]   default 8 rounds, 512 B
# Each round runs the reference, checkmpi-p2p and the reference again, in an
# order that rotates from round to round; per size the median over rounds of
# each, p2p/ref and, as a control, ref2/ref. CHECKMPI_BIN picks the build.
# HISTORY=1 adds two references that change only the heap's history after
# MPI_Init (docs/p2p_osu.md item 14): "mpit" reads one MPI_T control
# variable (MPI_T_init_thread ... MPI_T_finalize), "heap" mallocs 20000
# chunks of 16-216 B and frees them; and, per program, the median over sizes
# of each launch, sorted (launches land in fast and slow states: compare the
# lowest). LAYOUT=random preloads into every launch a wrapper of MPI_Init
# and MPI_Init_thread that keeps one malloc of 0-64 KiB, drawn per process,
# after them: a 64-byte one moves the reference's figure by 12 % (item 14),
# so each program is measured over layouts, not in the one it happens to
# have. Timings on a shared machine are noisy: only figures taken together
# compare.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-8}
max=${2:-512}
bin=${CHECKMPI_BIN:-build/bin}
[ -x "$bin/checkmpi-p2p" ] || { echo "bench: $bin/checkmpi-p2p not found (build first)" >&2; exit 2; }
# shellcheck source=bench/build_mpi.sh
source bench/build_mpi.sh  # the build's MPI: mpiexec, mpicc, run2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cat >"$out/ref.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int less(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* history = argc > 2 ? argv[2] : "";
  if (strcmp(history, "mpit") == 0) {  /* as a tool reading its settings after MPI_Init */
    int provided, index, count, value;
    MPI_T_cvar_handle handle;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_cvar_get_index("btl_tcp_progress_thread", &index) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) == MPI_SUCCESS) {
      MPI_T_cvar_read(handle, &value);
      MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
  } else if (strcmp(history, "heap") == 0) {  /* a start-up's small allocations, all freed */
    static void* chunk[20000];
    for (int i = 0; i < 20000; i++) chunk[i] = malloc(16 + (i * 37) % 201);
    for (int i = 0; i < 20000; i++) free(chunk[i]);
  }
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int max = atoi(argv[1]), iters = 1000, skip = 100;
  char* s = aligned_alloc(sysconf(_SC_PAGESIZE), (size_t)max * n);
  char* r = aligned_alloc(sysconf(_SC_PAGESIZE), (size_t)max * n);
  memset(s, 'a', (size_t)max * n);
  memset(r, 'b', (size_t)max * n);
  double* t = malloc(sizeof(double) * iters);
  double* all = malloc(sizeof(double) * iters * n);
  for (int size = 1; size <= max; size *= 2) {
    double timer = 0;
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip; i++) {
      double t0 = MPI_Wtime();
      MPI_Ialltoall(s, size, MPI_CHAR, r, size, MPI_CHAR, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      double t1 = MPI_Wtime();
      MPI_Barrier(MPI_COMM_WORLD);
      if (i >= skip) timer += t1 - t0, t[i - skip] = t1 - t0;
    }
    double mine = timer * 1e6 / iters, sum = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Gather(t, iters, MPI_DOUBLE, all, iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      qsort(all, (size_t)iters * n, sizeof(double), less);
      const size_t m = (size_t)iters * n;
      printf("%d %.6f %.6f\n", size, sum / n, (all[m / 2 - 1] + all[m / 2]) / 2 * 1e6);
    }
  }
  MPI_Finalize();
  return 0;
}
C
"$mpicc" -O2 -o "$out/ref" "$out/ref.c"
if [ "${LAYOUT:-}" = random ]; then
  cat >"$out/layout.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
/* After MPI_Init: one malloc of 0 .. 64 KiB - 16 (16-byte steps), drawn per process, kept. */
static void pad(void) {
  unsigned r = 0;
  FILE* f = fopen("/dev/urandom", "rb");
  if (f) { if (fread(&r, sizeof r, 1, f) != 1) r = 0; fclose(f); }
  void* volatile p = malloc(16 * (size_t)(r % 4096) + 1);
  (void)p;
}
int MPI_Init(int* argc, char*** argv) {
  int (*real)(int*, char***) = (int (*)(int*, char***))dlsym(RTLD_NEXT, "MPI_Init");
  const int rc = real(argc, argv);
  pad();
  return rc;
}
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int (*real)(int*, char***, int, int*) = (int (*)(int*, char***, int, int*))dlsym(RTLD_NEXT, "MPI_Init_thread");
  const int rc = real(argc, argv, required, provided);
  pad();
  return rc;
}
C
  cc -O2 -shared -fPIC -o "$out/layout.so" "$out/layout.c" -ldl
  export LD_PRELOAD="$out/layout.so"  # every process from here on; only MPI programs call its wrappers
fi

echo "# bench/nbc_overhead.sh: $(uname -n), $(nproc) CPUs, $(date -u +%FT%TZ); $rounds rounds, 1 .. $max B"
echo "# MPI: $("$mpiexec" --version 2>&1 | head -1); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "${LAYOUT:-}" != random ] || echo "# LAYOUT=random: every process keeps a malloc of 0-64 KiB, drawn, after MPI_Init"
run_as() {  # run_as WHICH ROUND
  case $1 in
    p2p) run2 "$bin/checkmpi-p2p" nbc --op ialltoall -m "1:$max" -i 1000 -x 100 --json "$out/p2p.$2.json" \
      >/dev/null ;;
    mpit | heap) run2 "$out/ref" "$max" "$1" >"$out/$1.$2" ;;
    *) run2 "$out/ref" "$max" >"$out/$1.$2" ;;
  esac
}
order=(ref p2p ctl)
[ "${HISTORY:-0}" = 0 ] || order+=(mpit heap)
n=${#order[@]}
for r in $(seq "$rounds"); do
  for i in $(seq 0 $((n - 1))); do run_as "${order[$(((i + r) % n))]}" "$r"; done
done
python3 - "$out" "$rounds" "${LAYOUT:-}" "${order[@]}" <<'PY'
import json, statistics, sys
out, rounds, layout, names = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "random", sys.argv[4:]
def ref(name, col):
    return [{int(l.split()[0]): float(l.split()[col]) for l in open(f"{out}/{name}.{r}")} for r in range(1, rounds + 1)]
def ours(stat):
    return [{x["size"]: x["pure_comm"][stat] * 1e6 for x in json.load(open(f"{out}/p2p.{r}.json"))["results"]}
            for r in range(1, rounds + 1)]
for stat, col in (("mean", 1), ("median", 2)):
    runs = {k: ours(stat) if k == "p2p" else ref(k, col) for k in names}
    med = {k: {s: statistics.median(row[s] for row in v) for s in v[0]} for k, v in runs.items()}
    print(f"# pure communication (post + MPI_Wait), {stat} over iterations and ranks, median of {rounds} rounds")
    print(f"{'# Size':<10}{'ref (us)':>10}{'p2p (us)':>10}{'p2p/ref':>9}{'ref2/ref':>9}")
    for s in sorted(med["ref"]):
        print(f"{s:<10}{med['ref'][s]:10.3f}{med['p2p'][s]:10.3f}{med['p2p'][s] / med['ref'][s]:9.3f}"
              f"{med['ctl'][s] / med['ref'][s]:9.3f}")
    ratios = [med["p2p"][s] / med["ref"][s] for s in med["ref"]]
    ctl = [med["ctl"][s] / med["ref"][s] for s in med["ref"]]
    print(f"# {stat}: p2p/ref median {statistics.median(ratios):.3f} (range {min(ratios):.3f} .. {max(ratios):.3f}); "
          f"ref2/ref median {statistics.median(ctl):.3f} (range {min(ctl):.3f} .. {max(ctl):.3f})")
    if len(names) > 3 or layout:
        print(f"# each launch's {stat} over sizes (us), sorted: the lowest are the fast state's")
        for k in names:
            per = sorted(statistics.median(row.values()) for row in runs[k])
            print(f"#   {k:<4} " + " ".join(f"{x:.3f}" for x in per))
PY
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
