// Message buffers. MPI reads and writes data(); everything else that touches
// the bytes (filling, checking, packing) goes through Buffer, so that a
// device-memory buffer can later stage those through the host while MPI
// gets the device pointer (GPU-aware) or a host copy (staged).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "p2p/options.hpp"

namespace checkmpi::p2p {

// Where a message's payload lies in its buffer: `count` blocks of `block`
// bytes, `stride` bytes apart, the first `offset` bytes from the start. A
// contiguous message is one block.
struct Layout {
  std::size_t count = 1, block = 0, stride = 0, offset = 0;
  static Layout contiguous(std::size_t bytes, std::size_t offset = 0) { return {1, bytes, bytes, offset}; }
  static Layout of(const VectorShape& v);
  std::size_t payload() const { return count * block; }
  std::size_t extent() const { return count == 0 ? 0 : (count - 1) * stride + block; }  // from offset
};

// First wrong payload byte: its offset in the payload (packed order).
struct Mismatch {
  std::size_t offset = 0;
  unsigned expected = 0, got = 0;
};

// What a sender writes: byte `offset` of the payload for `seed`, the seed
// naming the sender, the iteration and the size, so stale or misrouted data
// is caught too.
std::uint64_t pattern_seed(int sender, long long iteration, long long size);
std::uint8_t pattern_byte(std::uint64_t seed, std::size_t offset);

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* data() = 0;
  virtual const void* data() const = 0;
  virtual std::size_t bytes() const = 0;
  virtual void fill(const Layout& l, std::uint64_t seed) = 0;
  virtual std::optional<Mismatch> check(const Layout& l, std::uint64_t seed) const = 0;
  // Flips every bit of one payload byte (test hook).
  virtual void corrupt(const Layout& l, std::size_t offset) = 0;
  // Copies the payload into `out`'s first l.payload() bytes, and back.
  virtual void pack(const Layout& l, Buffer& out) const = 0;
  virtual void unpack(const Layout& l, const Buffer& in) = 0;
};

// Page-aligned (as OSU's buffers) and zeroed, so every page is touched before
// any timing.
std::unique_ptr<Buffer> make_buffer(BufferKind kind, std::size_t bytes);

}  // namespace checkmpi::p2p
