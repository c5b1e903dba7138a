// Host implementation of the kernel API: every kernel runs to completion in
// the calling rank's OpenMP team, so queues and waits are no-ops. Work is
// split statically: a contiguous run into one chunk per thread, a box into
// equal ranges of its rows; allocate() first-touches memory the same way, so
// on a multi-socket node each thread's pages sit on its own socket.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backends/backend.hpp"
#include "backends/host_copy.hpp"
#include "backends/host_in_place.hpp"
#include "backends/host_runs.hpp"
#include "backends/plane_kernels.hpp"
#include "core/errors.hpp"

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

void check_host_threads() {
  const long long threads = host_threads();
  const long long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  long long most = kThreadsPerCpu * cpus;
  std::string why = std::to_string(kThreadsPerCpu) + " per CPU of this node's " + std::to_string(cpus);
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && (long long)limit.rlim_cur < most) {
    most = (long long)limit.rlim_cur;
    why = "RLIMIT_NPROC, the processes and threads this user may have";
  }
  if (threads > most)
    throw UsageError("OMP_NUM_THREADS=" + std::to_string(threads) + " is more threads per rank than this node runs: at most " +
                     std::to_string(most) + " (" + why + ")");
}

bool host_tuning() {
  static const bool on = [] {
    const char* v = std::getenv("CHECKMPI_PLAIN_KERNELS");
    return !v || !*v || std::string(v) == "0";
  }();
  return on;
}

namespace {

using namespace host;  // the runs, the spans and the team (host_runs.hpp)

// Page-aligned memory, not touched yet. Arrays of 2 MiB or more ask for
// transparent huge pages: an x plane takes one element from every row, and
// with 4 KiB pages nearly every element is a TLB miss too.
void* allocate_pages(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t(2) << 20;
  const bool huge = bytes >= kHuge && host_tuning();
  const std::size_t align = huge ? kHuge : 4096;
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) (void)::madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);
#endif
  return p;
}

