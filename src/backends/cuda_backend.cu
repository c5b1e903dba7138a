// CUDA implementation of the kernel API: fields, temporaries and message
// buffers in device memory, one stream per queue, and kernels that only move
// values (loads and stores, no arithmetic), so every result is bit-identical
// to the host backend's.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda.hpp"
#include "backends/plane_kernels.hpp"
#include "core/errors.hpp"

namespace checkmpi {

namespace {

// Every CUDA call is checked: a failure becomes one line naming the call and
// CUDA's reason, thrown as std::runtime_error. checkmpi-halo reports it as an
// internal error and aborts the job, so a failing rank never leaves the
// others waiting in MPI. Launch errors are caught right after each launch;
// errors inside a kernel surface at the next synchronisation (wait, upload,
// download).
void check(cudaError_t err, const char* call, int line) {
  if (err == cudaSuccess) return;
  throw std::runtime_error(std::string("CUDA error: ") + call + " (cuda_backend.cu:" + std::to_string(line) +
                           "): " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}
#define CHECKMPI_CUDA(call) check((call), #call, __LINE__)

// Up to kGroup fields' pointers, fields first .. first + count - 1, in a
// form a kernel can take by value and index on the device (std::vector's
// operator[] is host code). Kernels run over the fields a group at a time:
// CheckMPI's three in one launch.
constexpr int kGroup = 3;
template <class T>
struct Group {
  T* p[kGroup];
  int first, count;
};
template <class T>
Group<T> group(const std::vector<T*>& f, int first, int end) {
  Group<T> g{};
  g.first = first;
  g.count = std::min(kGroup, end - first);
  for (int i = 0; i < g.count; ++i) g.p[i] = f[std::size_t(first + i)];
  return g;
}

// Every kernel works on rows: x (a row's cells, or a plane's columns) runs
// across the threads of a block, so a warp touches 32 consecutive elements;
// rows are blockIdx.y and layers blockIdx.z, each looping over the grid so
// any size fits the 65535 limit of those two. Each thread moves its cell of
// a group's fields (three independent loads in flight).
struct Launch {
  dim3 grid, threads;
};
Launch rows_launch(long long x, long long y, long long z) {
  // Whole warps; short rows (small test grids) get one warp.
  const unsigned tx = unsigned(std::min<long long>(128, (x + 31) / 32 * 32));
  return {dim3(unsigned((x + tx - 1) / tx), unsigned(std::min<long long>(y, 65535)),
               unsigned(std::min<long long>(z, 65535))),
          dim3(tx)};
}

// A message buffer holds the fields' blocks one after another, each layer
// by layer, row by row, columns fastest (the host backend's layout). The
// buffer side is always coalesced; the field side is too for y and z planes
// (col_stride 1), and strided by a row length for x planes, which no layout
// avoids.
template <class Real>
__global__ void pack_kernel(Group<Real> f, Plane p, Real* buf) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (c >= p.cols) return;
  for (std::size_t r = blockIdx.y; r < p.layers * p.rows; r += gridDim.y)
    for (int i = 0; i < f.count; ++i) pack_columns<Real>(f.p[i], p, buf, f.first + i, r, c, c + 1);
}

template <class Real>
__global__ void unpack_kernel(const Real* buf, Plane p, Group<Real> f) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (c >= p.cols) return;
  for (std::size_t r = blockIdx.y; r < p.layers * p.rows; r += gridDim.y)
    for (int i = 0; i < f.count; ++i) unpack_columns(buf, p, f.p[i], f.first + i, r, c, c + 1);
}

// Block `to` of dst takes block `from` of src, a group's fields.
template <class Real>
__global__ void plane_kernel(Group<Real> dst, Plane to, Group<Real> src, Plane from) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (c >= from.cols) return;
  for (std::size_t r = blockIdx.y; r < from.layers * from.rows; r += gridDim.y)
    for (int i = 0; i < dst.count; ++i) copy_plane_columns(dst.p[i], to, src.p[i], from, r, c, c + 1);
}

