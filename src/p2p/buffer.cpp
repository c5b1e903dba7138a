#include "p2p/buffer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "backends/cuda.hpp"

namespace checkmpi::p2p {

Layout Layout::of(const VectorShape& v) {
  return {std::size_t(v.count), std::size_t(v.blocklen * kElementBytes), std::size_t(v.stride * kElementBytes)};
}

std::uint64_t pattern_seed(int sender, long long iteration, long long size) {
  std::uint64_t x = std::uint64_t(sender) * 0x9E3779B97F4A7C15ULL;
  x ^= std::uint64_t(iteration) * 0xBF58476D1CE4E5B9ULL;
  x ^= std::uint64_t(size) * 0x94D049BB133111EBULL;
  return x;
}

std::uint8_t pattern_byte(std::uint64_t seed, std::size_t offset) {
  std::uint64_t x = seed + std::uint64_t(offset) * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 31;
  return std::uint8_t(x >> 56);
}

namespace {

class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(std::size_t bytes) : bytes_(bytes) {
    const long page = ::sysconf(_SC_PAGESIZE);
    void* p = nullptr;
    if (::posix_memalign(&p, std::size_t(page > 0 ? page : 4096), bytes > 0 ? bytes : 1) != 0)
      throw std::bad_alloc();
    data_ = static_cast<unsigned char*>(p);
    std::memset(data_, 0, bytes);
  }
  ~HostBuffer() override { std::free(data_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() override { return data_; }
  const void* data() const override { return data_; }
  std::size_t bytes() const override { return bytes_; }

  void fill(const Layout& l, std::uint64_t seed) override {
    for (std::size_t b = 0; b < l.count; ++b)
      for (std::size_t i = 0; i < l.block; ++i) data_[l.offset + b * l.stride + i] = pattern_byte(seed, b * l.block + i);
  }

  std::optional<Mismatch> check(const Layout& l, std::uint64_t seed) const override {
    for (std::size_t b = 0; b < l.count; ++b)
      for (std::size_t i = 0; i < l.block; ++i) {
        const std::size_t k = b * l.block + i;
        const unsigned got = data_[l.offset + b * l.stride + i], want = pattern_byte(seed, k);
        if (got != want) return Mismatch{k, want, got};
      }
    return std::nullopt;
  }

  void corrupt(const Layout& l, std::size_t offset) override {
    data_[l.offset + (offset / l.block) * l.stride + offset % l.block] ^= 0xFF;
  }

  void pack(const Layout& l, Buffer& out) const override {
    auto* dst = static_cast<unsigned char*>(out.data());
    for (std::size_t b = 0; b < l.count; ++b) std::memcpy(dst + b * l.block, data_ + l.offset + b * l.stride, l.block);
  }

  void unpack(const Layout& l, const Buffer& in) override {
    const auto* src = static_cast<const unsigned char*>(in.data());
    for (std::size_t b = 0; b < l.count; ++b) std::memcpy(data_ + l.offset + b * l.stride, src + b * l.block, l.block);
  }

  void read(std::size_t offset, std::size_t n, void* to) const override { std::memcpy(to, data_ + offset, n); }
  void write(std::size_t offset, std::size_t n, const void* from) override { std::memcpy(data_ + offset, from, n); }

 private:
  std::size_t bytes_;
  unsigned char* data_ = nullptr;
};

// Device memory of one GPU; its bytes reach the host (fill, check) through
// a copy of the payload's extent, and pack and unpack are device-to-device
// strided copies. Staged: MPI's bytes are a pinned host copy.
class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(std::size_t bytes, int device, bool mpi_takes_device)
      : bytes_(bytes),
        device_(static_cast<unsigned char*>(cuda_device_alloc(device, bytes))),
        host_(mpi_takes_device ? nullptr : static_cast<unsigned char*>(cuda_pinned_alloc(bytes))) {}
  ~DeviceBuffer() override {
    cuda_device_free(device_);
    if (host_) cuda_pinned_free(host_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() override { return host_ ? host_ : device_; }
  const void* data() const override { return host_ ? host_ : device_; }
  std::size_t bytes() const override { return bytes_; }
  bool staged() const override { return host_ != nullptr; }
  void stage_out(std::size_t offset, std::size_t n) override { cuda_copy(host_ + offset, device_ + offset, n); }
  void stage_in(std::size_t offset, std::size_t n) override { cuda_copy(device_ + offset, host_ + offset, n); }
  void read(std::size_t offset, std::size_t n, void* to) const override { cuda_copy(to, device_ + offset, n); }
  void write(std::size_t offset, std::size_t n, const void* from) override { cuda_copy(device_ + offset, from, n); }

  void fill(const Layout& l, std::uint64_t seed) override {
    std::vector<unsigned char> bytes = extent(l);
    for (std::size_t b = 0; b < l.count; ++b)
      for (std::size_t i = 0; i < l.block; ++i) bytes[b * l.stride + i] = pattern_byte(seed, b * l.block + i);
    write(l.offset, bytes.size(), bytes.data());
  }

  std::optional<Mismatch> check(const Layout& l, std::uint64_t seed) const override {
    const std::vector<unsigned char> bytes = extent(l);
    for (std::size_t b = 0; b < l.count; ++b)
      for (std::size_t i = 0; i < l.block; ++i) {
        const std::size_t k = b * l.block + i;
        const unsigned got = bytes[b * l.stride + i], want = pattern_byte(seed, k);
        if (got != want) return Mismatch{k, want, got};
      }
    return std::nullopt;
  }

  void corrupt(const Layout& l, std::size_t offset) override {
    const std::size_t at = l.offset + (offset / l.block) * l.stride + offset % l.block;
    unsigned char byte = 0;
    read(at, 1, &byte);
    byte ^= 0xFF;
    write(at, 1, &byte);
  }

  // The payload into out's first bytes: one strided copy on the device.
  void pack(const Layout& l, Buffer& out) const override {
    auto& to = dynamic_cast<DeviceBuffer&>(out);
    if (l.count > 0) cuda_copy_2d(to.device_, l.block, device_ + l.offset, l.stride, l.block, l.count);
  }

  void unpack(const Layout& l, const Buffer& in) override {
    const auto& from = dynamic_cast<const DeviceBuffer&>(in);
    if (l.count > 0) cuda_copy_2d(device_ + l.offset, l.stride, from.device_, l.block, l.block, l.count);
  }

 private:
  std::vector<unsigned char> extent(const Layout& l) const {
    std::vector<unsigned char> bytes(l.extent());
    read(l.offset, bytes.size(), bytes.data());
    return bytes;
  }

  std::size_t bytes_;
  unsigned char* device_;
  unsigned char* host_;
};

}  // namespace

std::unique_ptr<Buffer> make_buffer(BufferKind, std::size_t bytes) { return std::make_unique<HostBuffer>(bytes); }

std::unique_ptr<Buffer> make_buffer(const P2PConfig& cfg, std::size_t bytes) {
  if (cfg.buffer == BufferKind::Cuda) return std::make_unique<DeviceBuffer>(bytes, cfg.device, cfg.mpi_device_buffers);
  return std::make_unique<HostBuffer>(bytes);
}

}  // namespace checkmpi::p2p
