// Host implementation of the kernel API: every kernel runs to completion in
// the calling rank's OpenMP team, so queues and waits are no-ops. Rows are
// the unit of work: a row is contiguous in the fields (x fastest), so each is
// one memcpy, and rows are spread over the threads.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/backend.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace checkmpi {

int host_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_default_host_threads() {
#ifdef _OPENMP
  if (!std::getenv("OMP_NUM_THREADS")) omp_set_num_threads(1);
#endif
}

namespace {

// Splits n elements into one contiguous chunk per thread: large copies then
// run on every thread without per-element scheduling.
template <class Real>
void parallel_copy(Real* dst, const Real* src, std::size_t n) {
  const long chunks = host_threads();
#pragma omp parallel for schedule(static)
  for (long c = 0; c < chunks; ++c) {
    const std::size_t begin = n * std::size_t(c) / std::size_t(chunks);
    const std::size_t end = n * std::size_t(c + 1) / std::size_t(chunks);
    std::memcpy(dst + begin, src + begin, (end - begin) * sizeof(Real));
  }
}

template <class Real>
class HostBackend final : public Backend<Real> {
 public:
  BackendKind kind() const override { return BackendKind::Host; }
  std::string describe() const override {
    const int t = host_threads();
    return "host, " + std::to_string(t) + " OpenMP thread" + (t == 1 ? "" : "s") + " per rank";
  }
  bool host_accessible() const override { return true; }
  ~HostBackend() override {
    for (const Allocation& a : allocations_) delete[] a.raw;
  }
  Real* allocate(std::size_t n) override {
    const std::size_t shift = (576 * (1 + next_++ % 7)) / sizeof(Real);
    Real* raw = new Real[n + shift]();
    allocations_.push_back({raw, raw + shift});
    return raw + shift;
  }
  void release(Real* p) override {
    for (auto it = allocations_.begin(); it != allocations_.end(); ++it)
      if (it->data == p) {
        delete[] it->raw;
        allocations_.erase(it);
        return;
      }
  }
  Real* allocate_host(std::size_t n) override { return allocate(n); }
  void release_host(Real* p) override { release(p); }
  bool mpi_takes_backend_memory() const override { return true; }
  void upload(Real* dst, const Real* src, std::size_t n) override { copy(dst, src, n, 0); }
  void download(Real* dst, const Real* src, std::size_t n) override { copy(dst, src, n, 0); }

  void copy(Real* dst, const Real* src, std::size_t n, int) override {
    if (dst != src) parallel_copy(dst, src, n);
  }

  void pack(const Grid&, FieldPtrs<const Real> f, const Plane& p, Real* buf, int) override {
    const long rows = long(p.rows);
#pragma omp parallel for collapse(2) schedule(static)
    for (int field = 0; field < 3; ++field)
      for (long r = 0; r < rows; ++r)
        gather_row(f[field] + p.offset + std::size_t(r) * p.row_stride, p.col_stride, p.cols,
                   buf + std::size_t(field) * p.count() + std::size_t(r) * p.cols);
  }

  void unpack(const Grid&, const Real* buf, const Plane& p, FieldPtrs<Real> f, int) override {
    const long rows = long(p.rows);
#pragma omp parallel for collapse(2) schedule(static)
    for (int field = 0; field < 3; ++field)
      for (long r = 0; r < rows; ++r)
        scatter_row(buf + std::size_t(field) * p.count() + std::size_t(r) * p.cols, p.cols,
                    f[field] + p.offset + std::size_t(r) * p.row_stride, p.col_stride);
  }

  void copy_box(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src, const Box& b, int) override {
    const Box whole = whole_box(g);
    if (b.lo == whole.lo && b.hi == whole.hi) {  // the whole array: one long copy per field
      for (int f = 0; f < 3; ++f) parallel_copy(dst[f], src[f], g.cells());
      return;
    }
    rows(g, dst, src, b, {0, 0, 0});
  }

  void shift_box(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src, const Box& b, bool reverse,
                 int) override {
    // Field d reads one cell upstream along direction d: a fixed offset.
    const auto st = g.stride();
    const long s = reverse ? 1 : -1;
    rows(g, dst, src, b, {s * long(st[0]), s * long(st[1]), s * long(st[2])});
  }

  void wait(int) override {}

 private:
  // dst_f(c) = src_f(c + offset_f) for every cell c of the box, row by row,
  // one field at a time: two memory streams per thread, not six, keep the
  // hardware prefetchers on track.
  static void rows(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src, const Box& b,
                   std::array<long, 3> offset) {
    if (b.empty()) return;
    const std::size_t len = std::size_t(b.hi[0] - b.lo[0] + 1) * sizeof(Real);
#pragma omp parallel
    for (int f = 0; f < 3; ++f) {
#pragma omp for collapse(2) schedule(static)
      for (int k = b.lo[2]; k <= b.hi[2]; ++k)
        for (int j = b.lo[1]; j <= b.hi[1]; ++j) {
          const std::size_t c = g.index(b.lo[0], j, k);
          std::memcpy(dst[f] + c, src[f] + long(c) + offset[f], len);
        }
    }
  }

  // Large allocations start at the same offset within a 4 KiB page, so a
  // copy between two of them reads and writes addresses that look equal to
  // the CPU's store-to-load forwarding check (4K aliasing) and stalls. Each
  // allocation is shifted by a different multiple of 576 bytes (a whole
  // number of cache lines, never a multiple of 4 KiB) to break the pattern.
  struct Allocation {
    Real* raw;
    Real* data;
  };
  std::vector<Allocation> allocations_;
  unsigned next_ = 0;
};

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_host_backend() {
  return std::make_unique<HostBackend<Real>>();
}
template std::unique_ptr<Backend<float>> make_host_backend<float>();
template std::unique_ptr<Backend<double>> make_host_backend<double>();

}  // namespace checkmpi
