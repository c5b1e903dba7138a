#!/usr/bin/env bash
# p2p_errors.sh NP: every bad option ends with one error line from rank 0,
# exit code 2, and no hang on any rank.
source "$(dirname "$0")/lib.sh"
np=$1
dir=$(scratch)
cd "$dir"

# expect_error REGEX ARGS...: checkmpi-p2p ARGS fails with exit 2 and one
# "checkmpi-p2p: error:" line matching REGEX, before measuring anything.
expect_error() {
  expect_usage_error checkmpi-p2p "$np" "$@"
  [ ! -s out.txt ] || fail "[$*]: something was printed before the error: $(head -c 300 out.txt)"
}

modes='\(pingpong, bw, ring, loggp, datatype, nbc, self, barrier, bibw, mbw-mr, coll, rma\)'
expect_error "no mode given $modes"
expect_error "unknown mode 'pingpang' $modes" pingpang
expect_error "unexpected argument 'extra'" pingpong extra
expect_error "unknown option '--bogus'" pingpong --bogus
expect_error "message size range 64:8: MIN 64 is larger than MAX 8" pingpong -m 64:8
expect_error "value of --message-size \(MAX\) is not an integer: 'abc'" pingpong -m 1:abc
expect_error "value of --iters is not an integer: 'ten'" bw -i ten
expect_error "--iters must be at least 1, got 0" pingpong -i 0
expect_error "--iters must be at least 1, got 0" pingpong --iterations 0
expect_error "--window must be at least 1, got 0" bw -W 0
expect_error "--prtt-n must be at least 2, got 1" loggp --prtt-n 1
expect_error "--prtt-n must be at least 2, got 1" loggp -n 1
expect_error "datatype tuple '2:4:2': stride 2 is smaller than blocklen 4" datatype --vectors 1:1:1,2:4:2
expect_error "datatype tuple '2:4' is not COUNT:BLOCKLEN:STRIDE" datatype --vectors 2:4
expect_error "unknown --buffer 'gpu' \(host, cuda\)" pingpong --buffer gpu
expect_error "--buffer cuda does not apply to mode nbc \(its operations use host buffers\)" nbc --buffer cuda
expect_error "--buffer cuda does not apply to mode barrier \(no message\)" barrier --buffer cuda
# --buffer cuda is refused, before anything runs, by a build without CUDA and
# where no GPU is visible (p2p_gpu.sh runs it where one is).
rc=0
run_mpi "$np" "$CHECKMPI_BIN/checkmpi-p2p" self --buffer cuda -m 1:1 -i 1 -x 0 >cuda.txt 2>cuda.err || rc=$?
if [ "${CHECKMPI_CUDA_BUILD:-OFF}" != ON ]; then
  expect_error "^checkmpi-p2p: error: --buffer cuda: checkmpi was built without CUDA \(configure with -DCHECKMPI_ENABLE_CUDA=ON\)$" \
    pingpong --buffer cuda
elif [ $rc -eq 2 ]; then
  expect_error "^checkmpi-p2p: error: --buffer cuda: no CUDA device visible \(.+\)$" pingpong --buffer cuda
else
  [ $rc -eq 0 ] || fail "--buffer cuda: exit $rc: $(cat cuda.err)"
fi
expect_error "option --json needs a value" pingpong --json
expect_error "unknown --op 'ireduce'" nbc --op ireduce
expect_error "--message-size does not apply to mode barrier \(no message\)" barrier -m 1:8
# The OSU counterparts' options (issue 33); the rest of their bad options are
# unit-tested (test_p2p_options.cpp: OsuCounterpartErrors), each launch here costing seconds.
expect_error "unknown --sync 'bogus' \(fence, pscw, lock, lock-all, flush\)" rma --sync bogus
expect_error "--threads 65 is too large: at most 64" pingpong --threads 65
if [ "$np" -lt 2 ]; then
  for mode in pingpong bw ring loggp datatype nbc barrier coll; do
    expect_error "mode $mode needs at least 2 MPI ranks, got $np" "$mode" -i 2
  done
else
  echo "keep me" >afile
  expect_error "cannot write JSON file 'afile/r.json'" pingpong -m 1:2 -i 2 --json afile/r.json
  [ "$(cat afile)" = "keep me" ] || fail "existing file was modified"
  run_mpi "$np" "$CHECKMPI_BIN/checkmpi-p2p" pingpong -m 1:2 -i 2 -x 0 >out.txt 2>err.txt ||
    fail "good run failed: $(cat err.txt)"
  # mbw-mr pairs rank i with rank i + P/2: an odd count is refused on every rank, before anything runs.
  expect_usage_error checkmpi-p2p 3 "mode mbw-mr pairs rank i with rank i \+ P/2: it needs an even number of ranks, got 3$" \
    mbw-mr -m 1:2 -i 2
fi
echo "ok: bad options at $np ranks"
