#!/usr/bin/env bash
# halo_features.sh: options beyond the basic run, at 4 ranks.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
cd "$dir"
# The host backend by name: on a GPU machine with a CUDA build, auto means cuda.
halo=("$CHECKMPI_BIN/checkmpi-halo" --backend host)
write_input file.input 8 8 8 2 2 1 12 4

# --list-strategies and --help print and exit 0 (captured first: grep -q
# would close the pipe early).
list=$("${halo[@]}" --list-strategies) || fail "--list-strategies exit $?"
grep -q '^step2 *sendrecv-pack .*\[host only\]$' <<<"$list" || fail "--list-strategies step2"
grep -q '^step4 *kernel-pack-aware .*\[same work as step3 on the host backend\]$' <<<"$list" ||
  fail "--list-strategies does not say step4 is step3 on the host"
[ "$(grep -c '^step' <<<"$list")" -eq 11 ] || fail "--list-strategies: not 11 CheckMPI steps"
for id in persistent neighbor-alltoallv neighbor-alltoallw ineighbor-overlap rma-fence rma-pscw shm-window \
  partitioned mpi-pack mock; do
  grep -q "^$id " <<<"$list" || fail "--list-strategies lacks $id"
done
grep -q '^ *pack=kernel,buffers=backend,transport=persistent,schedule=all-at-once,completion=waitall' <<<"$list" ||
  fail "--list-strategies does not show the parts of persistent"
help=$("${halo[@]}" --help) || fail "--help exit $?"
grep -q -- '--strategy' <<<"$help" || fail "--help"
grep -q -- '--compute' <<<"$help" || fail "--help lacks --compute"

# Default input is ./file.input; the table and header come from rank 0 only.
run_mpi 4 "${halo[@]}" --strategy step0 >plain.txt 2>&1 || fail "default run: $(tail -3 plain.txt)"
[ "$(grep -c '^checkmpi-halo ' plain.txt)" -eq 1 ] || fail "header printed more than once"
grep -q 'decomposition  : proc_x=2 proc_y=2 proc_z=1' plain.txt || fail "header decomposition"
grep -Eq '^\* step0 sendrecv-dtype +[0-9.]+ .* valid$' plain.txt || fail "table row"
[ -s step0/prof_i.000003.dat ] || fail "default outdir is ."

# Temporaries a writer stopped by SIGKILL left where the next run writes
# are removed by it; a live process's (this shell's) are not.
sleep 0 &
dead=$!
wait "$dead"
mkdir -p again/step0
touch again/step0/prof_i.000001.dat.tmp.$dead.4 again.json.tmp.$dead.0 again.json.tmp.$$.0
run_mpi 4 "${halo[@]}" --strategy step0 --outdir again --json again.json >again.txt 2>&1 || fail "run after a kill"
grep -q '^removed 2 temporary files left by a stopped run$' again.txt || fail "stale temporaries: $(tail -2 again.txt)"
[ ! -e again/step0/prof_i.000001.dat.tmp.$dead.4 ] && [ ! -e again.json.tmp.$dead.0 ] && [ -e again.json.tmp.$$.0 ] ||
  fail "stale temporaries: $(ls again again.json.tmp.*)"

# Warm-up iterations and --sync none change timing, never results.
run_mpi 4 "${halo[@]}" --strategy step2 --outdir warm --warmup 5 --sync none >/dev/null || fail "warmup run"
cmp -s warm/step2/prof_k.000002.dat step0/prof_k.000002.dat || fail "warm-up changed the results"

# proc_* = 0 lets MPI_Dims_create choose; command-line keys override the file.
run_mpi 4 "${halo[@]}" --proc_x 0 --proc_y 0 --proc_z 0 --itfin 3 --strategy 1 --outdir auto --json auto.json \
  >auto.txt || fail "auto decomposition"