// Boxes of cells, one per field of a group, and where each field's source
// is: dst_f(c) = src_f(c + offset[f]) (0 for copy_box, the motion's offset
// for shift; a one-cell offset in x only moves a warp's read window). The
// grid covers the largest box; each thread moves its cell of every field
// whose box holds it. The fields' loop is unrolled and every load issued
// before the first store: with a loop over `count` and a store after each
// load, the compiler must assume a store may change the next field's source,
// so a thread had one load in flight: 1225 GB/s on an H200 at 256^3 single,
// 2897 GB/s with three (docs/gpu.md, "Recorded results"). Sources are never
// written by the same launch (dst and src are different arrays, or the same
// cell with offset 0), so they go through the read-only cache. `base` is the
// index of cell (0, 0, 0) of the field's index space: lo holds coordinates.
struct BoxArgs {
  long long lo[kGroup][3];  // [field][direction]
  long long n[kGroup][3];   // cells along x, y, z
  long long base, sy, sz;   // index of (0, 0, 0); strides of j and k
  long long offset[kGroup];
};

template <class Real>
__global__ void box_kernel(Group<Real> dst, Group<Real> src, BoxArgs a, long long nx, long long ny,
                           long long nz) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= nx) return;
  for (long long j = blockIdx.y; j < ny; j += gridDim.y)
    for (long long k = blockIdx.z; k < nz; k += gridDim.z) {
      Real v[kGroup];
      long long c[kGroup];
      bool in[kGroup];
#pragma unroll
      for (int f = 0; f < kGroup; ++f) {
        in[f] = f < dst.count && i < a.n[f][0] && j < a.n[f][1] && k < a.n[f][2];
        c[f] = a.base + (a.lo[f][0] + i) + (a.lo[f][1] + j) * a.sy + (a.lo[f][2] + k) * a.sz;
        if (in[f]) v[f] = __ldg(src.p[f] + c[f] + a.offset[f]);
      }
#pragma unroll
      for (int f = 0; f < kGroup; ++f)
        if (in[f]) dst.p[f][c[f]] = v[f];
    }
}

