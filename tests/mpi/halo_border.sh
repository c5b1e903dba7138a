#!/usr/bin/env bash
# halo_border.sh NP PX PY PZ BORDER [options...]: step10 (masked overlap)
# with a given border on 10^3 blocks: valid, and its profiles identical to
# step0's. BORDER >= 5 leaves no inner cells (all work after the exchange).
source "$(dirname "$0")/lib.sh"
np=$1 px=$2 py=$3 pz=$4 border=$5
shift 5
dir=$(scratch)
cd "$dir"
write_input file.input $((px * 10)) $((py * 10)) $((pz * 10)) "$px" "$py" "$pz" 12 5 "$border"
run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" --backend host --strategy step0,step10 --rounds 2 --json r.json --outdir out "$@" >stdout 2>stderr ||
  fail "exit $? ($(tail -n 3 stderr))"
check_schema r.json
python3 - r.json "$border" <<'PY' || fail "JSON check"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["config"]["border"] == int(sys.argv[2]), doc["config"]["border"]
assert [r["strategy"] for r in doc["results"]] == ["step0", "step10"]
assert all(r["valid"] for r in doc["results"]), [r["error"] for r in doc["results"]]
PY
for r in $(seq 0 $((np - 1))); do
  rank=$(printf '%06d' "$r")
  for p in prof_i prof_j prof_k; do
    cmp -s "out/step10/$p.$rank.dat" "out/step0/$p.$rank.dat" || fail "step10 $p.$rank differs from step0's"
  done
done
echo "ok: step10 border $border at $np ranks ${px}x${py}x${pz} $*"
