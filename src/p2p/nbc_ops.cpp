#include "p2p/nbc_ops.hpp"

#include <algorithm>
#include <vector>

#include "p2p/buffer.hpp"
#include "p2p/modes.hpp"

namespace checkmpi::p2p {

namespace {

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

int size_of(MPI_Comm comm) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

std::string mismatch(const char* op, long long size, const Mismatch& m, int me, int from, long long iteration) {
  return format("%s: size %lld, offset %zu: expected 0x%02x, got 0x%02x (rank %d from rank %d, iteration %lld)", op,
                size, m.offset, m.expected, m.got, me, from, iteration);
}

// ialltoall and ialltoallv: `size` bytes to every rank, block d of the send
// buffer to rank d; each block has its own pattern (sender, receiver).
class AllToAll final : public Collective {
 public:
  AllToAll(bool v, long long size, MPI_Comm comm, long long damage)
      : v_(v), size_(size), comm_(comm), me_(rank_of(comm)), n_(size_of(comm)), damage_(damage),
        send_(make_buffer(BufferKind::Host, std::size_t(size * n_))),
        recv_(make_buffer(BufferKind::Host, std::size_t(size * n_))),
        counts_(std::size_t(n_), int(size)), displs_(std::size_t(n_)) {
    for (int d = 0; d < n_; ++d) displs_[std::size_t(d)] = int(size * d);
  }
  void blocking() override {
    if (v_)
      MPI_Alltoallv(send_->data(), counts_.data(), displs_.data(), MPI_CHAR, recv_->data(), counts_.data(),
                    displs_.data(), MPI_CHAR, comm_);
    else
      MPI_Alltoall(send_->data(), int(size_), MPI_CHAR, recv_->data(), int(size_), MPI_CHAR, comm_);
  }
  void post(MPI_Request* r) override {
    if (v_)
      MPI_Ialltoallv(send_->data(), counts_.data(), displs_.data(), MPI_CHAR, recv_->data(), counts_.data(),
                     displs_.data(), MPI_CHAR, comm_, r);
    else
      MPI_Ialltoall(send_->data(), int(size_), MPI_CHAR, recv_->data(), int(size_), MPI_CHAR, comm_, r);
  }
  void prepare(long long it) override {
    for (int d = 0; d < n_; ++d) send_->fill(block(d), seed(me_, d, it));
    if (me_ == 0 && it == 0 && damage_ >= 0) send_->corrupt(block(1), std::size_t(damage_));  // seen by rank 1
  }
  std::string verify(long long it) override {
    for (int s = 0; s < n_; ++s)
      if (const auto bad = recv_->check(block(s), seed(s, me_, it)))
        return mismatch(name, size_, *bad, me_, s, it);
    return "";
  }

 private:
  Layout block(int peer) const { return Layout::contiguous(std::size_t(size_), std::size_t(size_ * peer)); }
  std::uint64_t seed(int from, int to, long long it) const { return pattern_seed(from * n_ + to, it, size_); }

  bool v_;
  long long size_;
  MPI_Comm comm_;
  int me_, n_;
  long long damage_;
  std::unique_ptr<Buffer> send_, recv_;
  std::vector<int> counts_, displs_;
};

// iallreduce: the sum of size / 4 floats, small integers so that every sum
// is exact.
class AllReduce final : public Collective {
 public:
  AllReduce(long long size, MPI_Comm comm, long long damage)
      : size_(size), comm_(comm), me_(rank_of(comm)), n_(size_of(comm)), damage_(damage),
        send_(std::size_t(size / 4)), recv_(std::size_t(size / 4)) {}
  void blocking() override { MPI_Allreduce(send_.data(), recv_.data(), count(), MPI_FLOAT, MPI_SUM, comm_); }
  void post(MPI_Request* r) override {
    MPI_Iallreduce(send_.data(), recv_.data(), count(), MPI_FLOAT, MPI_SUM, comm_, r);
  }
  void prepare(long long it) override {
    for (std::size_t i = 0; i < send_.size(); ++i) send_[i] = value(me_, i, it);
    if (me_ == 0 && it == 0 && damage_ >= 0) reinterpret_cast<unsigned char*>(send_.data())[damage_] ^= 0xFF;
  }
  std::string verify(long long it) override {
    for (std::size_t i = 0; i < recv_.size(); ++i) {
      float want = 0;
      for (int r = 0; r < n_; ++r) want += value(r, i, it);
      if (recv_[i] != want)
        return format("%s: size %lld, element %zu: expected %g, got %g (rank %d, iteration %lld)", name, size_, i,
                      double(want), double(recv_[i]), me_, it);
    }
    return "";
  }

 private:
  int count() const { return int(send_.size()); }
  static float value(int rank, std::size_t i, long long it) { return float((rank + static_cast<long long>(i) * 7 + it) % 251); }

