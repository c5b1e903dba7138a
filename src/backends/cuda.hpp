// The CUDA backend as the rest of checkmpi sees it. Two files implement this
// header and CMake compiles exactly one of them (the only place the CUDA /
// no-CUDA split is made): cuda_backend.cu with -DCHECKMPI_ENABLE_CUDA=ON,
// cuda_stub.cpp otherwise. The runner and the strategies never need #ifdef.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace checkmpi {

// Whether this binary contains the CUDA backend.
bool cuda_built();

// Devices this process can use; 0 without CUDA, without a driver or without
// a device. `why`, when given, gets the reason for 0.
int cuda_device_count(std::string* why = nullptr);

// "NVIDIA H100 80GB HBM3".
std::string cuda_device_name(int device);

// Bytes of device memory still free on `device`. Without CUDA: throws UsageError.
std::size_t cuda_free_memory(int device);

// Fields and buffers in the memory of `device`. `mpi_takes_device_memory`
// is what mpi_takes_backend_memory() answers: GPU-aware MPI, and no --stage.
// Without CUDA: throws UsageError.
template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(int device, bool mpi_takes_device_memory);

// Raw memory for checkmpi-p2p --buffer cuda: zeroed device memory of
// `device`, zeroed pinned host memory, and synchronous copies between any two
// of them (cudaMemcpyDefault; 2D: `height` rows of `width` bytes, pitches
// apart). A CUDA failure throws std::runtime_error; without CUDA, allocating
// throws UsageError and freeing does nothing.
void* cuda_device_alloc(int device, std::size_t bytes);
void cuda_device_free(void* p);
void* cuda_pinned_alloc(std::size_t bytes);
void cuda_pinned_free(void* p);
void cuda_copy(void* dst, const void* src, std::size_t bytes);
void cuda_copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                  std::size_t height);

// Device-to-device cudaMemcpy bandwidth on two buffers of `bytes` bytes:
// bytes read + written per second, best of several, timed with events.
double cuda_memcpy_bandwidth(int device, std::size_t bytes);

}  // namespace checkmpi
