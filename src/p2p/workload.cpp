#include "p2p/workload.hpp"

#include <algorithm>
#include <climits>

#include "p2p/pencil.hpp"

namespace checkmpi::p2p {

std::vector<long long> message_sizes(const P2PConfig& cfg) {
  std::vector<long long> sizes;
  for (long long s = cfg.min_size; s <= cfg.max_size; s = s == 0 ? 1 : 2 * s) sizes.push_back(s);
  return sizes;
}

std::vector<VectorShape> default_vector_sweep(long long min_size, long long max_size) {
  std::vector<VectorShape> sweep;
  const long long stride = 4;
  for (long long blocklen = 1; blocklen <= stride; ++blocklen)
    for (long long count = 1; count * blocklen * kElementBytes <= max_size; count *= 2) {
      const VectorShape v{count, blocklen, stride};
      if (v.payload_bytes() >= min_size && v.extent_bytes() <= INT_MAX) sweep.push_back(v);
    }
  return sweep;
}

std::string nbc_rank_problem(const P2PConfig& cfg, int nprocs) {
  const long long ranks = (long long)cfg.pencil_rows * cfg.pencil_cols;
  if (cfg.pencil_rows > 0 && ranks != nprocs)
    return "--pencil " + std::to_string(cfg.pencil_rows) + "x" + std::to_string(cfg.pencil_cols) + " needs " +
           std::to_string(ranks) + " MPI ranks, got " + std::to_string(nprocs);
  if (cfg.pencil_rows == 0 && double(cfg.max_size) * nprocs > double(INT_MAX))
    for (NbcOp op : cfg.ops)
      if (op == NbcOp::Ialltoall || op == NbcOp::Ialltoallv)
        return std::string(nbc_op_name(op)) + " of " + std::to_string(cfg.max_size) + " bytes to each of " +
               std::to_string(nprocs) + " ranks exceeds MPI's count limit " + std::to_string(INT_MAX);
  return "";
}

std::string rank_problem(const P2PConfig& cfg, int nprocs) {
  // Operations of whole floats (or of at least a byte) with no such size in -m: the run measured nothing, exit 0.
  bool none = false;
  if (cfg.mode == Mode::Coll)
    none = std::all_of(cfg.coll_ops.begin(), cfg.coll_ops.end(),
                       [&](CollOp op) { return coll_sizes(cfg, op).empty(); });
  else if (cfg.mode == Mode::Nbc && cfg.pencil_rows == 0)
    none = std::all_of(cfg.ops.begin(), cfg.ops.end(), [&](NbcOp op) { return nbc_sizes(cfg, op).empty(); });
  if (none)
    return "no size of -m " + std::to_string(cfg.min_size) + ":" + std::to_string(cfg.max_size) +
           " can be measured by the chosen --op (allreduce and reduce-scatter send whole floats of 4 bytes, the "
           "others at least 1 byte)";
  if (cfg.mode == Mode::MbwMr && nprocs % 2 != 0)
    return "mode mbw-mr pairs rank i with rank i + P/2: it needs an even number of ranks, got " +
           std::to_string(nprocs);
  if (cfg.mode == Mode::Coll && double(cfg.max_size) * nprocs > double(INT_MAX))
    for (CollOp op : cfg.coll_ops)
      if (op == CollOp::Alltoall || op == CollOp::Alltoallv || op == CollOp::Allgather)
        return std::string(coll_op_name(op)) + " of " + std::to_string(cfg.max_size) + " bytes to each of " +
               std::to_string(nprocs) + " ranks exceeds MPI's count limit " + std::to_string(INT_MAX);
  return "";
}

std::vector<long long> nbc_sizes(const P2PConfig& cfg, NbcOp op) {
  std::vector<long long> sizes;
  for (long long size : message_sizes(cfg))
    if (op != NbcOp::Iallreduce || (size >= 4 && size % 4 == 0)) sizes.push_back(size);  // whole floats, as OSU
  return sizes;
}

std::vector<long long> coll_sizes(const P2PConfig& cfg, CollOp op) {
  if (op == CollOp::Barrier) return {0};
  std::vector<long long> sizes;
  for (long long size : message_sizes(cfg)) {
    const bool floats = op == CollOp::Allreduce || op == CollOp::ReduceScatter;
    if (floats && (size < 4 || size % 4 != 0)) continue;  // whole floats only, as OSU
    if (size == 0) continue;
    sizes.push_back(size);
  }
  return sizes;
}

std::vector<long long> pencil_message_sizes(const P2PConfig& cfg) {
  std::vector<long long> sizes;
  for (const Grid3& grid : cfg.grids) {
    const PencilGrid g{grid, cfg.pencil_rows, cfg.pencil_cols};
    for (Transpose t : {Transpose::XtoY, Transpose::YtoZ}) {
      long long most = 0;
      for (int r = 0; r < cfg.pencil_rows; ++r)
        for (int c = 0; c < cfg.pencil_cols; ++c)
          most = std::max(most, plan_transpose(g, t, r, c).send_total() * static_cast<long long>(sizeof(double)));
      sizes.push_back(most);
    }
  }
  return sizes;
}

std::vector<int> barrier_ranks(int nprocs) {
  std::vector<int> ranks;
  for (int p = 2; p < nprocs; p *= 2) ranks.push_back(p);
  if (nprocs >= 2) ranks.push_back(nprocs);
  return ranks;
}

LoopCounts loop_counts(const P2PConfig& cfg, long long bytes) {
  if (bytes > cfg.large_threshold) return {cfg.warmup_large, cfg.iterations_large};
  return {cfg.warmup, cfg.iterations};
}

double buffer_bytes_per_rank(const P2PConfig& cfg, int nprocs) {
  const double m = double(cfg.max_size);
  switch (cfg.mode) {
    case Mode::Nbc: {
      double most = 2 * m;  // iallreduce: send and receive; ibcast: one
      for (NbcOp op : cfg.ops)
        if (op == NbcOp::Ialltoall || op == NbcOp::Ialltoallv) most = 2 * m * nprocs;
      if (cfg.pencil_rows > 0) {  // input and output pencils, send and receive buffers
        most = 0;
        for (const Grid3& grid : cfg.grids) {
          const PencilGrid g{grid, cfg.pencil_rows, cfg.pencil_cols};
          for (Pencil p : {Pencil::X, Pencil::Y, Pencil::Z})
            most = std::max(most, 4.0 * sizeof(double) * double(g.box(p, g.p_row - 1, g.p_col - 1).count()));
        }
      }
      return most;
    }
    case Mode::Ring: return 3 * m;  // one send and two receive buffers
    case Mode::Coll: return 2 * m * nprocs;  // all-to-all and allgather: a block per rank each way
    case Mode::PingPong: return 2 * m * cfg.threads;
    case Mode::Barrier: return 0;
    case Mode::Datatype: {
      double most = 0;
      for (const auto& v : cfg.vectors)
        most = std::max(most, 2.0 * double(v.extent_bytes()) + 2.0 * double(v.payload_bytes()));
      return most;
    }
    default: return 2 * m;
  }
}

}  // namespace checkmpi::p2p
