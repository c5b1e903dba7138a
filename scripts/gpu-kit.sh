#!/usr/bin/env bash
# The GPU checks, prepared for a machine that has a GPU but no MPI and no
# build tools (the device lent for a few minutes, see docs/gpu.md "On a
# borrowed GPU machine").
#
#   bash scripts/gpu-kit.sh pack          here: fill .gpu-kit/ (ignored by git) with the CUDA build's
#                                         binaries and test lists, the Open MPI runtime they link
#                                         against (plugins, help files and every library they need
#                                         but the C library's), the wheels the tests' JSON checks
#                                         need, and OSU's binaries if OSU_DIR names a build (and
#                                         OSU_BARE's, bench/p2p_osu.sh's, if it names one)
#   bash scripts/gpu-kit.sh check [PART...]
#                                         there, in the repository's root with .gpu-kit carried:
#                                         run PARTs (default: all, in this order) within DEADLINE
#                                         seconds (default 480), each one's log in $OUT (else
#                                         ./gpu-kit-out), a summary line per part on stdout
#
# Parts, in the default order: env (GPU, MPI, CPUs, a cuda and a 2-rank host run), kernels
# (checkmpi_gpu_tests), gpu (ctest -L 'unit|gpu'), bench1 (bench/gpu.sh's 1-rank run),
# osu-threads (pingpong --threads against osu_latency_mt, each rank on 2 cores; issue 33),
# bench8 (bench/gpu.sh's 8-rank run), rest (ctest -LE 'unit|gpu', where --backend auto picks
# cuda); named only: osu (bench/p2p_osu.sh, OSU_ROUNDS rounds, default 3, of OSU_MODES, default
# every mode but threads: issue 33's comparison where the two ranks share no CPU). A part that
# would start with less time left than it needs is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
kit=${GPU_KIT:-$root/.gpu-kit}  # another folder: tests/python/test_gpu_kit.py

die() { echo "gpu-kit: $*" >&2; exit 2; }
parts_all=(env kernels gpu bench1 osu-threads bench8 rest)  # check's parts, in their default order

# Libraries every Linux has in its own version (the C library's, the GPU driver's): never carried.
system_lib() {
  [[ $(basename "$1") =~ ^(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux-x86-64|libcuda|libnvidia-.*)\.so ]]
}
# Open MPI's own stack, always the kit's copy; any other library (libstdc++, libgomp, verbs, ...) only where
# that machine has none of that name, its newer one being what its own programs need.
mpi_lib() {
  [[ $(basename "$1") =~ ^(libmpi|libopen-|libmca_|liboshmem|libpmix|libhwloc|libevent|libuc[mpst]|libfabric|libpsm|libinfinipath) ]]
}
# One of Open MPI's configured paths (prefix, libdir, sysconfdir, ...).
ompi_path() { ompi_info --parsable --path "$1" | sed -n "s/^path:$1://p"; }
# ELF files' libraries, as the loader here resolves them.
needed() {
  local f
  while read -r f; do
    [ "$(od -An -tx1 -N4 "$f" | tr -d ' ')" != 7f454c46 ] || ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
  done < <(find "$@" -type f) | sort -u
}

