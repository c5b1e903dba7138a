// The 2D pencil decomposition of 2DECOMP&FFT (Incompact3d): counts and
// displacements of its all-to-all transposes, and packing. Pure functions,
// no MPI.
//
// A p_row x p_col grid of ranks; rank (row, col) holds
//   an X-pencil: all of x, y split over p_row, z split over p_col;
//   a Y-pencil:  x split over p_row, all of y, z split over p_col;
//   a Z-pencil:  x split over p_row, y split over p_col, all of z.
// X->Y exchanges among the p_row ranks of one column (same z range), Y->Z
// among the p_col ranks of one row (same x range).
#pragma once

#include <string>
#include <vector>

#include "core/saturating.hpp"

namespace checkmpi::p2p {

struct Range {
  long long start = 0, size = 0;
};

// 2DECOMP's distribute(): n / parts cells each, and the last n % parts parts
// one more. part() is split()'s entry `index`.
Range part(long long n, int parts, int index);
std::vector<Range> split(long long n, int parts);

struct Grid3 {
  long long nx = 0, ny = 0, nz = 0;
  long long cells() const { return sat_mul(sat_mul(nx, ny), nz); }  // LLONG_MAX past it
  std::string text() const;  // "NXxNYxNZ"
};

// A block of the global grid; local arrays store it with x fastest, then y.
struct Box {
  Range x, y, z;
  long long count() const { return sat_mul(sat_mul(x.size, y.size), z.size); }  // LLONG_MAX past it
  // Offset of global cell (i, j, k), which must lie inside, in the local array.
  long long offset(long long i, long long j, long long k) const {
    return ((k - z.start) * y.size + (j - y.start)) * x.size + (i - x.start);
  }
};

enum class Pencil { X, Y, Z };
enum class Transpose { XtoY, YtoZ };

const char* transpose_name(Transpose t);  // "x_to_y", "y_to_z"

struct PencilGrid {
  Grid3 grid;
  int p_row = 1, p_col = 1;
  Box box(Pencil p, int row, int col) const;
};

// One rank's MPI_Alltoallv for a transpose, over its sub-communicator: the
// column (p_row ranks, indexed by row) for X->Y, the row (p_col ranks,
// indexed by col) for Y->Z. Counts and displacements in elements; the block
// for each peer is packed in global x-fastest order.
struct TransposePlan {
  Box from, to;                          // this rank's input and output pencils
  std::vector<Box> send_boxes, recv_boxes;  // per peer, global coordinates
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  int peers() const { return int(send_boxes.size()); }
  long long send_total() const;  // elements
  long long recv_total() const;
};

TransposePlan plan_transpose(const PencilGrid& g, Transpose t, int row, int col);

// pack: the input pencil `from` into the send buffer, peer after peer;
// unpack: the receive buffer into the output pencil `to`.
void pack(const TransposePlan& plan, const double* from, double* send);
void unpack(const TransposePlan& plan, const double* recv, double* to);

// The value -c stores in global cell (i, j, k) at an iteration: exact in a
// double for grids up to 2^51 cells, different from one iteration to the next.
double cell_value(const Grid3& g, long long i, long long j, long long k, long long iteration);

// Fills a pencil with cell_value; check returns "" or the first wrong cell:
// "cell (i,j,k): expected V, got W".
void fill_pencil(const Grid3& g, const Box& b, double* data, long long iteration);
std::string check_pencil(const Grid3& g, const Box& b, const double* data, long long iteration);

}  // namespace checkmpi::p2p
