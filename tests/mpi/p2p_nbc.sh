#!/usr/bin/env bash
# p2p_nbc.sh: mode nbc beyond what p2p_mode.sh checks: -c catches a damaged
# byte in an all-to-all and in a pencil transpose (exit 3, one line, JSON
# with what passed before); a pencil grid that does not match the ranks is
# bad input; --progress-thread is recorded as this MPI library honours it;
# the overlapped loop's phases add up to its overall time, and with
# --osu-clock (a clock pair around each phase, as OSU) fall short of it;
# --repeat runs the points interleaved and pools them. Every JSON file
# validates against the schema.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
cd "$dir"
p2p="$CHECKMPI_BIN/checkmpi-p2p"
small=(-i 2 -x 1)

# expect_corruption NP REGEX ARGS...: exit 3, one "validation failed" line
# matching REGEX, and the JSON says so, with the results of the sizes
# measured before the damaged one.
expect_corruption() {
  local np=$1 want=$2
  shift 2
  rm -f bad.json
  expect_exit 3 'checkmpi-p2p: validation failed: ' "$want" "$np" "$p2p" nbc "$@" -c "${small[@]}" --json bad.json
  check_schema bad.json
  python3 - "$(grep 'validation failed: ' err.txt)" <<'PY' || fail "args [$*]: JSON of the failed run"
import json, sys
d = json.load(open("bad.json"))
assert d["valid"] is False and "checkmpi-p2p: validation failed: " + d["error"] == sys.argv[1], d["error"]
assert d["fits"] == {}, d["fits"]
damaged = int(sys.argv[1].split("size ")[1].split(",")[0]) if "size " in sys.argv[1] else None
assert all(r["size"] < damaged for r in d["results"]) if damaged else d["results"] == [], d["results"]
PY
}

hex='0x[0-9a-f]{2}'
# Rank 0's block for rank 1 is damaged: rank 1 sees it, sizes 4 and 8 passed.
expect_corruption 2 "^checkmpi-p2p: validation failed: ialltoall: size 16, offset 3: expected $hex, got $hex \(rank 1 from rank 0, iteration 0\)$" \
  --op ialltoall -m 4:64 --inject-corruption 16:3
python3 -c 'import json; d = json.load(open("bad.json")); assert [r["size"] for r in d["results"]] == [4, 8], d["results"]' ||
  fail "ialltoall: results before the damaged size"
# A 9x7x5 x_to_y on 2x2 pencils sends at most 864 bytes from a rank; byte 8
# of rank 0's packed buffer is the first byte of its second cell, (1,0,0).
expect_corruption 4 "^checkmpi-p2p: validation failed: x_to_y 9x7x5 on 2x2 pencils: cell \(1,0,0\): expected 4, got 4\.0+[0-9]+ \(rank 0, iteration 0\)$" \
  --pencil 2x2 --grid 9x7x5 --inject-corruption 864:8

expect_usage_error checkmpi-p2p 2 "^checkmpi-p2p: error: --pencil 2x2 needs 4 MPI ranks, got 2$" nbc --pencil 2x2 --grid 8x8x8
expect_usage_error checkmpi-p2p 4 "grid 8x3x8 is too small for 1x4 pencils" nbc --pencil 1x4 --grid 8x3x8

# --progress-thread: the library's own setting, read back through MPI_T.
run_mpi 2 "$p2p" nbc --op ibcast -m 4:8 "${small[@]}" --progress 0,2 --progress-thread --json pt.json >pt.txt 2>&1 ||
  fail "--progress-thread: $(tail -3 pt.txt)"
grep -q '^  progress    : ' pt.txt || fail "no progress line in the header"
check_schema pt.json
python3 - <<'PY' || fail "--progress-thread: context $(python3 -c 'import json; print(json.load(open("pt.json"))["context"]["progress_thread"])')"
import json
d = json.load(open("pt.json"))
pt, lib = d["context"]["progress_thread"], d["context"]["mpi_library"]
assert pt["requested"] is True and d["config"]["progress_thread"] is True
if lib.startswith("MPICH"):  # MPIR_CVAR_ASYNC_PROGRESS starts a thread and raises the thread level
    assert pt["setting"] == "MPIR_CVAR_ASYNC_PROGRESS=1" and pt["covers"] == "all communication"
    assert pt["active"] is True and pt["thread_level"] == "MPI_THREAD_MULTIPLE"
