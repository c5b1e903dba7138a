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
expect_error "lx must be positive, got -4" --no-input --lx -4 --ly 4 --lz 4 --itfin 2 --icheck 1
expect_error "itfin must be positive \\(1 to 1000000000000\\), got 0" --input ok.input --itfin 0
expect_error "icheck must be positive \\(1 to 1000000000000\\), got 0" --input ok.input --icheck 0
expect_error "icheck must be positive \\(1 to 1000000000000\\), got -2" --input ok.input --icheck -2
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
# One spelling per setting on a command line; malformed triples name the value.
expect_error "^checkmpi-halo: error: --size 8x4x4 and --lx 8 both set the global size; give one of them$" \
  --input ok.input --size 8x4x4 --lx 8
expect_error "--size 8x4x4 and --local 2x2x2 both set the global size" --input ok.input --size 8x4x4 --local 2x2x2
expect_error "--local 2x2x2 and --lz 4 both set the global size" --input ok.input --local 2x2x2 --lz 4
expect_error "--procs 1x1x$np and --proc_z $np both set the grid of ranks" --input ok.input --procs 1x1x$np \
  --proc_z $np
expect_error "--iters 3 and --itfin 2 both set the number of timed steps" --input ok.input --iters 3 --itfin 2
expect_error "^checkmpi-halo: error: --size expects three positive integers like 64x64x32, got '8x8'$" \
  --input ok.input --size 8x8
expect_error "--procs expects three positive integers like 2x2x1, got '0x1x1'" --input ok.input --procs 0x1x1
expect_error "--local expects three positive integers like 32x32x32, got '4x4xq'" --input ok.input --local 4x4xq
expect_error "--local 1073741825x1x1 on a grid of .* ranks makes lx larger than 1073741824" \
  --input ok.input --local 1073741825x1x1 --procs ${np}x1x1
expect_error "lz is not set \(give it in the input file, as --size LXxLYxLZ or --lz, or give --local LxMxN\)" \
  --no-input --lx 4 --ly 4
expect_error "unknown strategy 'step99'" --input ok.input --strategy step0,step99
expect_error "unknown option '--bogus'" --input ok.input --bogus
expect_error "not enough memory: .* need .* available" --no-input --lx 20000 --ly 20000 --lz 20000

# An output directory that cannot be created (a file is in the way), and a
# JSON file that cannot be written; neither may touch what exists.
echo "keep me" >afile
expect_error "cannot create output directory 'afile/sub'" --input ok.input --outdir afile/sub
expect_error "cannot write JSON file 'afile/r.json'" --input ok.input --outdir out --json afile/r.json
[ "$(cat afile)" = "keep me" ] || fail "existing file was modified"

# Rounds, seed, tie threshold and the delay hook: the value and the limit.
expect_error "--rounds must be at least 1, got 0" --input ok.input --rounds 0
expect_error "--rounds 3 is more than itfin \\(2\\): every round needs a step" --input ok.input --rounds 3
expect_error "--seed must be 0 to 2.53-1 .9007199254740991., got -1" --input ok.input --seed -1
expect_error "--tie-threshold must be at least 0 and below 1 \\(a fraction: 0.02 is 2%\\), got '2'" \
  --input ok.input --tie-threshold 2
expect_error "--inject-delay must be STRATEGY:FRACTION with FRACTION above 0 and at most 10, got 'step2:0'" \
  --input ok.input --inject-delay step2:0
expect_error "--inject-delay: 'step9' is not the id of a strategy this run runs" \
  --input ok.input --strategy step2 --inject-delay step9:0.1

# The same input with the bad option removed runs.
run_mpi "$np" "$CHECKMPI_BIN/checkmpi-halo" --input ok.input --outdir out >out.txt 2>err.txt ||
  fail "good run failed: $(cat err.txt)"
echo "ok: bad inputs at $np ranks"
