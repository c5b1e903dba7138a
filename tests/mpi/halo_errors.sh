#!/usr/bin/env bash
# halo_errors.sh NP: every bad input ends with one error line from rank 0,
# exit code 2, no hang, and files written before are left alone.
source "$(dirname "$0")/lib.sh"
np=$1
dir=$(scratch)
cd "$dir"

good="--lx $((2 * np)) --ly 4 --lz 4 --itfin 2 --icheck 1"
write_input ok.input $((2 * np)) 4 4 0 0 0 2 1

expect_error "cannot read input file 'missing.input'" --input missing.input
mkdir unreadable.input
expect_error "cannot read input file 'unreadable.input'" --input unreadable.input
echo "lx = 4 /" >nogroup.input
expect_error "no &parameters group" --input nogroup.input
printf '&parameters\nlx = 4\n' >open.input
expect_error "line 3: &parameters group is not closed" --input open.input
printf '&parameters\nlx = 4\nfoo = 3 /\n' >unknown.input
expect_error "line 3: unknown key 'foo'" --input unknown.input
printf '&parameters lx = 4.5 /\n' >real.input
expect_error "value of 'lx' is not an integer: '4.5'" --input real.input
expect_error "value of --itfin is not an integer: 'x'" --input ok.input --itfin x
expect_error "lx must be positive, got -4" --no-input $good --lx -4
expect_error "lz is not set" --no-input --lx 4 --ly 4
expect_error "itfin must be positive, got 0" --input ok.input --itfin 0
expect_error "icheck must be positive, got 0" --input ok.input --icheck 0
expect_error "icheck must be positive, got -2" --input ok.input --icheck -2
expect_error "proc_x = $((np + 1)) is more than the $np MPI ranks" \
  --input ok.input --proc_x $((np + 1)) --proc_y 1 --proc_z 1
if [ "$np" -gt 1 ]; then
  expect_error "proc_x\*proc_y\*proc_z = $((np * np)) does not match the $np MPI ranks" \
    --input ok.input --proc_x "$np" --proc_y "$np" --proc_z 1
fi
if [ "$np" -gt 1 ]; then
  expect_error "lx = $((2 * np + 1)) is not divisible by proc_x = $np" \
    --input ok.input --lx $((2 * np + 1)) --proc_x "$np" --proc_y 1 --proc_z 1
fi
expect_error "unknown strategy 'step99'" --input ok.input --strategy step0,step99
expect_error "unknown option '--bogus'" --input ok.input --bogus
expect_error "not enough memory: .* need .* available" --no-input --lx 20000 --ly 20000 --lz 20000

# An output directory that cannot be created (a file is in the way), and a
# JSON file that cannot be written; neither may touch what exists.
echo "keep me" >afile
expect_error "cannot create output directory 'afile/sub'" --input ok.input --outdir afile/sub
expect_error "cannot write JSON file 'afile/r.json'" --input ok.input --outdir out --json afile/r.json
[ "$(cat afile)" = "keep me" ] || fail "existing file was modified"

# The same input with the bad option removed runs.
run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" --input ok.input --outdir out >out.txt 2>err.txt ||
  fail "good run failed: $(cat err.txt)"
echo "ok: bad inputs at $np ranks"
