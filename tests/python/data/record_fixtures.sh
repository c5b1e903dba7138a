#!/usr/bin/env bash
# Records the Python tests' fixtures from the real native tools (never by
# hand): small runs of checkmpi-halo and of every checkmpi-p2p mode, written
# beside this script. Run it again after a schema change:
#   bash tests/python/data/record_fixtures.sh [BIN_DIR]   (default build/bin)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:-$here/../../../build/bin}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run() {  # run NP TOOL ARGS...
  local np=$1
  shift
  mpiexec -n "$np" "$@" >log.txt 2>&1 || { cat log.txt; exit 1; }
}
halo=("$bin/checkmpi-halo" --backend host --no-input --outdir out)
# Three strategies on a 2x2x1 grid, with the memcpy probe.
run 4 "${halo[@]}" --size 32x32x16 --procs 2x2x1 --iters 40 --icheck 10 \
  --strategy step0,step1,step2 --memcpy-probe --json "$here/halo_4ranks.json"
# Every strategy, three interleaved runs each.
run 4 "${halo[@]}" --size 32x32x16 --procs 2x2x1 --iters 40 --icheck 20 \
  --strategy all --repeat 3 --json "$here/halo_all_steps.json"
# Three launches ranked together (--samples): launches, launch_medians.
rm -f samples.json
for k in 1 2 3; do
  run 2 "${halo[@]}" --local 24x24x24 --procs 2x1x1 --iters 60 --icheck 30 \
    --strategy step2,step7 --samples samples.json --json "$here/halo_launches.json"
done
# Weak scaling for the projection's measured points: the same 12^3 block at 1, 2 and 4 ranks.
for np in 1 2 4; do
  procs=$(case $np in 1) echo 1x1x1 ;; 2) echo 2x1x1 ;; 4) echo 2x2x1 ;; esac)
  run $np "${halo[@]}" --local 12x12x12 --procs "$procs" --iters 20 --icheck 20 --strategy step2,step7,step8 \
    --json "$here/halo_scale_np$np.json"
done
# A campaign's weak scale-up of the same block (its report JSON carries the measured points).
cat >scale.toml <<'TOML'
[campaign]
name = "scale"
[halo]
strategies = ["step2", "step7", "step8"]
itfin = 20
[[sweep]]
local = "12x12x12"
np = [1, 2, 4]
TOML
python=${PYTHON:-$here/../../../.venv/bin/python}
(cd "$here/../../.." && "$python" -m checkmpi campaign run "$work/scale.toml" --dir "$work/camp" --bin "$bin" \
  && "$python" -m checkmpi campaign report "$work/camp" --json "$here/campaign_scale_report.json") >log.txt 2>&1 ||
  { cat log.txt; exit 1; }
p2p="$bin/checkmpi-p2p"
run 2 "$p2p" pingpong -m 1:1048576 -i 200 -x 10 --json "$here/p2p_pingpong.json"
run 2 "$p2p" bw -m 1:1048576 -i 10 -x 2 --json "$here/p2p_bw.json"
run 4 "$p2p" ring -m 1:65536 -i 20 -x 2 --json "$here/p2p_ring.json"
run 2 "$p2p" loggp -m 1:65536 -i 50 -x 5 --json "$here/p2p_loggp.json"
run 2 "$p2p" datatype -m 4:65536 -i 20 -x 2 --json "$here/p2p_datatype.json"
# nbc, validated: two operations with and without MPI_Test calls, and the
# transposes of 2x2 pencils on an uneven and an even grid.
run 2 "$p2p" nbc --op ialltoall,ibcast -m 64:1024 -i 50 -x 5 --progress 0,4 -c --json "$here/p2p_nbc.json"
run 4 "$p2p" nbc --pencil 2x2 --grid 9x7x5,16x16x16 -i 20 -x 2 --progress 0,4 -c --json "$here/p2p_nbc_pencil.json"
run 1 "$p2p" self -m 1:65536 -i 50 -x 5 --json "$here/p2p_self.json"
run 4 "$p2p" barrier -i 50 -x 5 --json "$here/p2p_barrier.json"
# The OSU counterparts (issue 33).
run 2 "$p2p" bibw -m 1:65536 -i 10 -x 2 --json "$here/p2p_bibw.json"
run 4 "$p2p" mbw-mr -m 1:65536 -i 10 -x 2 --json "$here/p2p_mbw-mr.json"
run 4 "$p2p" coll -m 4:4096 -i 20 -x 2 -c --json "$here/p2p_coll.json"
run 2 "$p2p" rma --sync lock -m 1:65536 -i 50 -x 5 -c --json "$here/p2p_rma.json"
run 2 "$p2p" pingpong --threads 2 -m 1:4096 -i 50 -x 5 -c --json "$here/p2p_pingpong_threads.json"
# A machine profile from a real (quick) calibration on 2 ranks.
py=${CHECKMPI_PYTHON:-$here/../../../.venv/bin/python}
PYTHONPATH="$here/../../.." "$py" -m checkmpi calibrate --np 2 --quick --bin "$bin" -o "$work/machine.json" \
  >log.txt 2>&1 || { cat log.txt; exit 1; }
sed -e "s|$work/||g" -e "s|$bin|build/bin|g" "$work/machine.json" >"$here/profiles/machine_2ranks.json"
# Paths that differ between machines would only add noise to diffs.
sed -i "s|\"outdir\": \"[^\"]*\"|\"outdir\": \"out\"|" "$here"/halo_*.json
sed -i "s|$work/||g" "$here/campaign_scale_report.json"
echo "fixtures recorded in $here from $bin"
