#!/usr/bin/env bash
# halo_catalog.sh: --list-strategies --json validates against its schema and
# lists every row; the engine's traits of real runs (every strategy, 1, 2 and
# 4 ranks, with --self-copy, one-pass (1 rank), in-place (2) and two-pass (4)
# compute; and stencils of issue 34: 19 fields with edges on 2 ranks, wide
# halos with corners on 4) agree with the catalog's traits applied to the
# grid (checkmpi/model.py's engine_traits).
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
cd "$dir"
halo=("$CHECKMPI_BIN/checkmpi-halo" --backend host)
"${halo[@]}" --list-strategies --json catalog.json >out.txt 2>&1 || fail "--list-strategies --json: $(cat out.txt)"
check_schema catalog.json
rows=$("${halo[@]}" --list-strategies | awk 'NF == 0 {exit} NR > 1 && /^[^ ]/ {n++} END {print n}')
json_rows=$("${CHECKMPI_PYTHON:-python3}" -c "import json; print(len(json.load(open('catalog.json'))['strategies']))")
[ "$rows" -eq "$json_rows" ] || fail "the listing has $rows rows, the JSON $json_rows"
expect_usage_error checkmpi-halo 1 "unknown strategy 'nope'" --list-strategies --strategy nope --json -

for run in "1 1 1 1 --self-copy --compute one-pass" "2 2 1 1" "4 2 2 1 --compute two-pass" \
  "2 1 2 1 --fields 19 --neighbours 18 --self-copy" "4 2 1 2 --halo-width 2 --fields 1 --neighbours 26"; do
  read -r np px py pz extra <<<"$run"
  case=$((${case:-0} + 1))
  # shellcheck disable=SC2086
  run_mpi "$np" "${halo[@]}" --no-input --lx $((8 * px)) --ly $((6 * py)) --lz $((5 * pz)) --proc_x "$px" \
    --proc_y "$py" --proc_z "$pz" --itfin 2 --icheck 2 --strategy all --outdir "o$case" --json "r$case.json" $extra \
    >"r$case.txt" 2>&1 || fail "$np ranks $extra: $(tail -3 "r$case.txt")"
  "${CHECKMPI_PYTHON:-python3}" "$(dirname "$0")/catalog_check.py" "r$case.json" >check.txt 2>&1 ||
    fail "$np ranks $extra: $(cat check.txt)"
done
echo "ok"
