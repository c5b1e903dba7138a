#include "p2p/buffer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

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

 private:
  std::size_t bytes_;
  unsigned char* data_ = nullptr;
};

}  // namespace

std::unique_ptr<Buffer> make_buffer(BufferKind, std::size_t bytes) { return std::make_unique<HostBuffer>(bytes); }

}  // namespace checkmpi::p2p
