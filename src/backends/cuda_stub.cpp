// cuda.hpp in a build without CUDA (-DCHECKMPI_ENABLE_CUDA=OFF, the default):
// no devices, and asking for the backend is a usage error.
#include "backends/cuda.hpp"
#include "core/errors.hpp"

namespace checkmpi {

namespace {
const char* const kNoCuda = "checkmpi was built without CUDA (configure with -DCHECKMPI_ENABLE_CUDA=ON)";
}

bool cuda_built() { return false; }

int cuda_device_count(std::string* why) {
  if (why) *why = kNoCuda;
  return 0;
}

std::string cuda_device_name(int) { throw UsageError(kNoCuda); }

std::size_t cuda_free_memory(int) { throw UsageError(kNoCuda); }

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(int, bool) {
  throw UsageError(kNoCuda);
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int, bool);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int, bool);

double cuda_memcpy_bandwidth(int, std::size_t) { throw UsageError(kNoCuda); }

void* cuda_device_alloc(int, std::size_t) { throw UsageError(kNoCuda); }
void cuda_device_free(void*) {}
void* cuda_pinned_alloc(std::size_t) { throw UsageError(kNoCuda); }
void cuda_pinned_free(void*) {}
void cuda_copy(void*, const void*, std::size_t) { throw UsageError(kNoCuda); }
void cuda_copy_2d(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) { throw UsageError(kNoCuda); }

}  // namespace checkmpi
