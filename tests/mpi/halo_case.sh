#!/usr/bin/env bash
# halo_case.sh NP PX PY PZ [checkmpi-halo options...]
# Runs every strategy of the catalog on the host backend, on a small box with
# NP ranks and a PXxPYxPZ grid, then checks: exit 0, every strategy valid in
# the JSON (or skipped because this MPI lacks it), per-rank prof and task
# files present, prof files byte-identical across strategies, the first
# prof_i block against sin() computed independently here, and the header's
# OpenMP thread count and self-exchange line.
source "$(dirname "$0")/lib.sh"
np=$1 px=$2 py=$3 pz=$4
shift 4
dir=$(scratch)
cd "$dir"
# Unequal local sizes (6, 5, 4) and itfin/icheck that wrap around them catch
# index mix-ups that a cube would hide. Few steps: MPICH is slow when ranks
# outnumber cores. Three rounds (steps 1-5, 6-9, 10-13): every strategy
# restarts from the exact state twice, checks fall inside and at round ends,
# and the profiles must not show it (CHECKMPI_TEST_ROUNDS=1: one round, where
# a slow MPI makes every set-up dear).
l=6 m=5 n=4 itfin=13 icheck=5 rounds=${CHECKMPI_TEST_ROUNDS:-3}
write_input file.input $((px * l)) $((py * m)) $((pz * n)) "$px" "$py" "$pz" $itfin $icheck
run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" --backend host --strategy all --rounds "$rounds" --json r.json --outdir out "$@" >stdout 2>stderr ||
  fail "exit $? ($(tail -n 3 stderr))"

# Every row of the catalog ran and is valid, except those this MPI library
# lacks (partitioned before MPI 4), which "all" skips with the reason.
rows=$("$CHECKMPI_BIN/checkmpi-halo" --list-strategies | grep -c '^ *pack=')
strategies=$(python3 - r.json "$rows" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "checkmpi.halo/5", doc["schema"]
results, skipped = doc["results"], doc["skipped"]
assert len(results) + len(skipped) == int(sys.argv[2]), (len(results), len(skipped), sys.argv[2])
assert all(k["strategy"] == "partitioned" and k["reason"].startswith("needs MPI 4") for k in skipped), skipped
bad = [(r["strategy"], r["error"]) for r in results if not r["valid"]]
assert not bad, bad
# Post and wait time MPI alone: with packing and unpacking they fit in comm on
# every rank, so their means over ranks do too.
for r in results:
    t = {k: v["mean"] for k, v in r["timers"].items()}
    parts = t["pack"] + t["unpack"] + t["post"] + t["wait"]
    assert parts <= t["comm"] * (1 + 1e-9) + 1e-12, (r["strategy"], parts, t["comm"])
print(" ".join(r["strategy"] for r in results))
PY
) || fail "JSON check"
check_schema r.json

threads=${OMP_NUM_THREADS:-1}
grep -Eq "^  backend        : host, $threads OpenMP threads? per rank$" stdout ||
  fail "header does not report $threads thread(s): $(grep backend stdout)"
self_dirs=""
for d in x:$px y:$py z:$pz; do [ "${d#*:}" -eq 1 ] && self_dirs="$self_dirs${self_dirs:+,}${d%:*}"; done
case " $* " in *" --self-copy "*) how="by local copy (--self-copy)" ;; *) how="through MPI to the rank itself" ;; esac
want="${self_dirs:+$self_dirs $how}"
grep -qxF "  self exchange  : ${want:-none}" stdout || fail "self exchange line: $(grep 'self exchange' stdout)"
blocks=$((itfin / icheck))

for r in $(seq 0 $((np - 1))); do
  rank=$(printf '%06d' "$r")
  for s in $strategies; do
    for p in prof_i prof_j prof_k; do
      f=out/$s/$p.$rank.dat
      [ -s "$f" ] || fail "$f missing or empty"
      [ "$(grep -c '^# t=' "$f")" -eq $blocks ] || fail "$f: expected $blocks blocks"
      cmp -s "$f" "out/step0/$p.$rank.dat" || fail "$f differs from step0's"
    done
    grep -q '^# Time for section' "out/$s/task.$rank.log" || fail "out/$s/task.$rank.log missing"
    grep -q '^# validation: passed' "out/$s/task.$rank.log" || fail "out/$s/task.$rank.log: not passed"
  done
done

# Independent check of the first block of prof_i on rank 0: line i holds
# field1 = sin(2*pi*(u-1)/l), u the cell `icheck` places upstream of i.
reverse=0
for a in "$@"; do [ "$a" = --reverse ] && reverse=1; done
awk -v l=$l -v t=$icheck -v rev=$reverse '
  NR == 1 { if ($0 != sprintf("# t=%7d", t)) { print "bad header: " $0; exit 1 }; next }
  NR > l + 1 { exit 0 }
  {
    s = rev ? t : -t
    u = ((($1 - 1 + s) % l) + l) % l + 1
    want = sin(2 * 3.14159265358979 * (u - 1) / l)
    if (substr($0, 1, 5) != sprintf("%5d", NR - 1)) { print "bad index column: " $0; exit 1 }
    if (length($0) != 5 + 3 * 14 + 2) { print "bad line length: [" $0 "]"; exit 1 }
    d = $2 - want; if (d < 0) d = -d
    if (d > 2e-6) { print "line " NR ": field1 " $2 " expected " want; exit 1 }
  }' out/step0/prof_i.000000.dat || fail "prof_i.000000.dat content"
echo "ok: $np ranks, ${px}x${py}x${pz}, $* -> $strategies"
