#!/usr/bin/env bash
# halo_ranking.sh NP: the ranking cannot come out right by luck. step2 and a
# composition doing exactly step2's work under another name are tied; with
# every step of step2 made 30% longer (--inject-delay) it is slower, by a
# ratio near 1.3 whose 95% CI leaves out 1, and the twin is the fastest.
# The twin is step2's composition with the host's own compute named (auto is
# in place here): another row (custom1), the same work. Above 2 ranks, a
# 50% delay: separated unless the run is oversubscribed (then nothing is).
source "$(dirname "$0")/lib.sh"
np=$1
dir=$(scratch)
cd "$dir"
if [ "$np" -gt 2 ]; then
  # np ranks on this machine: oversubscribed where it has fewer CPUs, and
  # then nothing is separated, even a 50% delay; else the delay is.
  run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" --backend host --no-input --local 16x16x16 --iters 200 --rounds 10 \
    --strategy step2,step7 --inject-delay step2:0.5 --json over.json --outdir over >over.txt || fail "exit $?"
  check_schema over.json
  python3 - <<'PY' || fail "oversubscribed ranking: $(tail -n 1 over.txt)"
import json
d = json.load(open("over.json"))
step2 = [r for r in d["results"] if r["strategy"] == "step2"][0]["vs_fastest"]
if d["context"]["oversubscribed"]:
    assert sorted(d["fastest_group"]) == ["step2", "step7"] and step2["tied"], d["fastest_group"]
else:
    assert d["fastest_group"] == ["step7"] and not step2["tied"], d["fastest_group"]
PY
  if python3 -c "import json, sys; sys.exit(0 if json.load(open('over.json'))['context']['oversubscribed'] else 1)"; then
    grep -Eq '^not separated \(oversubscribed\): step(2|7) and step(2|7) are within ' over.txt ||
      fail "headline: $(tail -n 2 over.txt | head -n 1)"
  fi
  echo "ok: ranking at $np ranks"
  exit 0
fi
twin=pack=hand,buffers=backend,transport=sendrecv,schedule=by-direction,completion=waitall,overlap=none,compute=in-place
args=(--backend host --no-input --procs "${np}x1x1" --local 48x48x48 --iters 400 --rounds 20 --seed 11)

# A tie is a statistical claim: identical work is separated now and then (once in a CI run with MPICH; 0 of 40
# launches quiet). One such launch is reported and run again; two in a row fail.
tied="sorted(doc['fastest_group']) == ['custom1', 'step2']"
for attempt in 1 2; do
  rm -rf same same.json
  run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" "${args[@]}" --strategy "step2,$twin" --json same.json --outdir same \
    >same.txt || fail "identical compositions: exit $?"
  json_holds same.json "$tied" && break
  echo "identical compositions separated in launch $attempt: $(tail -n 2 same.txt | head -n 1)"
done
check_schema same.json
json_is same.json "$tied"
json_is same.json "all(r['vs_fastest']['tied'] for r in doc['results'])"
grep -Eq '^(step2 and custom1|custom1 and step2) are tied within [0-9.]+% \(fastest median ' same.txt ||
  fail "headline: $(tail -n 2 same.txt)"

run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" "${args[@]}" --strategy "step2,$twin" --inject-delay step2:0.3 \
  --json slow.json --outdir slow >slow.txt || fail "delayed: exit $?"
check_schema slow.json
python3 - <<PY || fail "delayed: $(tail -n 2 slow.txt)"
import json
d = json.load(open("slow.json"))
assert d["fastest_group"] == ["custom1"], d["fastest_group"]
r = {x["strategy"]: x for x in d["results"]}
v = r["step2"]["vs_fastest"]
# Slower, surely; by about 30% on a quiet machine, and by any amount more
# on a loaded one, where the busy wait itself loses time slices (MPICH
# beside other jobs on 2 cores: 435%). 10% is separated on a quiet
# machine, but not always beside other tests (CI: tied within 9.4%).
assert not v["tied"] and 1 < v["ci95"][0] <= v["ratio"] <= v["ci95"][1], v
assert v["ratio"] > 1.15, v
PY
grep -Eq '^fastest: custom1, [0-9.]+ (us|ms|s) per step; next step2 is [0-9.]+% slower \(95% CI [0-9.]+%-[0-9.]+%\)$' slow.txt ||
  fail "headline: $(tail -n 2 slow.txt | head -n 1)"
echo "ok: ranking at $np ranks"
