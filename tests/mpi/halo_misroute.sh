#!/usr/bin/env bash
# halo_misroute.sh NP PX PY PZ KIND:DIR [OPTIONS...]: with one direction's
# neighbours made wrong (the test-only --inject-misroute; with 18 or 26
# neighbours its edges and corners too), the routing check must fail every
# strategy of the catalog (--strategy all): exit 3, each INVALID with a
# message naming the first wrong cell and the rank its value should have come
# from, and no timed loop run.
source "$(dirname "$0")/lib.sh"
np=$1 px=$2 py=$3 pz=$4 fault=$5
shift 5
dir=$(scratch)
cd "$dir"
write_input file.input $((px * 4)) $((py * 3)) $((pz * 2)) "$px" "$py" "$pz" 6 3
rc=0
run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" --backend host --strategy all --json r.json --outdir out \
  --inject-misroute "$fault" "$@" \
  >out.txt 2>err.txt || rc=$?
[ $rc -eq 3 ] || fail "exit $rc, expected 3: $(tail -n 3 err.txt)"
ids=$(python3 -c '
import json, sys
results = json.load(open("r.json"))["results"]
for r in results:
    if r["valid"] or r["steps"] != 0:
        sys.exit("%s: valid %s, %d steps" % (r["strategy"], r["valid"], r["steps"]))
print(" ".join(r["strategy"] for r in results))') || fail "$ids"
[ "$(wc -w <<<"$ids")" -ge 20 ] || fail "only $(wc -w <<<"$ids") strategies ran: $ids"
want='routing check failed after 2 steps: (rank [0-9]+: )?field[0-9]+\([0-9]+,[0-9]+,[0-9]+\) holds .*, expected global cell \([0-9]+,[0-9]+,[0-9]+\) from rank [0-9]+; [0-9]+ wrong cell\(s\) on this rank, [0-9]+ in all$'
for s in $ids; do
  grep -Eq "^checkmpi-halo: $s: $want" err.txt || fail "$s: no routing message in: $(grep "$s:" err.txt)"
  grep -q "^# validation: FAILED before the timed loop: routing check failed" "out/$s/task.000000.log" ||
    fail "$s: task log does not say so"
done
echo "ok: $np ranks ${px}x${py}x${pz}, $fault $*: every strategy caught"
