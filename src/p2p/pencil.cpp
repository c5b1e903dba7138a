#include "p2p/pencil.hpp"

#include <algorithm>
#include <cstdio>

namespace checkmpi::p2p {

namespace {

Range intersect(const Range& a, const Range& b) {
  const long long start = std::max(a.start, b.start);
  const long long end = std::min(a.start + a.size, b.start + b.size);
  return {start, std::max(0LL, end - start)};
}

Box intersect(const Box& a, const Box& b) { return {intersect(a.x, b.x), intersect(a.y, b.y), intersect(a.z, b.z)}; }

// Counts and displacements of boxes laid one after another.
void lay_out(const std::vector<Box>& boxes, std::vector<int>& counts, std::vector<int>& displs) {
  long long at = 0;
  for (const Box& b : boxes) {
    counts.push_back(int(b.count()));
    displs.push_back(int(at));
    at += b.count();
  }
}

long long total(const std::vector<int>& counts) {
  long long sum = 0;
  for (int c : counts) sum += c;
  return sum;
}

// Visits the cells of `b` in x-fastest order.
template <class F>
void for_cells(const Box& b, F&& f) {
  for (long long k = b.z.start; k < b.z.start + b.z.size; ++k)
    for (long long j = b.y.start; j < b.y.start + b.y.size; ++j)
      for (long long i = b.x.start; i < b.x.start + b.x.size; ++i) f(i, j, k);
}

}  // namespace

Range part(long long n, int parts, int index) {
  const long long each = n / parts, smaller = parts - n % parts;  // the first `smaller` parts get `each`
  return {index * each + std::max(0LL, index - smaller), each + (index >= smaller ? 1 : 0)};
}

std::vector<Range> split(long long n, int parts) {
  std::vector<Range> out;
  for (int p = 0; p < parts; ++p) out.push_back(part(n, parts, p));
  return out;
}

std::string Grid3::text() const {
  return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
}

const char* transpose_name(Transpose t) { return t == Transpose::XtoY ? "x_to_y" : "y_to_z"; }

Box PencilGrid::box(Pencil p, int row, int col) const {
  const Range all_x{0, grid.nx}, all_y{0, grid.ny}, all_z{0, grid.nz};
  const Range x = part(grid.nx, p_row, row), z = part(grid.nz, p_col, col);
  switch (p) {
    case Pencil::X: return {all_x, part(grid.ny, p_row, row), z};
    case Pencil::Y: return {x, all_y, z};
    case Pencil::Z: return {x, part(grid.ny, p_col, col), all_z};
  }
  return {};
}

long long TransposePlan::send_total() const { return total(send_counts); }
long long TransposePlan::recv_total() const { return total(recv_counts); }

TransposePlan plan_transpose(const PencilGrid& g, Transpose t, int row, int col) {
  const bool x_to_y = t == Transpose::XtoY;
  const Pencil in = x_to_y ? Pencil::X : Pencil::Y, out = x_to_y ? Pencil::Y : Pencil::Z;
  TransposePlan plan;
  plan.from = g.box(in, row, col);
  plan.to = g.box(out, row, col);
  const int peers = x_to_y ? g.p_row : g.p_col;
  for (int d = 0; d < peers; ++d) {
    const int peer_row = x_to_y ? d : row, peer_col = x_to_y ? col : d;
    plan.send_boxes.push_back(intersect(plan.from, g.box(out, peer_row, peer_col)));
    plan.recv_boxes.push_back(intersect(plan.to, g.box(in, peer_row, peer_col)));
  }
  lay_out(plan.send_boxes, plan.send_counts, plan.send_displs);
  lay_out(plan.recv_boxes, plan.recv_counts, plan.recv_displs);
  return plan;
}

void pack(const TransposePlan& plan, const double* from, double* send) {
  for (int p = 0; p < plan.peers(); ++p) {
    double* out = send + plan.send_displs[size_t(p)];
    for_cells(plan.send_boxes[size_t(p)], [&](long long i, long long j, long long k) {
      *out++ = from[plan.from.offset(i, j, k)];
    });
  }
}

void unpack(const TransposePlan& plan, const double* recv, double* to) {
  for (int p = 0; p < plan.peers(); ++p) {
    const double* in = recv + plan.recv_displs[size_t(p)];
    for_cells(plan.recv_boxes[size_t(p)], [&](long long i, long long j, long long k) {
      to[plan.to.offset(i, j, k)] = *in++;
    });
  }
}

double cell_value(const Grid3& g, long long i, long long j, long long k, long long iteration) {
  return double(((k * g.ny + j) * g.nx + i) * 4 + (iteration & 3));
}

void fill_pencil(const Grid3& g, const Box& b, double* data, long long iteration) {
  for_cells(b, [&](long long i, long long j, long long k) { data[b.offset(i, j, k)] = cell_value(g, i, j, k, iteration); });
}

std::string check_pencil(const Grid3& g, const Box& b, const double* data, long long iteration) {
  std::string error;
  for_cells(b, [&](long long i, long long j, long long k) {
    const double want = cell_value(g, i, j, k, iteration), got = data[b.offset(i, j, k)];
    if (!error.empty() || got == want) return;
    char text[160];
    std::snprintf(text, sizeof text, "cell (%lld,%lld,%lld): expected %.17g, got %.17g", i, j, k, want, got);
    error = text;
  });
  return error;
}

}  // namespace checkmpi::p2p