template <class Real>
class CudaBackend final : public Backend<Real> {
 public:
  CudaBackend(int device, bool mpi_takes_device_memory)
      : device_(device), mpi_takes_device_memory_(mpi_takes_device_memory) {
    CHECKMPI_CUDA(cudaSetDevice(device));
    name_ = cuda_device_name(device);
    // Non-blocking streams: no implicit ordering with the legacy default
    // stream or with each other; queues order their own work only, as the
    // kernel API says.
    for (cudaStream_t& s : streams_) CHECKMPI_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  // Destructors must not throw, and after a CUDA error the context may be
  // unusable anyway: release paths ignore errors (the first one was thrown).
  ~CudaBackend() override {
    for (cudaStream_t s : streams_)
      if (s) (void)cudaStreamDestroy(s);
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  BackendKind kind() const override { return BackendKind::Cuda; }
  std::string describe() const override { return "cuda, " + name_ + " (device " + std::to_string(device_) + ")"; }

  // Zeroed like the host backend's memory, so nothing depends on leftovers.
  // cudaMemset runs on the legacy default stream, which the non-blocking
  // queues do not wait for: synchronise, or a first kernel on a queue could
  // run before the zeroing. Allocation happens before the timed loop.
  Real* allocate(std::size_t n) override {
    void* p = nullptr;
    CHECKMPI_CUDA(cudaMalloc(&p, bytes(n)));
    CHECKMPI_CUDA(cudaMemset(p, 0, bytes(n)));
    CHECKMPI_CUDA(cudaDeviceSynchronize());
    return static_cast<Real*>(p);
  }
  void release(Real* p) override { (void)cudaFree(p); }  // called from destructors: see ~CudaBackend
  // Pinned, so the staging copies are asynchronous DMA transfers.
  Real* allocate_host(std::size_t n) override {
    void* p = nullptr;
    CHECKMPI_CUDA(cudaMallocHost(&p, bytes(n)));
    std::memset(p, 0, bytes(n));
    return static_cast<Real*>(p);
  }
  void release_host(Real* p) override { (void)cudaFreeHost(p); }
  bool mpi_takes_backend_memory() const override { return mpi_takes_device_memory_; }

  // Blocking, and ordered with every queue: all work is finished before the
  // copy starts, and the copy is finished (a pageable upload may otherwise
  // still be in flight when cudaMemcpy returns) before the next kernel.
  void upload(Real* dst, const Real* src, std::size_t n) override { blocking_copy(dst, src, n); }
  void download(Real* dst, const Real* src, std::size_t n) override { blocking_copy(dst, src, n); }

  void copy(Real* dst, const Real* src, std::size_t n, int queue) override {
    if (dst != src) CHECKMPI_CUDA(cudaMemcpyAsync(dst, src, bytes(n), cudaMemcpyDefault, stream(queue)));
  }

  void pack(const Grid&, const FieldPtrs<Real>& f, const Plane& p, Real* buf, int queue, FieldRange which) override {
    const Launch l = rows_launch((long long)p.cols, (long long)(p.layers * p.rows), 1);
    const int end = which.end(int(f.size()));
    for (int first = which.first; first < end; first += kGroup) {
      pack_kernel<Real><<<l.grid, l.threads, 0, stream(queue)>>>(group(f, first, end), p, buf);
      CHECKMPI_CUDA(cudaGetLastError());
    }
  }

  void unpack(const Grid&, const Real* buf, const Plane& p, const FieldPtrs<Real>& f, int queue,
              FieldRange which) override {
    const Launch l = rows_launch((long long)p.cols, (long long)(p.layers * p.rows), 1);
    const int end = which.end(int(f.size()));
    for (int first = which.first; first < end; first += kGroup) {
      unpack_kernel<Real><<<l.grid, l.threads, 0, stream(queue)>>>(buf, p, group(f, first, end));
      CHECKMPI_CUDA(cudaGetLastError());
    }
  }

  void copy_plane(const Grid&, const FieldPtrs<Real>& dst, const Plane& to, const FieldPtrs<Real>& src,
                  const Plane& from, int queue) override {
    const Launch l = rows_launch((long long)from.cols, (long long)(from.layers * from.rows), 1);
    const int end = int(dst.size());
    for (int first = 0; first < end; first += kGroup) {
      plane_kernel<Real><<<l.grid, l.threads, 0, stream(queue)>>>(group(dst, first, end), to, group(src, first, end),
                                                                    from);
      CHECKMPI_CUDA(cudaGetLastError());
    }
  }

  void copy_box(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Box& b,
                int queue) override {
    const Box whole = whole_box(g);
    if (b.lo == whole.lo && b.hi == whole.hi) {  // the whole array: one long copy per field
      for (std::size_t f = 0; f < dst.size(); ++f) copy(dst[f], src[f], g.cells(), queue);
      return;
    }
    launch_box(g, dst, src, Boxes(dst.size(), b), std::vector<long long>(dst.size(), 0), queue);
  }

  // Exact boxes: no halo cell is written or read beyond what the boxes name.
  void shift(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Boxes& boxes,
             const Motion& m, int queue) override {
    std::vector<long long> offsets;
    for (const Offset& v : m.v) offsets.push_back(g.offset(v));
    launch_box(g, dst, src, boxes, offsets, queue);
  }

  void wait(int queue) override { CHECKMPI_CUDA(cudaStreamSynchronize(stream(queue))); }

 private:
  static std::size_t bytes(std::size_t n) { return n * sizeof(Real); }
  cudaStream_t stream(int queue) const { return streams_.at(std::size_t(queue)); }

  void blocking_copy(Real* dst, const Real* src, std::size_t n) {
    CHECKMPI_CUDA(cudaDeviceSynchronize());
    CHECKMPI_CUDA(cudaMemcpy(dst, src, bytes(n), cudaMemcpyDefault));
    CHECKMPI_CUDA(cudaDeviceSynchronize());
  }

  void launch_box(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Boxes& boxes,
                  const std::vector<long long>& offset, int queue) {
    const auto st = g.stride();
    const int fields = int(dst.size());
    for (int first = 0; first < fields; first += kGroup) {
      const Group<Real> to = group(dst, first, fields), from = group(src, first, fields);
      BoxArgs a{};
      long long most[3] = {0, 0, 0};
      for (int f = 0; f < to.count; ++f) {
        const Box& b = boxes[std::size_t(first + f)];
        for (int d = 0; d < 3; ++d) {
          a.lo[f][d] = b.lo[d];
          a.n[f][d] = b.empty() ? 0 : b.hi[d] - b.lo[d] + 1;
          most[d] = std::max(most[d], a.n[f][d]);
        }
        a.offset[f] = offset[std::size_t(first + f)];
      }
      if (most[0] == 0 || most[1] == 0 || most[2] == 0) continue;
      a.base = (long long)g.index(0, 0, 0);
      a.sy = (long long)st[1];
      a.sz = (long long)st[2];
      const Launch l = rows_launch(most[0], most[1], most[2]);
      box_kernel<Real><<<l.grid, l.threads, 0, stream(queue)>>>(to, from, a, most[0], most[1], most[2]);
      CHECKMPI_CUDA(cudaGetLastError());
    }
  }

  int device_;
  bool mpi_takes_device_memory_;
  std::string name_;
  std::array<cudaStream_t, kQueues> streams_{};
};

// Device memory and events of the probe, freed on every path out of it.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { CHECKMPI_CUDA(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { (void)cudaFree(p); }
};
struct Event {
  cudaEvent_t e{};
  Event() { CHECKMPI_CUDA(cudaEventCreate(&e)); }
  ~Event() { (void)cudaEventDestroy(e); }
};

}  // namespace