template <class Real>
class HostBackend final : public Backend<Real> {
 public:
  BackendKind kind() const override { return BackendKind::Host; }
  std::string describe() const override {
    const int t = host_threads();
    return "host, " + std::to_string(t) + " OpenMP thread" + (t == 1 ? "" : "s") + " per rank";
  }
  ~HostBackend() override {
    for (const Allocation& a : allocations_) std::free(a.raw);
  }
  Real* allocate(std::size_t n) override {
    const std::size_t shift = 576 * (1 + next_++ % 7);  // bytes; see Allocation
    void* raw = allocate_pages(n * sizeof(Real) + shift);
    Real* data = reinterpret_cast<Real*>(static_cast<char*>(raw) + shift);
#pragma omp parallel
    {
      const Share mine = my_share(n);
      std::memset(data + mine.begin, 0, (mine.end - mine.begin) * sizeof(Real));
    }
    allocations_.push_back({raw, data});
    return data;
  }
  void release(Real* p) override {
    for (auto it = allocations_.begin(); it != allocations_.end(); ++it)
      if (it->data == p) {
        std::free(it->raw);
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
    if (dst == src) return;
    const Runs one{0, n, 1, 0, 1, 0};
#pragma omp parallel
    copy_runs(dst, src, 0, one, streams(n));
  }

  // The plane kernels: each iteration runs a row of the bodies the CUDA
  // backend runs a column of per thread (plane_kernels.hpp).
  // Too small a block for a team of threads runs in the caller's thread
  // without entering OpenMP at all (an if(false) parallel region still
  // costs its runtime call: 26 small edge and corner blocks a step).
  void pack(const Grid&, const FieldPtrs<Real>& f, const Plane& p, Real* buf, int, FieldRange which) override {
    const long rows = long(p.layers * p.rows);
    const int last = which.end(int(f.size()));
    const bool prefetch = host_tuning();
    const auto body = [&](int field, long r) {
      pack_columns(f[std::size_t(field)], p, buf, field, std::size_t(r), 0, p.cols, prefetch);
    };
    if (!threads_pay(p, last - which.first)) return serially(which.first, last, rows, body);
#pragma omp parallel for collapse(2) schedule(static)
    for (int field = which.first; field < last; ++field)
      for (long r = 0; r < rows; ++r) body(field, r);
  }

  void unpack(const Grid&, const Real* buf, const Plane& p, const FieldPtrs<Real>& f, int, FieldRange which) override {
    const long rows = long(p.layers * p.rows);
    const int last = which.end(int(f.size()));
    const bool prefetch = host_tuning();
    const auto body = [&](int field, long r) {
      unpack_columns(buf, p, f[std::size_t(field)], field, std::size_t(r), 0, p.cols, prefetch);
    };
    if (!threads_pay(p, last - which.first)) return serially(which.first, last, rows, body);
#pragma omp parallel for collapse(2) schedule(static)
    for (int field = which.first; field < last; ++field)
      for (long r = 0; r < rows; ++r) body(field, r);
  }

  void copy_plane(const Grid&, const FieldPtrs<Real>& dst, const Plane& to, const FieldPtrs<Real>& src,
                  const Plane& from, int) override {
    const long rows = long(from.layers * from.rows);
    const int fields = int(dst.size());
    const auto body = [&](int field, long r) {
      copy_plane_columns(dst[std::size_t(field)], to, src[std::size_t(field)], from, std::size_t(r), 0, from.cols);
    };
    if (!threads_pay(from, fields)) return serially(0, fields, rows, body);
#pragma omp parallel for collapse(2) schedule(static)
    for (int field = 0; field < fields; ++field)
      for (long r = 0; r < rows; ++r) body(field, r);
  }

  void copy_box(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Box& b, int) override {
    const Box whole = whole_box(g);
    const bool all = b.lo == whole.lo && b.hi == whole.hi;  // the whole array: one run per field
    const Runs rs = all ? Runs{0, g.cells(), 1, 0, 1, 0} : rows_of(g, b);
    const bool streaming = streams(rs.total() * dst.size());
#pragma omp parallel
    for (std::size_t f = 0; f < dst.size(); ++f) copy_runs(dst[f], src[f], 0, rs, streaming);
  }

  void shift(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Boxes& boxes,
             const Motion& m, int) override {
    // Field f reads a fixed offset away.
    std::vector<Runs> rs(boxes.size());
    std::size_t cells = 0;
    for (std::size_t f = 0; f < boxes.size(); ++f) {
      rs[f] = joined_runs(g, boxes[f]);
      cells += rs[f].total();
    }
    const bool streaming = streams(cells);
    // One field at a time: two memory streams per thread, not six, keep the
    // hardware prefetchers on track.
#pragma omp parallel
    for (std::size_t f = 0; f < boxes.size(); ++f) copy_runs(dst[f], src[f], g.offset(m.v[f]), rs[f], streaming);
  }

  void shift_shell(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Boxes& inner,
                   const Motion& m, int) override {
    shell_.resize(inner.size());
    std::size_t cells = 0;
    for (std::size_t f = 0; f < inner.size(); ++f) cells += shell_[f].around(g, inner[f]).before.back();
    const bool streaming = streams(cells);
#pragma omp parallel
    for (std::size_t f = inner.size(); f-- > 0;)
      copy_spans(dst[f], src[f], g.offset(m.v[f]), shell_[f].spans, shell_[f].before, streaming);
  }
  using Backend<Real>::shift_shell;

  // A field with one axis takes the kernels built for its lines (each
  // thread's pieces independent of the others') or the memory-order sweep,
  // as use_in_place_kernel says; a diagonal one the sweep, and a field at
  // rest nothing. Chosen: the sweep for a box as wide as the interior (one
  // stream per plane, or per box where it spans the planes' rows, the halo
  // cells between them overwritten on the way) on one thread, or where each
  // thread's share is at least kSweepShare; else the lines. The sweep's
  // threads wait for each other once per field (about 5 us on the VM of
  // docs/halo.md "Which in-place kernel"), the lines' never: there, on 2
  // threads, the sweep took 1.9x the lines' time at 32^3 and 1.3x at 64^3,
  // 0.93-0.98x from 128^3; on 1 thread 0.73-0.92x up to 128^3, 0.95-1.01x
  // at 256^3.
  bool use_in_place_kernel(InPlaceKernel k) override {
    kernel_ = k;
    return true;
  }
  void shift_in_place(const Grid& g, const FieldPtrs<Real>& f, const Boxes& boxes, const Motion& m, int) override {
#pragma omp parallel
    for (std::size_t k = 0; k < boxes.size(); ++k) shift_box(g, f[k], boxes[k], m, int(k));
  }

  // Every shell box of every field in one parallel region. The parts of a
  // field's shell read no cell another part writes, so each takes the kernel
  // shift_in_place would: where few slices ran before the halos were in, the
  // rest is a box of whole planes (or the whole field), which the sweep
  // moves faster than the lines on one thread (docs/halo.md, "Which in-place
  // kernel").
  void shift_shell_in_place(const Grid& g, const FieldPtrs<Real>& f, const Boxes& done, const Motion& m,
                            int) override {
    std::vector<std::vector<ShellPart>> shells(done.size());
    for (std::size_t k = 0; k < done.size(); ++k)
      if (m.axis(int(k)) >= 0) shells[k] = in_place_shell_parts(g, done[k], m.axis(int(k)), m.step(int(k)), host_threads());
#pragma omp parallel
    for (std::size_t k = 0; k < done.size(); ++k) {
      const int axis = m.axis(int(k));
      if (axis < 0) {
        if (order_of(m.v[k]) > 0) shift_rows_in_place(g, f[k], m.v[k], interior_box(g), done[k], thread_index(), team_size());
        continue;
      }
      for (const ShellPart& p : shells[k]) {
        if (p.gap_lo > p.gap_hi) shift_box(g, f[k], p.box, m, int(k), true);
        else shift_faces_in_place(g, f[k], axis, p.box, p.gap_lo, p.gap_hi, m.step(int(k)), thread_index(), team_size());
      }
    }
  }

  void wait(int) override {}

 private:
  // shift_shell's spans of one field for the last grid and inner box it was
  // given (an update cut short by the messages' arrival changes the box from
  // step to step only in the field it was cut in).
  struct Shell {
    std::array<int, 3> grid{};
    Box inner{{-1, -1, -1}, {-1, -1, -1}};
    std::vector<Span> spans;
    std::vector<std::size_t> before;
    const Shell& around(const Grid& g, const Box& box) {
      if (grid != g.interior() || inner.lo != box.lo || inner.hi != box.hi) {
        grid = g.interior();
        inner = box;
        spans = shell_spans(g, box);
        before.assign(1, 0);
        for (const Span& sp : spans) before.push_back(before.back() + sp.end - sp.begin);
      }
      return *this;
    }
  };
  std::vector<Shell> shell_;

  template <class Body>
  static void serially(int first, int last, long rows, const Body& body) {
    for (int field = first; field < last; ++field)
      for (long r = 0; r < rows; ++r) body(field, r);
  }

  // Whether a plane kernel over `fields` fields is worth a team of threads:
  // at least 1 MiB of memory to touch per thread (a whole cache line per
  // element of a strided plane). Below that, a parallel region's start and
  // end cost more than a second thread gains (1 rank of 128^3 on 2 threads:
  // y planes packed at 5.6 GB/s, against 8.3 on the hand loop's one thread).
  static bool threads_pay(const Plane& p, int fields) {
    const std::size_t per_element = p.col_stride == 1 ? sizeof(Real) : 64;
    return p.count() * std::size_t(fields) * per_element >= (std::size_t(1) << 20) * std::size_t(host_threads());
  }

  // Field k's cells in box b, in the calling thread's share: by the lines or
  // by the sweep (every thread of the team calls it; see shift_in_place).
  // In a shell (`part`), where the lines of another part of the field may
  // still be running, the sweep of several threads takes whole planes only:
  // the cells each thread keeps before the sweep's barrier (the row or plane
  // upstream of its share) then lie in the part or in the halo.
  void shift_box(const Grid& g, Real* a, const Box& b, const Motion& m, int k, bool part = false) const {
    const int axis = m.axis(k);
    const bool wide = b.lo[0] == 1 && b.hi[0] == g.l;
    const bool planes = wide && b.lo[1] == 1 && b.hi[1] == g.m;
    const int T = team_size();
    const bool sweep = (kernel_ == InPlaceKernel::Sweep ||
                        (kernel_ == InPlaceKernel::Chosen && wide &&
                         (T == 1 || b.cells() * sizeof(Real) >= kSweepShare * std::size_t(T)))) &&
                       (!part || T == 1 || planes);
    const Offset& v = m.v[std::size_t(k)];
    if (axis >= 0 && !sweep) shift_box_in_place(g, a, axis, b, m.step(k), thread_index(), T);
    else if (order_of(v) > 0) shift_rows_in_place(g, a, v, b, Box{}, thread_index(), T);
  }

  // Streaming (non-temporal) stores when a kernel writes more than the
  // caches could keep for the next step: they skip the read-for-ownership
  // of every destination line, a third of a cached copy's memory traffic.
  static bool streams(std::size_t elements) { return elements * sizeof(Real) >= kStreamingBytes; }

  // Large allocations start at the same offset within a 4 KiB page, so a
  // copy between two of them reads and writes addresses that look equal to
  // the CPU's store-to-load forwarding check (4K aliasing) and stalls. Each
  // allocation is shifted by a different multiple of 576 bytes (a whole
  // number of cache lines, never a multiple of 4 KiB) to break the pattern.
  struct Allocation {
    void* raw;
    Real* data;
  };
  std::vector<Allocation> allocations_;
  unsigned next_ = 0;
  InPlaceKernel kernel_ = InPlaceKernel::Chosen;
  static constexpr std::size_t kSweepShare = std::size_t(2) << 20;  // bytes per thread
};

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_host_backend() {
  return std::make_unique<HostBackend<Real>>();
}
template std::unique_ptr<Backend<float>> make_host_backend<float>();
template std::unique_ptr<Backend<double>> make_host_backend<double>();

}  // namespace checkmpi
