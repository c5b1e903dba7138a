#!/usr/bin/env bash
# halo_gpu.sh NP PX PY PZ [checkmpi-halo options...] (ctest label gpu)
# Every strategy on the cuda backend with NP ranks on a PXxPYxPZ grid (ranks
# on a node share its GPUs), against a host-backend step0 run of the same
# input: all valid, the host-only rows skipped with their reason, MPI
# buffers as the CUDA-awareness of MPI says, and every prof file
# byte-identical to step0's. Exits 77 (ctest: skipped) with the reason when no GPU is visible.
source "$(dirname "$0")/lib.sh"
np=$1 px=$2 py=$3 pz=$4
shift 4
dir=$(scratch)
cd "$dir"
halo="$CHECKMPI_BIN/checkmpi-halo"

rc=0
run_mpi 1 "$halo" --backend cuda --no-input --lx 2 --ly 2 --lz 2 --itfin 1 --strategy step3 --outdir probe \
  >probe.out 2>probe.err || rc=$?
if [ $rc -eq 2 ] && grep -q 'no CUDA device visible' probe.err; then
  echo "SKIP: $(grep -m1 'error:' probe.err)"
  exit 77
fi
[ $rc -eq 0 ] || fail "cuda probe run: exit $rc: $(cat probe.err)"

# The sizes of halo_case.sh: unequal local sizes, checks that wrap around them.
l=6 m=5 n=4 itfin=13 icheck=5
write_input file.input $((px * l)) $((py * m)) $((pz * n)) "$px" "$py" "$pz" $itfin $icheck
run_mpi "$np" "$halo" --backend host --strategy step0 --outdir host "$@" >host.out 2>host.err ||
  fail "host run: exit $? ($(tail -n 3 host.err))"
run_mpi "$np" "$halo" --backend cuda --strategy all --json r.json --outdir gpu "$@" >stdout 2>stderr ||
  fail "cuda run: exit $? ($(tail -n 3 stderr))"

grep -q '^  backend        : cuda' stdout || fail "header: $(grep backend stdout)"
[ "$(grep -c '^  GPUs           : rank 0 -> node 0 ' stdout)" -eq 1 ] || fail "header lacks the GPU list"
[ "$(grep -c -- '-> GPU ' stdout)" -eq "$np" ] || fail "header lists $(grep -c -- '-> GPU ' stdout) ranks, not $np"
grep -q '^  CUDA-aware MPI : ' stdout || fail "header lacks CUDA-aware MPI"
for s in step0 step1 step2 neighbor-alltoallw shm-window mpi-pack; do
  grep -q "^skipped $s ([a-z-]*): host only" stdout || fail "no skip line for $s"
done
stage=0
for a in "$@"; do [ "$a" = --stage ] && stage=1; done
check_schema r.json
python3 - r.json "$np" "$stage" <<'PY' || fail "JSON check"
import json, sys
doc = json.load(open(sys.argv[1]))
np, stage = int(sys.argv[2]), sys.argv[3] == "1"
ctx = doc["context"]
assert ctx["backend"] == "cuda", ctx["backend"]
assert len(ctx["gpus"]) == np and all(set(g) == {"node", "device", "name"} for g in ctx["gpus"]), ctx["gpus"]
aware = ctx["gpu_aware_mpi"]
assert aware in (True, False, None), aware
host_only = {"step0", "step1", "step2", "neighbor-alltoallw", "shm-window", "mpi-pack"}
skipped = {k["strategy"]: k["reason"] for k in doc["skipped"]}
assert host_only <= set(skipped), skipped
assert all(r.startswith("host only") or (s == "partitioned" and r.startswith("needs MPI 4"))
           for s, r in skipped.items()), skipped
results = doc["results"]
assert [r["strategy"] for r in results][:8] == ["step%d" % i for i in range(3, 11)], [r["strategy"] for r in results]
# Point-to-point transports hand MPI the device buffers when it is CUDA-aware;
# collectives, windows and partitioned messages always stage.
p2p = {"sendrecv", "isend-recv-x", "isend-recv", "isend-irecv", "persistent", "mock"}
for r in results:
    assert r["valid"], (r["strategy"], r["error"])
    direct = (r["parts"]["buffers"] == "backend" and r["parts"]["transport"] in p2p and aware is True
              and not stage)
    want = "device" if direct else "staged"
    assert r["mpi_buffers"] == want, (r["strategy"], r["mpi_buffers"], want)
    assert (r["note"] or "").startswith("staged") == (want == "staged"), (r["strategy"], r["note"])
print(" ".join(r["strategy"] for r in results), file=open("ran.txt", "w"))
PY

for r in $(seq 0 $((np - 1))); do
  rank=$(printf '%06d' "$r")
  for s in $(cat ran.txt); do
    for p in prof_i prof_j prof_k; do
      f=gpu/$s/$p.$rank.dat
      [ -s "$f" ] || fail "$f missing or empty"
      cmp -s "$f" "host/step0/$p.$rank.dat" || fail "$f differs from the host backend's step0"
    done
    grep -q '^# validation: passed' "gpu/$s/task.$rank.log" || fail "gpu/$s/task.$rank.log: not passed"
  done
  [ ! -e "gpu/step0" ] || fail "skipped step0 left an output folder"
done
echo "ok: cuda backend, $np ranks, ${px}x${py}x${pz}, $*"