bool cuda_built() { return true; }

int cuda_device_count(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky, but leave no error behind for later checks
    if (why) *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return 0;
  }
  if (n == 0 && why) *why = "cudaGetDeviceCount found none";
  return n;
}

std::string cuda_device_name(int device) {
  cudaDeviceProp prop{};
  CHECKMPI_CUDA(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

std::size_t cuda_free_memory(int device) {
  CHECKMPI_CUDA(cudaSetDevice(device));
  std::size_t free = 0, total = 0;
  CHECKMPI_CUDA(cudaMemGetInfo(&free, &total));
  return free;
}

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(int device, bool mpi_takes_device_memory) {
  return std::make_unique<CudaBackend<Real>>(device, mpi_takes_device_memory);
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int, bool);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int, bool);

double cuda_memcpy_bandwidth(int device, std::size_t bytes) {
  CHECKMPI_CUDA(cudaSetDevice(device));
  DeviceBuffer a(bytes), b(bytes);
  CHECKMPI_CUDA(cudaMemset(a.p, 1, bytes));
  Event start, stop;
  // The first copy is a warm-up (first touch, clocks); then best of five.
  float best_ms = 0;
  for (int rep = 0; rep < 6; ++rep) {
    CHECKMPI_CUDA(cudaEventRecord(start.e));
    CHECKMPI_CUDA(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice));
    CHECKMPI_CUDA(cudaEventRecord(stop.e));
    CHECKMPI_CUDA(cudaEventSynchronize(stop.e));
    float ms = 0;
    CHECKMPI_CUDA(cudaEventElapsedTime(&ms, start.e, stop.e));
    if (rep == 1 || (rep > 1 && ms < best_ms)) best_ms = ms;
  }
  return best_ms > 0 ? 2.0 * double(bytes) / (double(best_ms) * 1e-3) : 0.0;
}

void* cuda_device_alloc(int device, std::size_t bytes) {
  CHECKMPI_CUDA(cudaSetDevice(device));
  void* p = nullptr;
  CHECKMPI_CUDA(cudaMalloc(&p, bytes > 0 ? bytes : 1));
  CHECKMPI_CUDA(cudaMemset(p, 0, bytes));
  return p;
}

void cuda_device_free(void* p) { (void)cudaFree(p); }  // from destructors: never throws

void* cuda_pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  CHECKMPI_CUDA(cudaMallocHost(&p, bytes > 0 ? bytes : 1));
  std::memset(p, 0, bytes);
  return p;
}

void cuda_pinned_free(void* p) { (void)cudaFreeHost(p); }

void cuda_copy(void* dst, const void* src, std::size_t bytes) {
  CHECKMPI_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

void cuda_copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                  std::size_t height) {
  CHECKMPI_CUDA(cudaMemcpy2D(dst, dst_pitch, src, src_pitch, width, height, cudaMemcpyDefault));
}

}  // namespace checkmpi
