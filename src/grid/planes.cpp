#include "grid/planes.hpp"

namespace checkmpi {

// The plane's columns as one vector, its rows as a vector of those (or one
// contiguous run, or one longer vector, where the rows continue each
// other's pattern: CheckMPI's three planes), its layers as an hvector of
// planes.
MPI_Datatype make_plane_datatype(const Plane& p, MPI_Datatype real) {
  MPI_Aint lb = 0, size = 0;
  MPI_Type_get_extent(real, &lb, &size);
  MPI_Datatype plane;
  if (p.col_stride == 1 && p.row_stride == p.cols)  // rows one after another: contiguous
    MPI_Type_contiguous(int(p.rows * p.cols), real, &plane);
  else if (p.row_stride == p.cols * p.col_stride)  // strided points continuing from row to row
    MPI_Type_vector(int(p.rows * p.cols), 1, int(p.col_stride), real, &plane);
  else if (p.col_stride == 1)  // rows of contiguous runs
    MPI_Type_vector(int(p.rows), int(p.cols), int(p.row_stride), real, &plane);
  else {
    MPI_Datatype row;
    MPI_Type_vector(int(p.cols), 1, int(p.col_stride), real, &row);
    MPI_Type_create_hvector(int(p.rows), 1, MPI_Aint(p.row_stride) * size, row, &plane);
    MPI_Type_free(&row);
  }
  MPI_Datatype t = plane;
  if (p.layers > 1) {
    MPI_Type_create_hvector(int(p.layers), 1, MPI_Aint(p.layer_stride) * size, plane, &t);
    MPI_Type_free(&plane);
  }
  MPI_Type_commit(&t);
  return t;
}

}  // namespace checkmpi
