#!/usr/bin/env bash
# halo_launches.sh NP: --samples FILE ranks several launches together. Three
# launches of step2 (each step made 3 times as long; 1.5 times oversubscribed,
# where a longer busy wait starves the other ranks) and a composition doing
# step2's own work (custom1): the file grows by one launch each time, the
# third launch's JSON covers all three (launches, launch_medians, a note in
# the table) and separates step2. Oversubscribed (4 ranks here), three
# launches may separate (their spread is in the intervals), where one may
# not; the busy wait of the delay then competes for the CPUs, so the test
# only checks that the ranking is not forced into a tie. A file of another run (other --local, other
# strategies), a broken file or a folder: one line naming it, exit 2, the
# file untouched.
source "$(dirname "$0")/lib.sh"
np=$1
dir=$(scratch)
cd "$dir"
twin=pack=hand,buffers=backend,transport=sendrecv,schedule=by-direction,completion=waitall,overlap=none,compute=in-place
delay=2
[ "$np" -le 2 ] || delay=0.5
args=(--backend host --no-input --procs "${np}x1x1" --local 32x32x32 --iters 100 --rounds 10)
for k in 1 2 3; do
  run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" "${args[@]}" --strategy "step2,$twin" --inject-delay step2:$delay \
    --samples samples.json --json run$k.json --outdir out >run$k.txt || fail "launch $k: exit $?"
  grep -q "^samples of $k launch\(es\)\? in samples.json$" run$k.txt || fail "launch $k: $(tail -n 1 run$k.txt)"
  json_is samples.json "len(doc['launches']) == $k"
  json_is run$k.json "doc['config']['launches'] == $k and all(len(r['launch_medians']) == $k for r in doc['results'])"
done
check_schema run3.json samples.json
grep -q "10 rounds per launch, 3 launches" run3.txt || fail "table note: $(grep '^(step' run3.txt)"
if python3 -c "import json, sys; sys.exit(0 if json.load(open('run3.json'))['context']['oversubscribed'] else 1)"; then
  grep -q '^not separated (oversubscribed)' run1.txt || fail "one oversubscribed launch: $(tail -n 3 run1.txt | head -n 1)"
  ! grep -q '^not separated (oversubscribed)' run3.txt || fail "three launches: $(tail -n 3 run3.txt | head -n 1)"
else
python3 - <<'PY' || fail "three launches: $(tail -n 3 run3.txt | head -n 1)"
import json
d = json.load(open("run3.json"))
assert d["fastest_group"] == ["custom1"], d["fastest_group"]
r = {x["strategy"]: x for x in d["results"]}
v = r["step2"]["vs_fastest"]
assert not v["tied"] and 1 < v["ci95"][0] <= v["ratio"] <= v["ci95"][1], v
# The median and its CI are over all three launches: between the launches' medians.
st = r["custom1"]["step_time"]
lm = r["custom1"]["launch_medians"]
lo, hi = st["median_ci"]
assert min(lm) <= st["median"] <= max(lm) and lo <= st["median"] <= hi, (st, lm)
assert d["config"]["samples"] == "samples.json"
PY
grep -Eq '^fastest: custom1, [0-9.]+ (us|ms|s) per step; next step2 is [0-9.]+% slower' run3.txt ||
  fail "headline: $(tail -n 3 run3.txt | head -n 1)"
fi

# Another run's file, a broken one, a folder: refused before anything runs.
sum=$(md5sum <samples.json)
expect_refusal() {  # EXPECTED-MESSAGE-REGEX ARGS...
  local want=$1
  shift
  set +e
  run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" --backend host --no-input --procs "${np}x1x1" --iters 20 "$@" \
    >refused.txt 2>&1
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$*: exit $rc, expected 2"
  grep -Eq "^checkmpi-halo: error: $want" refused.txt || fail "$*: $(grep error refused.txt || tail -n 2 refused.txt)"
  [ "$(grep -c 'checkmpi-halo: error' refused.txt)" -eq 1 ] || fail "$*: more than one error line"
}
expect_refusal "--samples 'samples.json' holds another run's launches: local \[32,32,32\], this run \[16,32,32\] \(a new run needs a new samples file\)$" \
  --local 16x32x32 --strategy "step2,$twin" --samples samples.json
expect_refusal "--samples 'samples.json' holds another run's launches: strategies step2, custom1, this run step2, step7 " \
  --local 32x32x32 --strategy step2,step7 --samples samples.json
[ "$(md5sum <samples.json)" = "$sum" ] || fail "a refused launch changed the samples file"
printf '{"schema": "checkmpi.samples/1", "fing' >broken.json
expect_refusal "--samples 'broken.json': not JSON \(byte [0-9]+: unterminated string\)$" --local 32x32x32 --samples broken.json
echo '{"schema": "checkmpi.halo/5"}' >other.json
expect_refusal "--samples 'other.json': not a checkmpi.samples/1 file \(schema \"checkmpi.halo/5\"\)$" --local 32x32x32 --samples other.json
expect_refusal "--samples 'run1.json' is the --json file; the samples need a file of their own$" --local 32x32x32 \
  --samples run1.json --json ./run1.json
mkdir folder
expect_refusal "--samples: cannot write samples file 'folder': it is a directory$" --local 32x32x32 --samples folder
echo "ok: launches at $np ranks"
