#!/usr/bin/env bash
# disk_full.sh: a real full disk (a tiny tmpfs, mounted in a private mount
# namespace that disappears with the test; needs root, else skipped with 77).
# Writing results there fails with exit 1 and one line naming the file and
# "No space left on device"; the files of the run before stay byte for byte
# as they were, and no temporary file is left behind.
source "$(dirname "$0")/lib.sh"
if [ "${CHECKMPI_IN_NAMESPACE:-}" != 1 ]; then
  if ! unshare -m --propagation private true 2>/dev/null; then
    echo "skipped: cannot create a mount namespace (needs root)"
    exit 77
  fi
  CHECKMPI_IN_NAMESPACE=1 exec unshare -m --propagation private bash "$0" "$@"
fi
dir=$(scratch)
cd "$dir"
mkdir disk
mount -t tmpfs -o size=512k tmpfs disk || { echo "skipped: cannot mount a tmpfs"; exit 77; }
trap 'umount "$dir/disk" 2>/dev/null; rm -rf "$CHECKMPI_TEST_ROOT"' EXIT

halo=("$CHECKMPI_BIN/checkmpi-halo" --backend host --no-input --lx 8 --ly 8 --lz 8 --icheck 2)
p2p=("$CHECKMPI_BIN/checkmpi-p2p" pingpong -i 5 -x 1)

# The run before, on the (not yet full) disk: more steps and sizes than the
# runs below, so that its files differ from theirs.
run_mpi 2 "${halo[@]}" --itfin 6 --strategy step0,step7 --outdir disk/out --json disk/halo.json >/dev/null \
  2>err.txt || fail "first halo run: $(cat err.txt)"
run_mpi 2 "${p2p[@]}" -m 1:128 --json disk/p2p.json >/dev/null 2>err.txt || fail "first p2p run: $(cat err.txt)"
halo+=(--itfin 4)
p2p+=(-m 1:64)
(cd disk && find . -type f -exec md5sum {} + | sort -k 2) >before.md5

# Fill the disk to the last byte.
dd if=/dev/zero of=disk/filler bs=4096 2>/dev/null && fail "the disk did not fill up"
[ "$(df --output=avail disk | tail -1)" -eq 0 ] || fail "the disk still has room: $(df disk | tail -1)"

expect_full() {  # expect_full TOOL FILE-REGEX CMD...
  local tool=$1 file=$2
  shift 2
  expect_exit 1 "$tool: error:" "^$tool: error: (rank [0-9]+: )?cannot write '$file': No space left on device$" 2 "$@"
}
# Profiles, task logs and JSON of both strategies over the previous ones.
expect_full checkmpi-halo 'disk/out/step[07]/(prof_[ijk]|task)\.00000[01]\.(dat|log)' \
  "${halo[@]}" --strategy step0,step7 --outdir disk/out --json disk/halo.json
# Only the JSON on the full disk: the profiles elsewhere (a copy of the
# earlier ones) are not replaced either.
cp -r disk/out side
expect_full checkmpi-halo 'disk/halo.json' "${halo[@]}" --strategy step0,step7 --outdir side --json disk/halo.json
diff -r disk/out side || fail "profiles beside a JSON that could not be written were replaced"
expect_full checkmpi-p2p 'disk/p2p.json' "${p2p[@]}" --json disk/p2p.json

rm disk/filler
(cd disk && find . -type f -exec md5sum {} + | sort -k 2) >after.md5
diff before.md5 after.md5 || fail "files of the run before changed or temporaries were left (above)"
python3 -m json.tool disk/halo.json >/dev/null || fail "disk/halo.json is not valid JSON"
echo "ok: full disk: exit 1, earlier results intact, no temporary left"
