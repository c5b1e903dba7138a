#!/usr/bin/env bash
# p2p_mode.sh NP MODE [options...]: runs checkmpi-p2p MODE on NP ranks and
# checks its JSON (p2p_check.py) and its OSU-style table.
source "$(dirname "$0")/lib.sh"
np=$1 mode=$2
shift 2
dir=$(scratch)
cd "$dir"
run_mpi "$np" "$CHECKMPI_BIN/checkmpi-p2p" "$mode" --json r.json "$@" >out.txt 2>err.txt ||
  fail "exit $? ($(tail -n 3 err.txt))"
# More ranks than cores: the scheduler, not the bytes, sets the time (MPICH
# polls), so a flat Hockney fit (beta null) is then the honest result.
# pingpong --threads T: T polling threads per rank count as T ranks here;
# and their latencies at 1-256 B (what the tests measure) differ by far less
# than threads contending for a loaded machine's cores vary: flat may be
# honest there too.
threads=1 block=""
args=("$@")
for i in "${!args[@]}"; do
  [ "${args[$i]}" != --threads ] || threads=${args[$((i + 1))]}
  [ "${args[$i]}" != --block ] || block=${args[$((i + 1))]}
done
flat=""
[ $((np * threads)) -le "$(nproc)" ] && [ "$threads" -eq 1 ] || flat=flat-ok
python3 "$(dirname "$0")/p2p_check.py" r.json "$mode" "$np" $flat || fail "JSON check ($(cat out.txt))"
check_schema r.json
# The run's date: rank 0's clock, gathered from all (src/core/context.cpp), a whole UTC time.
json_is r.json "__import__('re').fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ', doc['context']['date'])"
# --block N: every result's blocks are N iterations long, and the config says so.
if [ -n "$block" ]; then
  python3 -c "import json, sys; d = json.load(open('r.json')); n = int(sys.argv[1])
sys.exit(0 if d['config']['block'] == n and all(r['block'] == n for r in d['results']) else 1)" "$block" ||
    fail "--block $block: not every result timed in blocks of $block"
fi
[ "$(grep -c '^checkmpi-p2p ' out.txt)" -eq 1 ] || fail "header printed more than once"
case $mode in
  pingpong) heading='# Size       Latency (us)' ;;
  bw) heading='# Size      Bandwidth (MB/s)' ;;
  ring) heading='# Ranks  Size' ;;
  loggp) heading='# Size    PRTT(1,0) (us)' ;;
  datatype) heading='# Count  Blocklen  Stride' ;;
  nbc) heading='# Size         Tests     Blocking    Pure comm' ;;
  self) heading='# Size       Time (us)' ;;
  barrier) heading='# Ranks    Latency (us)' ;;
  bibw) heading='# Size      Bandwidth (MB/s)  Window median' ;;
  mbw-mr) heading='# Size      MB/s (all pairs)     Messages/s' ;;
  coll) heading='# Size       Avg Latency(us)  Min Latency(us)  Max Latency(us)' ;;
  rma) heading='# Size       Latency (us)     Min (us)  Median (us)     Max (us)      MB/s' ;;
esac
[[ " $* " != *" --pencil "* ]] || heading='# Transpose  Grid               Bytes  Tests     Blocking'

grep -q "^$heading" out.txt || fail "no '$heading' table"
case $mode in
  pingpong | bw | ring | self | bibw) grep -q '^# Hockney fit T(s) = alpha + s/beta' out.txt || fail "no Hockney fit printed" ;;
  loggp) grep -Eq '^# LogGP \(n = [0-9]+\): L = ' out.txt || fail "no LogGP fit printed" ;;
  datatype) grep -q '^# datatype overhead = o + O\*bytes' out.txt || fail "no datatype fit printed" ;;
  nbc) grep -q '^# Overall = Init + Compute + MPI_Test + MPI_Wait; Overlap(%) = max(0, 100 - ' out.txt ||
    fail "no overlap formula printed" ;;
esac
# Two ranks on one host: the header says so, and the JSON agrees.
if [ "$np" -eq 2 ] && [ "$mode" != self ] ||
  [[ $mode != ring && $mode != nbc && $mode != self && $mode != barrier && $mode != mbw-mr && $mode != coll ]]; then
  grep -Eq '^  placement   : (same node|different nodes)' out.txt || fail "no placement line"
fi
# mbw-mr: a line per pair, rank i with rank i + P/2, and where they are.
if [ "$mode" = mbw-mr ]; then
  [ "$(grep -Ec '^  pair [0-9]+ +: rank [0-9]+ -> rank [0-9]+, (same node|different nodes)' out.txt)" -eq $((np / 2)) ] ||
    fail "not one placement line per pair"
fi
echo "ok: $mode at $np ranks: $(grep -c '^[0-9]' out.txt) rows"
