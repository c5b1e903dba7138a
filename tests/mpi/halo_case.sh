#!/usr/bin/env bash
# halo_case.sh NP PX PY PZ [checkmpi-halo options...]
# Runs every strategy of the catalog on the host backend, on a small box with
# NP ranks and a PXxPYxPZ grid, then checks: exit 0, every strategy valid in
# the JSON (or skipped because this MPI lacks it), per-rank prof and task
# files present, prof files byte-identical across strategies, the first
# prof_i block against sin() computed independently here, and the header's
# OpenMP thread count and self-exchange line. With --halo-width W, --fields
# F or --neighbours N among the options (issue 34) the same, field1's
# profile then moving W cells a step along x (6), x and y (18) or x, y and z
# (26).
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

# Independent check of the first block of prof_i on rank 0 (at j = m/2, k =
# n/2): line i holds field1 = sin(2*pi*(u-1)/l), u the cell `icheck` steps of
# W cells place upstream of i; moving along y (and z) too, plus the same
# term of j (and k).
reverse=0 width=1 fields=3 neighbours=6
prev=""
for a in "$@"; do
  [ "$a" = --reverse ] && reverse=1
  case $prev in --halo-width) width=$a ;; --fields) fields=$a ;; --neighbours) neighbours=$a ;; esac
  prev=$a
done
axes=$(( neighbours == 6 ? 1 : neighbours == 18 ? 2 : 3 ))
awk -v l=$l -v m=$m -v n=$n -v t=$icheck -v rev=$reverse -v w="$width" -v f="$fields" -v axes=$axes '
  function term(i, size) {  # the profile of the cell upstream of i along one axis
    u = (((i - 1 + (rev ? t * w : -t * w)) % size) + size) % size + 1
    return sin(2 * 3.14159265358979 * (u - 1) / size)
  }
  NR == 1 { if ($0 != sprintf("# t=%7d", t)) { print "bad header: " $0; exit 1 }; next }
  NR > l + 1 { exit 0 }
  {
    want = term($1, l)
    if (axes > 1) want += term(int(m / 2) > 1 ? int(m / 2) : 1, m)
    if (axes > 2) want += term(int(n / 2) > 1 ? int(n / 2) : 1, n)
    if (substr($0, 1, 5) != sprintf("%5d", NR - 1)) { print "bad index column: " $0; exit 1 }
    if (length($0) != 5 + f * 15 - 1) { print "bad line length: [" $0 "]"; exit 1 }
    d = $2 - want; if (d < 0) d = -d
    if (d > 5e-6) { print "line " NR ": field1 " $2 " expected " want; exit 1 }
  }' out/step0/prof_i.000000.dat || fail "prof_i.000000.dat content"
echo "ok: $np ranks, ${px}x${py}x${pz}, $* -> $strategies"