  long long size_;
  MPI_Comm comm_;
  int me_, n_;
  long long damage_;
  std::vector<float> send_, recv_;
};

// ibcast: `size` bytes from rank 0.
class Broadcast final : public Collective {
 public:
  Broadcast(long long size, MPI_Comm comm, long long damage)
      : size_(size), comm_(comm), me_(rank_of(comm)), damage_(damage),
        data_(make_buffer(BufferKind::Host, std::size_t(size))) {}
  void blocking() override { MPI_Bcast(data_->data(), int(size_), MPI_CHAR, 0, comm_); }
  void post(MPI_Request* r) override { MPI_Ibcast(data_->data(), int(size_), MPI_CHAR, 0, comm_, r); }
  void prepare(long long it) override {
    if (me_ != 0) return;
    data_->fill(layout(), pattern_seed(0, it, size_));
    if (it == 0 && damage_ >= 0) data_->corrupt(layout(), std::size_t(damage_));
  }
  std::string verify(long long it) override {
    if (me_ == 0) return "";
    const auto bad = data_->check(layout(), pattern_seed(0, it, size_));
    return bad ? mismatch(name, size_, *bad, me_, 0, it) : "";
  }

 private:
  Layout layout() const { return Layout::contiguous(std::size_t(size_)); }

  long long size_;
  MPI_Comm comm_;
  int me_;
  long long damage_;
  std::unique_ptr<Buffer> data_;
};

// allgather: `size` bytes from every rank, block r of the receive buffer from rank r.
class AllGather final : public Collective {
 public:
  AllGather(long long size, MPI_Comm comm, long long damage)
      : size_(size), comm_(comm), me_(rank_of(comm)), n_(size_of(comm)), damage_(damage),
        send_(make_buffer(BufferKind::Host, std::size_t(size))),
        recv_(make_buffer(BufferKind::Host, std::size_t(size * n_))) {}
  void blocking() override {
    MPI_Allgather(send_->data(), int(size_), MPI_CHAR, recv_->data(), int(size_), MPI_CHAR, comm_);
  }
  void post(MPI_Request* r) override {
    MPI_Iallgather(send_->data(), int(size_), MPI_CHAR, recv_->data(), int(size_), MPI_CHAR, comm_, r);
  }
  void prepare(long long it) override {
    const Layout mine = Layout::contiguous(std::size_t(size_));
    send_->fill(mine, pattern_seed(me_, it, size_));
    if (me_ == 0 && it == 0 && damage_ >= 0) send_->corrupt(mine, std::size_t(damage_));
  }
  std::string verify(long long it) override {
    for (int s = 0; s < n_; ++s)
      if (const auto bad = recv_->check(Layout::contiguous(std::size_t(size_), std::size_t(size_ * s)),
                                        pattern_seed(s, it, size_)))
        return mismatch("allgather", size_, *bad, me_, s, it);
    return "";
  }

 private:
  long long size_;
  MPI_Comm comm_;
  int me_, n_;
  long long damage_;
  std::unique_ptr<Buffer> send_, recv_;
};

// reduce-scatter: size / 4 floats summed over ranks, rank r keeping counts[r] of them.
class ReduceScatter final : public Collective {
 public:
  ReduceScatter(long long size, MPI_Comm comm, long long damage)
      : size_(size), comm_(comm), me_(rank_of(comm)), n_(size_of(comm)), damage_(damage),
        send_(std::size_t(size / 4)), counts_(std::size_t(n_)) {
    const long long floats = size / 4;
    long long offset = 0;
    for (int r = 0; r < n_; ++r) {
      counts_[std::size_t(r)] = int(floats / n_ + (r < floats % n_ ? 1 : 0));
      if (r < me_) offset += counts_[std::size_t(r)];
    }
    first_ = std::size_t(offset);
    recv_.resize(std::size_t(std::max(1, counts_[std::size_t(me_)])));
  }
  void blocking() override {
    MPI_Reduce_scatter(send_.data(), recv_.data(), counts_.data(), MPI_FLOAT, MPI_SUM, comm_);
  }
  void post(MPI_Request* r) override {
    MPI_Ireduce_scatter(send_.data(), recv_.data(), counts_.data(), MPI_FLOAT, MPI_SUM, comm_, r);
  }
  void prepare(long long it) override {
    for (std::size_t i = 0; i < send_.size(); ++i) send_[i] = value(me_, i, it);
    if (me_ == 0 && it == 0 && damage_ >= 0) reinterpret_cast<unsigned char*>(send_.data())[damage_] ^= 0xFF;
  }
  std::string verify(long long it) override {
    for (std::size_t i = 0; i < std::size_t(counts_[std::size_t(me_)]); ++i) {
      float want = 0;
      for (int r = 0; r < n_; ++r) want += value(r, first_ + i, it);
      if (recv_[i] != want)
        return format("reduce-scatter: size %lld, element %zu: expected %g, got %g (rank %d, iteration %lld)", size_,
                      first_ + i, double(want), double(recv_[i]), me_, it);
    }
    return "";
  }

