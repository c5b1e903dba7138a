# shellcheck shell=bash
# Sourced by the halo benches: `mpiexec`, the launcher of the MPI library the
# binaries were built with (MPIEXEC, default mpiexec), and `launcher_flags NP
# [THREADS]`, the flags that place NP ranks of THREADS OpenMP threads (default
# OMP_NUM_THREADS, else 1) the same way with either library:
# - where the threads fit on this machine's CPUs, each rank gets THREADS cores
#   (Open MPI's default would bind a rank to one core up to 2 ranks, its
#   threads then taking turns there);
# - else as Open MPI does by default: --oversubscribe, a core per rank up to 2
#   ranks, a socket above. MPICH's hydra binds nothing unless told, and
#   unbound ranks of several threads on a full machine take each other's CPUs
#   (2 ranks x 2 threads of 128^3 on 2 CPUs: 16 ms a step unbound, 2.3 bound).
mpiexec=${MPIEXEC:-mpiexec}
launcher_version=$("$mpiexec" --version 2>&1 || true)  # asked once: the benches call launcher_flags per run
launcher_flags() {
  local np=$1 threads=${2:-${OMP_NUM_THREADS:-1}} fits=0
  [ "$threads" -gt 1 ] && [ $((np * threads)) -le "$(nproc)" ] && fits=1
  if grep -Eq "Open MPI|OpenRTE" <<<"$launcher_version"; then
    if [ $fits = 1 ]; then echo "--oversubscribe --map-by slot:PE=$threads"; else echo --oversubscribe; fi
  elif grep -q HYDRA <<<"$launcher_version"; then
    if [ $fits = 1 ]; then
      echo "-bind-to core:$threads"
    elif [ "$np" -le 2 ]; then
      echo "-bind-to core"
    else
      echo "-bind-to socket"
    fi
  fi
}
