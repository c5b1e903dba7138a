#!/usr/bin/env bash
# p2p_features.sh: help and version, explicit datatype tuples, and a pair
# mode with more ranks than it needs (the others wait).
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
cd "$dir"
p2p="$CHECKMPI_BIN/checkmpi-p2p"

"$p2p" --help >help.txt || fail "--help exit $?"
for word in pingpong bw ring loggp datatype nbc --message-size --iters --warmup --window --prtt-n --vectors \
  --op --progress --progress-thread --pencil --grid --buffer --validate --json; do
  grep -q -- "$word" help.txt || fail "--help does not mention $word"
done
awk 'length($0) > 80 { exit 1 }' help.txt || fail "--help has lines over 80 columns"
grep -q -- '-n, --prtt-n' help.txt && fail "--help gives --prtt-n the short -n (ranks in checkmpi's commands)"
# Old spellings (-n for --prtt-n, --iterations) work for one release, with a deprecation line each.
run_mpi 2 "$p2p" loggp -n 3 --iterations 4 -x 1 -m 1:4 --json old.json >old.txt 2>old.err ||
  fail "old spellings: $(tail -3 old.err)"
grep -qx 'checkmpi-p2p: warning: -n is the old spelling of --prtt-n; it works in this release only' old.err ||
  fail "no deprecation line for -n: $(cat old.err)"
grep -qx 'checkmpi-p2p: warning: --iterations is the old spelling of --iters; it works in this release only' \
  old.err || fail "no deprecation line for --iterations: $(cat old.err)"
python3 -c 'import json, sys; d = json.load(open("old.json")); sys.exit(d["config"]["n"] != 3)' ||
  fail "-n did not set the PRTT count"
grep -q -- --inject-corruption help.txt && fail "--help shows the test-only switch"
"$p2p" --version | grep -Eq '^checkmpi-p2p [0-9]+\.[0-9]+\.[0-9]+ \(revision ' || fail "--version"

run_mpi 2 "$p2p" datatype --vectors 1:16:16,2:4:4,2:2:4,64:1:4 -i 4 -x 1 --json dt.json >dt.txt 2>&1 ||
  fail "explicit vectors: $(tail -3 dt.txt)"
python3 "$(dirname "$0")/p2p_check.py" dt.json datatype 2 || fail "explicit vectors JSON"
check_schema dt.json
python3 - <<'PY' || fail "explicit vectors: tuples, bytes or fit scope"
import json
d = json.load(open("dt.json"))
rows = [(r["count"], r["blocklen"], r["stride"], r["bytes"], r["contiguous"]) for r in d["results"]]
assert rows == [(1, 16, 16, 64, True), (2, 4, 4, 32, True), (2, 2, 4, 16, False), (64, 1, 4, 256, False)], rows
assert d["config"]["default_sweep"] is False
fit = d["fits"]["datatype"]
assert fit["tuples"] == "non-contiguous" and fit["points"] == 2, fit
PY

# Three ranks, a pair mode: ranks 0 and 1 measure, rank 2 waits.
run_mpi 3 "$p2p" pingpong -m 1:64 -i 10 -x 1 --json three.json >three.txt 2>&1 || fail "3 ranks: $(tail -3 three.txt)"
grep -q 'ranks 0 and 1 measure, the others wait' three.txt || fail "3 ranks: header"
check_schema three.json
python3 - <<'PY' || fail "3 ranks: JSON"
import json
d = json.load(open("three.json"))
assert d["context"]["nprocs"] == 3 and len(d["context"]["placement"]) == 3
assert d["context"]["same_node"] is True
assert [r["size"] for r in d["results"]] == [1, 2, 4, 8, 16, 32, 64]
PY
# --repeat 2: the sweep twice, interleaved; each result has both runs' medians.
run_mpi 2 "$p2p" pingpong -m 1:8 -i 10 -x 1 --repeat 2 --json rep.json >rep.txt 2>&1 || fail "repeat: $(tail -3 rep.txt)"
check_schema rep.json
[ "$(grep -Eo '^\[[0-9]/8\] [0-9]+ B' rep.txt | tr '\n' ' ')" = "[1/8] 1 B [2/8] 2 B [3/8] 4 B [4/8] 8 B [5/8] 1 B [6/8] 2 B [7/8] 4 B [8/8] 8 B " ] ||
  fail "repeat order: $(grep -E '^\[' rep.txt)"
python3 - <<'PY' || fail "repeat JSON"
import json
d = json.load(open("rep.json"))
assert d["config"]["repeat"] == 2
for r in d["results"]:
    assert r["iterations"] == 20 and len(r["repeats"]["latency"]["medians"]) == 2, r
    assert r["repeats"]["latency"]["spread"] is not None
PY
echo "ok: features"
