#!/usr/bin/env bash
# halo_backend.sh: --backend, --require-gpu-aware and --stage on whatever
# this build (CHECKMPI_CUDA_BUILD=ON/OFF) and machine (GPU or not) have, at
# 2 ranks. Runs in every build; the GPU branch only where a GPU is visible.
source "$(dirname "$0")/lib.sh"
np=2
dir=$(scratch)
cd "$dir"
halo="$CHECKMPI_BIN/checkmpi-halo"
write_input file.input 8 6 4 2 1 1 3 1

# A JSON check: python3 expression over `doc`, the results file.
expect_error "--backend must be auto, host or cuda, got 'gpu'" --backend gpu

# The host backend, named: --require-gpu-aware and --stage concern the cuda
# backend only and change nothing here.
run_mpi $np "$halo" --backend host --require-gpu-aware --stage --json host.json --outdir host >host.txt 2>&1 ||
  fail "host run with --require-gpu-aware --stage: $(tail -3 host.txt)"
grep -Eq '^  backend        : host, [0-9]+ OpenMP threads? per rank$' host.txt || fail "host header"
check_schema host.json
json_is host.json 'doc["context"]["backend"] == "host" and doc["context"]["gpus"] is None'
rows=$("$halo" --list-strategies | grep -c '^ *pack=')
json_is host.json 'doc["context"]["gpu_aware_mpi"] in (True, False, None)'
json_is host.json 'all(k["reason"].startswith("needs MPI 4") for k in doc["skipped"])'
json_is host.json "len(doc['results']) + len(doc['skipped']) == $rows"
json_is host.json 'all(r["valid"] and r["mpi_buffers"] == "host" for r in doc["results"])'
json_is host.json 'doc["config"]["backend"] == "host" and doc["config"]["stage"] and doc["config"]["require_gpu_aware"]'

rc=0
run_mpi $np "$halo" --backend cuda --outdir cuda >cuda.txt 2>cuda.err || rc=$?
if [ "${CHECKMPI_CUDA_BUILD:-OFF}" != ON ]; then
  expect_error "^checkmpi-halo: error: --backend cuda: checkmpi was built without CUDA \(configure with -DCHECKMPI_ENABLE_CUDA=ON\)$" \
    --backend cuda
  gpu=0
elif [ $rc -eq 2 ]; then
  expect_error "^checkmpi-halo: error: --backend cuda: no CUDA device visible \(.+\)$" --backend cuda
  gpu=0
else
  [ $rc -eq 0 ] || fail "--backend cuda: exit $rc: $(cat cuda.err)"
  gpu=1
fi

# auto: cuda exactly where a GPU is visible; the header says which.
run_mpi $np "$halo" --json auto.json --outdir auto >auto.txt 2>&1 || fail "auto run: $(tail -3 auto.txt)"
check_schema auto.json
if [ $gpu -eq 0 ]; then
  grep -Eq '^  backend        : host, ' auto.txt || fail "auto did not fall back to host: $(grep backend auto.txt)"
  if [ "${CHECKMPI_CUDA_BUILD:-OFF}" = ON ]; then
    grep -q '^                   (auto: no CUDA device visible (' auto.txt || fail "auto: no reason for host"
  fi
  json_is auto.json 'doc["context"]["backend"] == "host" and doc["config"]["backend"] == "auto"'
else
  grep -q '^  backend        : cuda' auto.txt || fail "auto did not choose cuda"
  json_is auto.json 'doc["context"]["backend"] == "cuda"'
  json_is auto.json 'all(k["reason"].startswith(("host only", "needs MPI 4")) for k in doc["skipped"])'
  json_is auto.json '{"step0", "step1", "step2"} <= {k["strategy"] for k in doc["skipped"]}'
  # A host-only strategy named explicitly cannot run on the GPU.
  expect_error "^checkmpi-halo: error: step1 \(sendrecv-packx\) cannot run on the cuda backend: host only" \
    --backend cuda --strategy step3,step1
  # --require-gpu-aware passes exactly where MPI says it is CUDA-aware.
  if python3 -c 'import json, sys; sys.exit(0 if json.load(open("auto.json"))["context"]["gpu_aware_mpi"] else 1)'; then
    run_mpi $np "$halo" --backend cuda --require-gpu-aware --outdir req >req.txt 2>&1 || fail "require: $(tail -3 req.txt)"
  else
    expect_error "^checkmpi-halo: error: --require-gpu-aware: (MPI is not CUDA-aware|cannot tell whether MPI is CUDA-aware)" \
      --backend cuda --require-gpu-aware
  fi
fi
echo "ok: backend selection (CUDA build: ${CHECKMPI_CUDA_BUILD:-OFF}, GPU: $gpu)"