grep -q '"itfin": 3' auto.json || fail "override of itfin"
grep -Eq 'decomposition  : proc_x=[0-9] proc_y=[0-9] proc_z=[0-9]' auto.txt || fail "auto dims"

# The vocabulary checkmpi's commands share: --local, --procs and --iters set
# what the keys set (over the file's); -o, once --outdir's short form, still
# works with a deprecation line.
run_mpi 4 "${halo[@]}" --local 3x5x4 --procs 1x2x2 --iters 6 --strategy step2 -o voc --json voc.json \
  >voc.txt 2>voc.err || fail "--local/--procs/--iters run: $(tail -3 voc.err)"
python3 - <<'PY' || fail "--local/--procs/--iters JSON"
import json
d = json.load(open("voc.json"))
c = d["config"]
assert (c["lx"], c["ly"], c["lz"], c["itfin"]) == (3, 10, 8, 6), c
assert d["context"]["dims"] == [1, 2, 2], d["context"]["dims"]
PY
[ -s voc/step2/prof_i.000003.dat ] || fail "-o did not set the output directory"
grep -qx 'checkmpi-halo: warning: -o is the old spelling of --outdir; it works in this release only' voc.err ||
  fail "no deprecation line for -o: $(cat voc.err)"
run_mpi 4 "${halo[@]}" --size 8x8x4 --strategy step2 --outdir size --json size.json >/dev/null 2>&1 || fail "--size"
grep -q '"lz": 4' size.json || fail "--size did not set lz"
# --help fits 80 columns and names the vocabulary and CheckMPI's keys.
awk 'length($0) > 80 { exit 1 }' <<<"$help" || fail "--help has lines over 80 columns"
for word in --size --local --procs --iters --itfin --proc_x --lx; do
  grep -q -- "$word" <<<"$help" || fail "--help does not mention $word"
done

# JSON: schema, context, config, per-strategy timers with min/mean/max.
run_mpi 4 "${halo[@]}" --strategy step0,step2 --outdir j --json r.json --precision double >/dev/null || fail "json run"
for key in '"schema": "checkmpi.halo/5"' '"mpi_library"' '"nprocs": 4' '"hostnames"' '"timer_resolution"' \
  '"git_revision"' '"date"' '"precision": "double"' '"strategy": "step2"' '"alias": "sendrecv-pack"' \
  '"catalog": {' '"loop": {' '"unpack": {' '"mean"' '"pack_x": {' '"unpack_z": {' '"mpi_buffers": "host"' \
  '"self_copy": false' '"backend": "host"' '"omp_threads": 1'; do
  grep -q "$key" r.json || fail "JSON lacks $key"
done
check_schema r.json auto.json
# 2x2x1 grid of 4x4x8 blocks: planes of 6x10, 6x10, 6x6 cells, 3 fields, 2 signs, 8 bytes.
json_is r.json "sum(doc['results'][0]['traits']['mpi_bytes'].values()) == $(((60 + 60 + 36) * 3 * 2 * 8))"

# A corrupted cell (test hook) makes that strategy invalid, names rank, field
# and cell, lets the others finish, and exits 3.
rc=0
run_mpi 4 "${halo[@]}" --outdir bad --json bad.json --inject-error step1 >bad.txt 2>bad.err || rc=$?
[ $rc -eq 3 ] || fail "inject-error: exit $rc, expected 3"
grep -Eq '^checkmpi-halo: step1: validation failed at t=4: rank 3: field1\(4,1,1\) expected -1 got 0; 1 wrong cell\(s\) on this rank, 1 in all$' bad.err || fail "message: $(cat bad.err)"
grep -q 'step1 sendrecv-packx .*INVALID' bad.txt || fail "table does not mark step1 invalid"
grep -q 'step2 sendrecv-pack .*valid' bad.txt || fail "step2 did not finish after step1 failed"
grep -q '"valid": false' bad.json || fail "JSON does not mark step1 invalid"
check_schema bad.json
grep -q 'FAILED at t=4' bad/step1/task.000003.log || fail "task log of the failing rank"
# The hook also reaches step10, whose fields live in a swapped buffer.
rc=0
run_mpi 4 "${halo[@]}" --outdir bad10 --strategy step7,step10 --inject-error step10 >bad10.txt 2>bad10.err || rc=$?
[ $rc -eq 3 ] || fail "inject-error step10: exit $rc, expected 3"
grep -q 'step10 overlap-masked .*INVALID' bad10.txt || fail "table does not mark step10 invalid"
grep -q 'step7 isend-irecv .*valid' bad10.txt || fail "step7 should be valid"

