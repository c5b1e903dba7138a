// Message buffers. MPI reads and writes data(); everything else that touches
// the bytes (filling, checking, packing) goes through Buffer, so that a
// device-memory buffer (--buffer cuda) stages those through the host while MPI
// gets the device pointer (CUDA-aware MPI) or a pinned host copy (staged).
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
  // Staged device memory: data() is a pinned host copy, which stage_out
  // fills from the device before MPI sends it and stage_in writes back after
  // MPI received into it. Host buffers and CUDA-aware MPI: nothing to do.
  virtual bool staged() const { return false; }
  virtual void stage_out(std::size_t, std::size_t) {}  // offset, bytes
  virtual void stage_in(std::size_t, std::size_t) {}
  // The bytes [offset, offset + n) copied out of and into the buffer's own
  // memory (device memory for --buffer cuda).
  virtual void read(std::size_t offset, std::size_t n, void* to) const = 0;
  virtual void write(std::size_t offset, std::size_t n, const void* from) = 0;
};

// Page-aligned (as OSU's buffers) and zeroed, so every page is touched before
// any timing.
std::unique_ptr<Buffer> make_buffer(BufferKind kind, std::size_t bytes);

// A buffer where cfg puts them: host memory, or (--buffer cuda) zeroed memory
// of cfg.device, handed to MPI as cfg.mpi_device_buffers says.
std::unique_ptr<Buffer> make_buffer(const P2PConfig& cfg, std::size_t bytes);

// A buffer's staging around the MPI calls of a timed loop (see
// Buffer::staged); a no-op test otherwise.
class Staging {
 public:
  explicit Staging(Buffer& b) : buffer_(b), on_(b.staged()) {}
  void out(std::size_t bytes, std::size_t offset = 0) {
    if (on_) buffer_.stage_out(offset, bytes);
  }
  void in(std::size_t bytes, std::size_t offset = 0) {
    if (on_) buffer_.stage_in(offset, bytes);
  }

 private:
  Buffer& buffer_;
  const bool on_;
};

}  // namespace checkmpi::p2p
