// GoogleTest main for tests that call MPI (e.g. MPI_Dims_create): runs as an
// MPI singleton, so no launcher is needed.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  const int result = RUN_ALL_TESTS();
  MPI_Finalize();
  return result;
}