 private:
  static float value(int rank, std::size_t i, long long it) {
    return float((rank + static_cast<long long>(i) * 7 + it) % 251);
  }

  long long size_;
  MPI_Comm comm_;
  int me_, n_;
  long long damage_;
  std::vector<float> send_, recv_;
  std::vector<int> counts_;
  std::size_t first_ = 0;
};

class Barrier final : public Collective {
 public:
  explicit Barrier(MPI_Comm comm) : comm_(comm) {}
  void blocking() override { MPI_Barrier(comm_); }
  void post(MPI_Request* r) override { MPI_Ibarrier(comm_, r); }
  void prepare(long long) override {}
  std::string verify(long long) override { return ""; }

 private:
  MPI_Comm comm_;
};

class PencilTranspose final : public Collective {
 public:
  PencilTranspose(const PencilGrid& g, Transpose t, MPI_Comm sub, int row, int col, long long damage)
      : g_(g), t_(t), sub_(sub), plan_(plan_transpose(g, t, row, col)), damage_(damage), world_rank_(row * g.p_col + col),
        from_(std::size_t(plan_.from.count())), to_(std::size_t(plan_.to.count())),
        send_(std::size_t(plan_.send_total())), recv_(std::size_t(plan_.recv_total())) {}
  void blocking() override {
    MPI_Alltoallv(send_.data(), plan_.send_counts.data(), plan_.send_displs.data(), MPI_DOUBLE, recv_.data(),
                  plan_.recv_counts.data(), plan_.recv_displs.data(), MPI_DOUBLE, sub_);
  }
  void post(MPI_Request* r) override {
    MPI_Ialltoallv(send_.data(), plan_.send_counts.data(), plan_.send_displs.data(), MPI_DOUBLE, recv_.data(),
                   plan_.recv_counts.data(), plan_.recv_displs.data(), MPI_DOUBLE, sub_, r);
  }
  void prepare(long long it) override {
    fill_pencil(g_.grid, plan_.from, from_.data(), it);
    pack(plan_, from_.data(), send_.data());
    std::fill(to_.begin(), to_.end(), -1.0);
    if (world_rank_ == 0 && it == 0 && damage_ >= 0 && damage_ < static_cast<long long>(send_.size() * sizeof(double)))
      reinterpret_cast<unsigned char*>(send_.data())[damage_] ^= 0xFF;
  }
  std::string verify(long long it) override {
    unpack(plan_, recv_.data(), to_.data());
    const std::string bad = check_pencil(g_.grid, plan_.to, to_.data(), it);
    if (bad.empty()) return "";
    return format("%s %s on %dx%d pencils: %s (rank %d, iteration %lld)", transpose_name(t_), g_.grid.text().c_str(),
                  g_.p_row, g_.p_col, bad.c_str(), world_rank_, it);
  }

 private:
  PencilGrid g_;
  Transpose t_;
  MPI_Comm sub_;
  TransposePlan plan_;
  long long damage_;
  int world_rank_;
  std::vector<double> from_, to_, send_, recv_;
};

}  // namespace

std::unique_ptr<Collective> make_collective(NbcOp op, long long size, MPI_Comm comm, long long damage) {
  std::unique_ptr<Collective> c;
  switch (op) {
    case NbcOp::Ialltoall: c = std::make_unique<AllToAll>(false, size, comm, damage); break;
    case NbcOp::Ialltoallv: c = std::make_unique<AllToAll>(true, size, comm, damage); break;
    case NbcOp::Iallreduce: c = std::make_unique<AllReduce>(size, comm, damage); break;
    case NbcOp::Ibcast: c = std::make_unique<Broadcast>(size, comm, damage); break;
  }
  if (c) c->name = nbc_op_name(op);
  return c;
}

std::unique_ptr<Collective> make_collective(CollOp op, long long size, MPI_Comm comm, long long damage) {
  std::unique_ptr<Collective> c;
  switch (op) {
    case CollOp::Allreduce: c = make_collective(NbcOp::Iallreduce, size, comm, damage); break;
    case CollOp::Alltoall: c = make_collective(NbcOp::Ialltoall, size, comm, damage); break;
    case CollOp::Alltoallv: c = make_collective(NbcOp::Ialltoallv, size, comm, damage); break;
    case CollOp::Bcast: c = make_collective(NbcOp::Ibcast, size, comm, damage); break;
    case CollOp::Allgather: c = std::make_unique<AllGather>(size, comm, damage); break;
    case CollOp::ReduceScatter: c = std::make_unique<ReduceScatter>(size, comm, damage); break;
    case CollOp::Barrier: c = std::make_unique<Barrier>(comm); break;
  }
  if (c) c->name = coll_op_name(op);  // the blocking call's name: what coll runs
  return c;
}

std::unique_ptr<Collective> make_transpose(const PencilGrid& g, Transpose t, MPI_Comm sub, int row, int col,
                                           long long damage) {
  return std::make_unique<PencilTranspose>(g, t, sub, row, col, damage);
}

}  // namespace checkmpi::p2p