elif lib.startswith("Open MPI"):  # only the TCP BTL has a thread; the note says so
    assert pt["setting"] == "OMPI_MCA_btl_tcp_progress_thread=1" and pt["covers"] == "TCP BTL traffic only"
    assert pt["active"] is True and "no progress thread for shared memory" in pt["note"]
assert [(r["size"], r["tests"]) for r in d["results"]] == [(4, 0), (4, 2), (8, 0), (8, 2)]
PY
# Without it the thread is off, and the rows for each MPI_Test count are printed.
run_mpi 2 "$p2p" nbc --op iallreduce -m 4:4 "${small[@]}" --progress 0,5 --json off.json >off.txt 2>&1 ||
  fail "nbc without --progress-thread: $(tail -3 off.txt)"
check_schema off.json
python3 -c 'import json; pt = json.load(open("off.json"))["context"]["progress_thread"]; assert not pt["requested"] and not pt["active"], pt' ||
  fail "progress thread active without --progress-thread"
[ "$(grep -Ec '^4 +[05] ' off.txt)" -eq 2 ] || fail "table rows for --progress 0,5: $(cat off.txt)"

# The phases (post, compute, wait) of the overlapped loop: one clock read
# between two phases, so they add up to the overall time; with --osu-clock a
# pair around each, so the overall time holds more (the reads between them).
run_mpi 2 "$p2p" nbc --op ialltoall -m 4:8 -i 20 -x 2 --progress 0,2 --osu-clock --json osu.json >osu.txt 2>&1 ||
  fail "nbc --osu-clock: $(tail -3 osu.txt)"
check_schema osu.json
python3 - <<'PY' || fail "phases against the overall time"
import json
for name, osu in (("off.json", False), ("osu.json", True)):
    d = json.load(open(name))
    assert d["config"]["osu_clock"] is osu, (name, d["config"]["osu_clock"])
    for r in d["results"]:
        phases = r["init"]["mean"] + r["compute"]["mean"] + r["wait"]["mean"]
        overall = r["overall"]["mean"]
        if osu:
            assert overall > phases, (name, r["size"], r["tests"], overall, phases)
        else:
            assert abs(overall - phases) <= 1e-6 * overall, (name, r["size"], r["tests"], overall, phases)
PY

# --repeat 2: every point twice, interleaved (progress lines in that order);
# each result pools both runs and lists each run's medians.
run_mpi 2 "$p2p" nbc --op ialltoall,ibcast -m 4:8 "${small[@]}" --progress 0,3 --repeat 2 --json rep.json >rep.txt 2>&1 ||
  fail "nbc --repeat 2: $(tail -3 rep.txt)"
check_schema rep.json
python3 "$(dirname "$0")/p2p_check.py" rep.json nbc 2 || fail "nbc --repeat 2: JSON check"
want="[1/8] ialltoall, 4 B [2/8] ialltoall, 8 B [3/8] ibcast, 4 B [4/8] ibcast, 8 B "
want+="[5/8] ialltoall, 4 B [6/8] ialltoall, 8 B [7/8] ibcast, 4 B [8/8] ibcast, 8 B "
[ "$(grep -Eo '^\[[0-9]/8\] [a-z]+, [0-9]+ B' rep.txt | tr '\n' ' ')" = "$want" ] ||
  fail "nbc --repeat order: $(grep -E '^\[' rep.txt)"
python3 - <<'PY' || fail "nbc --repeat 2: pooled runs"
import json
d = json.load(open("rep.json"))
assert d["config"]["repeat"] == 2 and len(d["results"]) == 8
for r in d["results"]:
    assert r["iterations"] == 4 and r["pure_comm"]["n"] == 4 * 2, r  # 2 iterations x 2 runs, 2 ranks
    assert all(len(q["medians"]) == 2 and q["spread"] is not None for q in r["repeats"].values()), r["repeats"]
PY
echo "ok: nbc validation, bad input, progress thread, repeat"