# --repeat 2 --rounds 3: each strategy's 12 steps twice, each time in rounds
# of 4 steps, every strategy's round before the next round, in an order
# drawn from --seed (the same seed, the same order); statistics over all.
run_mpi 4 "${halo[@]}" --strategy step2,step7,step0 --repeat 2 --rounds 3 --seed 7 --outdir rep --json rep.json \
  >rep.txt || fail "repeat run"
check_schema rep.json
rounds=$(grep -E '^\[[0-9]/6\] ' rep.txt)
[ "$(wc -l <<<"$rounds")" -eq 6 ] || fail "rounds: $rounds"
grep -q '^\[1/6\] run 1, round 1, steps 1-4: ' <<<"$rounds" || fail "first round: $rounds"
grep -q '^\[6/6\] run 2, round 3, steps 9-12: ' <<<"$rounds" || fail "last round: $rounds"
while read -r line; do
  for id in step0 step2 step7; do grep -q " $id" <<<"$line" || fail "round without $id: $line"; done
done <<<"$rounds"
[ "$(cut -d: -f2 <<<"$rounds" | sort -u | wc -l)" -gt 1 ] || fail "the order never changed: $rounds"
run_mpi 4 "${halo[@]}" --strategy step2,step7,step0 --repeat 2 --rounds 3 --seed 7 --outdir rep2 >rep2.txt ||
  fail "repeat run, same seed"
[ "$(grep -E '^\[[0-9]/6\] ' rep2.txt)" = "$rounds" ] || fail "same seed, another order: $(grep -E '^\[' rep2.txt)"
python3 - <<'PY' || fail "repeat JSON"
import json
d = json.load(open("rep.json"))
assert d["config"]["repeat"] == 2 and d["config"]["noise_thresholds"]["p95_over_median"] == 1.5
assert d["config"]["rounds"] == 3 and d["config"]["seed"] == 7, d["config"]
for r in d["results"]:
    assert r["runs"] == 2 and r["steps"] == 24 and len(r["repeat_medians"]) == 2, r
    assert r["step_time"]["n"] == 4 * 24 and r["repeat_spread"] is not None
    assert [len(run) for run in r["round_medians"]] == [3, 3], r["round_medians"]
    v = r["vs_fastest"]
    assert v["ci95"][0] <= v["ratio"] <= v["ci95"][1] or v["ratio"] == 1, v
assert d["fastest_group"] and d["fastest_group"][0] in ("step0", "step2", "step7"), d["fastest_group"]
best = [r for r in d["results"] if r["strategy"] == d["fastest_group"][0]][0]
assert best["vs_fastest"] == {"ratio": 1, "ci95": [1, 1], "tied": True}, best["vs_fastest"]
PY
grep -Eq '^[* ] step2 sendrecv-pack .*valid$' rep.txt || fail "repeat table"
grep -q 'steps in 2 runs (--repeat)' rep/step2/task.000000.log || fail "task log of a repeated run"

# A failure after the run (a task log that cannot be written) is exit 1, not 2.
mkdir -p late/step2/task.000001.log
expect_exit 1 'checkmpi-halo: error:' "rank 1: cannot write 'late/step2/task.000001.log'" 4 "${halo[@]}" \
  --strategy step2 --outdir late
echo "ok: features"
