#include "grid/planes.hpp"

namespace checkmpi {

MPI_Datatype make_plane_datatype(const Grid& g, int dir, MPI_Datatype real) {
  const auto e = g.extent();
  MPI_Datatype t;
  if (dir == 0)  // yz plane: single points l+2 apart
    MPI_Type_vector(int(e[1] * e[2]), 1, int(e[0]), real, &t);
  else if (dir == 1)  // xz plane: n+2 rows of l+2, one xy plane apart
    MPI_Type_vector(int(e[2]), int(e[0]), int(e[0] * e[1]), real, &t);
  else  // xy plane: contiguous
    MPI_Type_contiguous(int(e[0] * e[1]), real, &t);
  MPI_Type_commit(&t);
  return t;
}

}  // namespace checkmpi
