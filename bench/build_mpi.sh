# Sourced by the p2p benches: the MPI of the build in $bin (its CMakeCache.txt),
# so that a reference program is compiled and launched with the same library
# as checkmpi-p2p. Sets mpiexec and mpicc (MPICC overrides), and run2 for two ranks.
cache="$bin/../CMakeCache.txt"
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$cache" 2>/dev/null || true)
mpicxx=$(sed -n 's/^MPI_CXX_COMPILER:[A-Z]*=//p' "$cache" 2>/dev/null || true)
mpiexec=${mpiexec:-mpiexec}
mpicc=${MPICC:-$(echo "${mpicxx:-mpicxx}" | sed 's/mpicxx/mpicc/')}
run2() { "$mpiexec" -n 2 "$@"; }
