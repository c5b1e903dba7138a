#!/usr/bin/env bash
# Sets up, builds, and runs the main job: every strategy on the default input
# (examples/file.input) with one rank per core, results under results/quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
np=$(nproc)
out=results/quickstart
mkdir -p "$out"
# Open MPI refuses to run as root unless told; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec.openmpi -n "$np" build/bin/checkmpi-halo --input examples/file.input --strategy all \
  --outdir "$out" --json "$out/results.json"
echo "md5 of rank 0's profiles (identical across strategies):"
(cd "$out" && md5sum -- */prof_i.000000.dat)