pack() {
  local build=${CUDA_BUILD:-build-cuda} mpiexec=${MPIEXEC:-/usr/bin/mpiexec.openmpi}
  [ ! -e "$kit" ] || [ -f "$kit/origin" ] || die "$kit exists and is no kit: give GPU_KIT a new folder"
  [ -f "$build/CMakeCache.txt" ] || die "$build not found: configure a CUDA build first (scripts/test.sh does)"
  cmake --build "$build" -j "$(nproc)" >/dev/null || die "the build in $build failed: cmake --build $build says why"
  for f in checkmpi-halo checkmpi-p2p checkmpi_gpu_tests checkmpi_unit_tests; do
    [ -x "$build/bin/$f" ] || die "$build/bin/$f not found: build with CUDA first (scripts/test.sh does)"
  done
  grep -q 'CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null || die "$build is not a CUDA build"
  "$mpiexec" --version 2>&1 | grep -qE 'Open MPI|OpenRTE' || die "$mpiexec is not Open MPI's (the kit carries Open MPI)"
  local orterun ompi_lib pmix prefix
  orterun=$(readlink -f "$mpiexec")
  prefix=$(ompi_path prefix)
  ompi_lib=$(ompi_path libdir)
  pmix=$(ompi_info --parsable --all 2>/dev/null | grep -o "with-pmix=[^']*" | head -1 | cut -d= -f2)
  [ -d "$pmix" ] || pmix=""  # an external PMIx, carried in its own layout
  [ "$prefix" = /usr ] || die "Open MPI's prefix is $prefix: the kit knows Debian's layout (/usr) only"

  rm -rf "$kit"
  mkdir -p "$kit/build/tests" "$kit/rt/lib" "$kit/rt/fallback" "$kit/whl"
  local rt=$kit/rt
  cp -p "$build"/bin/checkmpi-halo "$build"/bin/checkmpi-p2p "$build"/bin/checkmpi_gpu_tests \
    "$build"/bin/checkmpi_unit_tests "$kit/build/"
  cp -p "$build/CTestTestfile.cmake" "$kit/build/"
  cp -p "$build/tests/CTestTestfile.cmake" "$build"/tests/*_include.cmake "$build"/tests/*_tests.cmake \
    "$kit/build/tests/"
  printf 'root=%s\nbuild=%s\nmpiexec=%s\npython=%s\npmix=%s\n' "$root" "$(cd "$build" && pwd)" "$mpiexec" \
    "$(grep -o 'CHECKMPI_PYTHON=[^;"]*' "$build/tests/CTestTestfile.cmake" | head -1 | cut -d= -f2)" "$pmix" \
    >"$kit/origin"

  # Open MPI under the layout it was configured with, relative to OPAL_PREFIX (rt/usr).
  mkdir -p "$rt/usr/bin" "${rt}${ompi_lib}" "$rt/usr/share"
  cp -p "$orterun" "$rt/usr/bin/orterun"
  ln -s orterun "$rt/usr/bin/mpiexec"
  cp -p "$(command -v orted)" "$(command -v ompi_info)" "$rt/usr/bin/"
  cp -rL "$ompi_lib/openmpi3" "${rt}${ompi_lib}/"
  rm -f "${rt}${ompi_lib}"/openmpi3/*java*
  cp -rL /usr/share/openmpi "$rt/usr/share/"
  # Its configuration (Debian's: which transports; not found through OPAL_PREFIX, so named there).
  local etc
  etc=$(ompi_path sysconfdir)
  mkdir -p "$rt/etc" && cp -rL "$etc" "$rt/etc/openmpi"
  if [ -n "$pmix" ]; then
    mkdir -p "${rt}${pmix}"
    cp -rL "$pmix/lib" "$pmix/share" "${rt}${pmix}/"
    rm -f "${rt}${pmix}"/lib/*.a
  fi
  # Modules loaded by name at run time (UCX's transports, verbs providers): as here.
  for d in /usr/lib/x86_64-linux-gnu/ucx /usr/lib/x86_64-linux-gnu/libibverbs; do
    if [ -d "$d" ]; then mkdir -p "${rt}$(dirname "$d")" && cp -rL "$d" "${rt}$(dirname "$d")/"; fi
  done
  if [ -n "${OSU_DIR:-}" ]; then
    [ -x "$OSU_DIR/osu_latency_mt" ] || die "OSU_DIR=$OSU_DIR has no osu_latency_mt"
    cp -rL "$OSU_DIR" "$kit/osu"
  fi
  if [ -n "${OSU_BARE:-}" ]; then
    [ -x "$OSU_BARE/osu_put_latency" ] || die "OSU_BARE=$OSU_BARE has no osu_put_latency"
    cp -rL "$OSU_BARE" "$kit/osu-bare"
  fi

  # Every library these need, flat: Open MPI's in rt/lib (the loader's path there), the others in
  # rt/fallback (linked into rt/lib there where that machine lacks them), the C library's never.
  local lib
  while read -r lib; do
    if mpi_lib "$lib"; then cp -L "$lib" "$rt/lib/"
    elif ! system_lib "$lib"; then cp -L "$lib" "$rt/fallback/"
    fi
  done < <(needed "$kit/build" "$rt/usr" ${OSU_DIR:+"$kit/osu"} ${OSU_BARE:+"$kit/osu-bare"})

  # The tests' JSON checks (tests/mpi/schema_check.py) need jsonschema, which that machine's Python lacks.
  local v pip=$root/.venv/bin/python  # scripts/setup.sh's, which has pip; Debian's python3 may not
  [ -x "$pip" ] || pip=python3
  for v in 3.11 3.12 3.13; do  # pip there takes the one for its Python
    "$pip" -m pip download -q --no-deps --only-binary=:all: --python-version "$v" --implementation cp \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
      -d "$kit/whl" jsonschema jsonschema-specifications referencing rpds-py attrs typing-extensions >/dev/null ||
      die "pip download of jsonschema's wheels for Python $v failed"
  done

  local size
  size=$(du -sm "$kit" | cut -f1)
  [ "$size" -le 60 ] || die "$kit is $size MiB: the device takes 64 MiB with the tree"
  echo "gpu-kit: $kit ready, $size MiB: CUDA build $build," \
    "$("$mpiexec" --version 2>&1 | head -n 1)${OSU_DIR:+, OSU from $OSU_DIR}"
  echo "gpu-kit: on the GPU machine: bash scripts/gpu-kit.sh check   (with the kit carried)"
}

# The environment of the kit's Open MPI, relocated.
use_kit() {
  [ -d "$kit/rt" ] || die "no kit in $kit: run 'bash scripts/gpu-kit.sh pack' where the CUDA build is, and carry it"
  local rt=$kit/rt f known
  known=$( (ldconfig -p || /sbin/ldconfig -p) 2>/dev/null || true)  # none known: link none, the safe side
  for f in "$rt"/fallback/*; do
    [ -z "$known" ] || grep -q " $(basename "$f") " <<<"$known" || ln -sfn "../fallback/$(basename "$f")" "$rt/lib/"
  done
  export OPAL_PREFIX=$rt/usr PATH=$rt/usr/bin:$PATH
  export LD_LIBRARY_PATH=$rt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local pmix
  pmix=$(sed -n 's/^pmix=//p' "$kit/origin")
  [ -z "$pmix" ] || export PMIX_MCA_mca_base_component_path=$rt$pmix/lib/pmix  # PMIx's plugins: not relocated
  [ ! -d "$rt/usr/lib/x86_64-linux-gnu/ucx" ] || export UCX_MODULE_DIR=$rt/usr/lib/x86_64-linux-gnu/ucx
  export OMPI_MCA_mca_base_param_files=$rt/etc/openmpi/openmpi-mca-params.conf
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export MPIEXEC=$rt/usr/bin/mpiexec CHECKMPI_BIN=$root/build-cuda/bin
}

# build-cuda/ as ctest wants it: the kit's binaries, the test lists with this checkout's paths.
unpack_build() {
  local from_root from_build from_mpiexec from_python
  from_root=$(sed -n 's/^root=//p' "$kit/origin")
  from_build=$(sed -n 's/^build=//p' "$kit/origin")
  from_mpiexec=$(sed -n 's/^mpiexec=//p' "$kit/origin")
  from_python=$(sed -n 's/^python=//p' "$kit/origin")
  mkdir -p build-cuda/bin build-cuda/tests
  touch build-cuda/.from-gpu-kit
  cp -p "$kit"/build/checkmpi* build-cuda/bin/
  local f
  while read -r f; do
    sed -e "s|$from_python|python3|g" -e "s|$from_mpiexec|$MPIEXEC|g" -e "s|$from_build|$root/build-cuda|g" \
      -e "s|$from_root|$root|g" "$kit/build/$f" >"build-cuda/$f"
  done < <(cd "$kit/build" && printf '%s\n' CTestTestfile.cmake tests/*.cmake)
}

check() {
  local parts=("$@") part
  [ ${#parts[@]} -gt 0 ] || parts=("${parts_all[@]}")
  for part in "${parts[@]}"; do
    part_time "$part" >/dev/null
  done
  [ ! -e build-cuda ] || [ -e build-cuda/.from-gpu-kit ] ||
    die "build-cuda/ exists here: 'check' unpacks the kit's own build, in a checkout that has none"
  use_kit
  export GPU_KIT=$kit
  local out=${OUT:-$root/gpu-kit-out} deadline=$((SECONDS + ${DEADLINE:-480}))
  mkdir -p "$out"
  unpack_build
  if ! python3 -c 'import jsonschema' 2>/dev/null &&
    ! python3 -m pip install -q --no-index --find-links "$kit/whl" --no-compile --target /tmp/gpu-kit-site \
      jsonschema >"$out/pip.log" 2>&1; then
    echo "gpu-kit: the wheels did not install ($(tail -n 1 "$out/pip.log")): schema checks will fail"
  fi
  export PYTHONPATH=/tmp/gpu-kit-site${PYTHONPATH:+:$PYTHONPATH}
  local need rc t0 log
  for part in "${parts[@]}"; do
    need=$(part_time "$part")
    log=$out/$part.log
    if [ $((deadline - SECONDS)) -lt "$need" ]; then
      echo "$part: skipped, $((deadline - SECONDS)) s left of DEADLINE, it needs about $need"
      continue
    fi
    t0=$SECONDS rc=0
    timeout $((deadline - SECONDS)) bash -c "$(declare -f run_part); run_part $part" >"$log" 2>&1 || rc=$?
    echo "$part: exit $rc in $((SECONDS - t0)) s; $(summary "$part" "$log")"
  done
}

# About how long a part takes on the GPU machine of docs/gpu.md (seconds).
part_time() {
  case $1 in
    env) echo 20 ;; kernels) echo 30 ;; gpu) echo 150 ;; bench1) echo 90 ;; osu-threads) echo 90 ;;
    bench8) echo 150 ;; rest) echo 240 ;; osu) echo $((100 * ${OSU_ROUNDS:-3})) ;;
    *) local names="${parts_all[*]}"; die "unknown part '$1' (${names// /, }, osu)" ;;
  esac
}

# One part, its output to the caller's log.
run_part() {
  case $1 in
    env)  # fails where MPI does not run; the GPU's lines say whether there is one
      if command -v nvidia-smi >/dev/null; then
        nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
      else
        echo "GPU: none (no nvidia-smi)"
      fi
      "$MPIEXEC" --version | head -n 1; echo "CPUs: $(nproc)"; lscpu | grep -E 'Model name|^L[23]'
      "$CHECKMPI_BIN/checkmpi-halo" --version
      local halo=("$CHECKMPI_BIN/checkmpi-halo" --no-input --local 16x16x16 --itfin 2 --icheck 2
                  --outdir /tmp/gpu-kit-env)
      "$MPIEXEC" -n 1 "${halo[@]}" --strategy step3 --backend cuda 2>&1 | grep -E 'backend|GPUs|CUDA-aware|valid|error'
      "$MPIEXEC" -n 2 "${halo[@]}" --strategy step2 --backend host | grep -E '^. step2 .* valid$' ;;
    kernels) build-cuda/bin/checkmpi_gpu_tests ;;
    gpu) cd build-cuda && ctest -L 'unit|gpu' -j "$(nproc)" --output-on-failure ;;
    bench1) bash bench/gpu.sh 50 256 0 ;;
    bench8) bash bench/gpu.sh 50 0 128 ;;
    osu-threads)  # each rank on 2 cores of its own, for both programs
      [ "$(nproc)" -ge 4 ] || { echo "$(nproc) CPUs: 2 ranks x 2 threads need 4"; exit 1; }
      OMPI_MCA_rmaps_base_mapping_policy=slot:PE=2 OSU_DIR=$GPU_KIT/osu NP=2 bash bench/p2p_osu.sh 3 threads ;;
    rest) cd build-cuda && ctest -LE 'unit|gpu' -j "$(nproc)" --output-on-failure ;;
    osu)
      [ -d "$GPU_KIT/osu" ] || { echo "no OSU in the kit: pack with OSU_DIR"; exit 1; }
      local bare=""
      [ ! -d "$GPU_KIT/osu-bare" ] || bare=$GPU_KIT/osu-bare
      OSU_DIR=$GPU_KIT/osu OSU_BARE=$bare CONTROL=1 NP=2 \
        bash bench/p2p_osu.sh "${OSU_ROUNDS:-3}" ${OSU_MODES:-pingpong bw bibw mbw-mr coll rma nbc barrier} ;;
  esac
}

# The line that says how a part went.
summary() {
  case $1 in
    gpu | rest) grep -E 'tests passed|tests failed' "$2" | tail -n 1 ;;
    kernels) grep -E '^\[  (PASSED|FAILED)|tests ran' "$2" | tr '\n' ' ' ;;
    env) echo "$(grep -m1 -E '^GPU' "$2"); MPI: $(grep -c -E '^. step2 .* valid$' "$2") valid 2-rank run" ;;
    osu) echo "$(grep -c 'median p2p/osu' "$2") comparisons; $(grep -c 'failed (' "$2") failed" ;;
    *) grep -m1 'error:' "$2" || grep -v '^$' "$2" | tail -n 1 ;;
  esac
}

case ${1:-} in
  pack) pack ;;
  check) shift; check "$@" ;;
  *) die "usage: bash scripts/gpu-kit.sh pack | check [PART...]" ;;
esac
