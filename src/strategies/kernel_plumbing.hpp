// What the kernel strategies (step3-step10) share: one message buffer per
// direction and sign for each way, packed and unpacked by backend kernels;
// the blocking and non-blocking MPI calls on them; self-exchanges done as
// local copies under --self-copy; and the two-pass compute of CheckMPI's FAST
// variant. Each strategy file then states only its own order of these steps.
#pragma once

#include <array>
#include <utility>

#include "strategies/strategy.hpp"

namespace checkmpi {

template <class Real>
class KernelStrategy : public Strategy<Real> {
 public:
  ~KernelStrategy() override {
    if (!backend_) return;
    for (auto& by_dir : messages_)
      for (auto& by_sign : by_dir)
        for (Message& m : by_sign) {
          if (m.wire != m.data) backend_->release_host(m.wire);
          backend_->release(m.data);
        }
    for (Real* t : owned_temp_) backend_->release(t);
  }

  void setup(HaloState<Real>& s) override {
    backend_ = &s.backend;
    const Grid& g = s.grid;
    staged_ = s.backend.kind() != BackendKind::Host && !(direct_mpi() && s.backend.mpi_takes_backend_memory());
    for (int dir = 0; dir < 3; ++dir)
      for (int sign : {Up, Down})
        for (Message& m : messages_[dir][sign]) {
          m.count = 3 * plane_count(g, dir);
          m.data = s.backend.allocate(m.count);
          m.wire = staged_ ? s.backend.allocate_host(m.count) : m.data;
        }
    for (Real*& t : owned_temp_) t = s.backend.allocate(g.cells());
    temp_ = owned_temp_;
  }

  std::string mpi_buffers(const HaloState<Real>& s) const override {
    if (s.backend.kind() == BackendKind::Host) return "host";
    return staged_ ? "staged" : "device";
  }

 protected:
  // Whether MPI gets the backend's buffers directly (step4 on) rather than
  // copies in host memory (step3).
  virtual bool direct_mpi() const { return true; }

  struct Message {
    Real* data = nullptr;  // backend memory, where the kernels pack and unpack
    Real* wire = nullptr;  // what MPI reads or writes: data itself, or a host copy
    std::size_t count = 0;
  };
  enum Way { Send = 0, Recv = 1 };
  Message& message(int dir, int sign, Way way) { return messages_[dir][sign][way]; }
  bool staged(const HaloState<Real>& s, int dir) const { return staged_ && !s.copies_locally(dir); }

  // Packs the three fields' plane into the send buffer, and stages it. With
  // `finish` false the work is left running on `queue`.
  void pack(HaloState<Real>& s, int dir, int sign, int queue, bool finish = true) {
    Timed t(s.timers.pack, &s.timers.pack_dir[dir]);
    Message& m = message(dir, sign, Send);
    s.backend.pack(s.grid, as_const(s.f), plane(s.grid, dir, send_index(s.grid, dir, sign)), m.data, queue);
    if (staged(s, dir)) s.backend.copy(m.wire, m.data, m.count, queue);
    if (finish) s.backend.wait(queue);
  }

  // Unstages the received buffer and unpacks it into the halo of `into`.
  void unpack(HaloState<Real>& s, int dir, int sign, FieldPtrs<Real> into, int queue, bool finish = true) {
    Timed t(s.timers.unpack, &s.timers.unpack_dir[dir]);
    Message& m = message(dir, sign, Recv);
    if (staged(s, dir)) s.backend.copy(m.data, m.wire, m.count, queue);
    s.backend.unpack(s.grid, m.data, plane(s.grid, dir, recv_index(s.grid, dir, sign)), into, queue);
    if (finish) s.backend.wait(queue);
  }

  // A self-exchange under --self-copy: the send buffer becomes the receive
  // buffer without MPI.
  void copy_locally(HaloState<Real>& s, int dir, int sign) {
    s.backend.copy(message(dir, sign, Recv).data, message(dir, sign, Send).data, message(dir, sign, Send).count,
                   direction_queue(dir));
    s.backend.wait(direction_queue(dir));
  }

  void sendrecv(HaloState<Real>& s, int dir, int sign) {
    if (s.copies_locally(dir)) return copy_locally(s, dir, sign);
    Message& out = message(dir, sign, Send);
    Message& in = message(dir, sign, Recv);
    const int tag = halo_tag(3, dir, sign);
    MPI_Sendrecv(out.wire, int(out.count), mpi_type<Real>(), send_peer(s.dec, dir, sign), tag, in.wire,
                 int(in.count), mpi_type<Real>(), recv_peer(s.dec, dir, sign), tag, s.dec.comm, MPI_STATUS_IGNORE);
  }

  // Non-blocking halves. Under --self-copy the send does the copy and both
  // requests stay MPI_REQUEST_NULL, which every MPI wait treats as complete.
  void post_recv(HaloState<Real>& s, int dir, int sign, MPI_Request* req) {
    *req = MPI_REQUEST_NULL;
    if (s.copies_locally(dir)) return;
    Message& in = message(dir, sign, Recv);
    MPI_Irecv(in.wire, int(in.count), mpi_type<Real>(), recv_peer(s.dec, dir, sign), halo_tag(3, dir, sign),
              s.dec.comm, req);
  }
  void post_send(HaloState<Real>& s, int dir, int sign, MPI_Request* req) {
    *req = MPI_REQUEST_NULL;
    if (s.copies_locally(dir)) return copy_locally(s, dir, sign);
    Message& out = message(dir, sign, Send);
    MPI_Isend(out.wire, int(out.count), mpi_type<Real>(), send_peer(s.dec, dir, sign), halo_tag(3, dir, sign),
              s.dec.comm, req);
  }
  void recv(HaloState<Real>& s, int dir, int sign) {
    if (s.copies_locally(dir)) return;  // copied when the send was posted
    Message& in = message(dir, sign, Recv);
    MPI_Recv(in.wire, int(in.count), mpi_type<Real>(), recv_peer(s.dec, dir, sign), halo_tag(3, dir, sign),
             s.dec.comm, MPI_STATUS_IGNORE);
  }

  // CheckMPI's FAST compute: copy the fields, halos included, into the
  // temporaries, then field(i) = temp(i-1) over the interior. Two passes
  // where the in-place shift needs one, but each pass is a plain parallel
  // copy with no read-after-write order to respect, which is what a GPU (or
  // any parallel loop) needs.
  void compute(HaloState<Real>& s) override {
    s.backend.copy_box(s.grid, temp_, as_const(s.f), whole_box(s.grid), kComputeQueue);
    s.backend.shift_box(s.grid, s.f, as_const(temp_), interior_box(s.grid), s.config.reverse, kComputeQueue);
    s.backend.wait(kComputeQueue);
  }

  // The temporaries (step10: the second buffer, which trades places with
  // the fields every step, so what is released is tracked apart).
  FieldPtrs<Real> temp_{};

 private:
  FieldPtrs<Real> owned_temp_{};
  Backend<Real>* backend_ = nullptr;
  bool staged_ = false;
  std::array<std::array<std::array<Message, 2>, 2>, 3> messages_{};  // [dir][sign][way]
};

// The exchange of step7 on: all six messages in flight at once. Packing and
// posting, and unpacking, are timed per direction; the wait belongs to no
// direction (it waits for all of them).
template <class Real>
class AllAtOnce : public KernelStrategy<Real> {
 protected:
  using Base = KernelStrategy<Real>;

  // Packs every direction and sign, posts all receives, then all sends. With
  // `async` each direction packs on its own queue and is waited for just
  // before its send, so packing one overlaps sending another.
  void start(HaloState<Real>& s, bool async) {
    for (int dir = 0; dir < 3; ++dir) {
      Timed t(s.timers.dir[dir]);
      for (int sign : {Up, Down}) this->pack(s, dir, sign, direction_queue(dir), !async);
      for (int sign : {Up, Down}) this->post_recv(s, dir, sign, &recvs_[2 * dir + sign]);
    }
    for (int dir = 0; dir < 3; ++dir) {
      Timed t(s.timers.dir[dir]);
      if (async) s.backend.wait(direction_queue(dir));
      for (int sign : {Up, Down}) this->post_send(s, dir, sign, &sends_[2 * dir + sign]);
    }
  }

  // Waits for the messages and unpacks them into the halos of `into`: all
  // after one MPI_Waitall, or each as soon as it arrives (MPI_Waitany) while
  // the others are still in flight, its unpack left running on its queue.
  void finish(HaloState<Real>& s, FieldPtrs<Real> into, bool as_they_arrive) {
    if (!as_they_arrive) {
      MPI_Waitall(6, recvs_.data(), MPI_STATUSES_IGNORE);
      for (int m = 0; m < 6; ++m) unpack_one(s, m, into, true);
    } else {
      // Self-copied messages are here already; the others come as they come.
      for (int m = 0; m < 6; ++m)
        if (s.copies_locally(m / 2)) unpack_one(s, m, into, false);
      for (;;) {
        int m = MPI_UNDEFINED;
        MPI_Waitany(6, recvs_.data(), &m, MPI_STATUS_IGNORE);
        if (m == MPI_UNDEFINED) break;
        unpack_one(s, m, into, false);
      }
    }
    MPI_Waitall(6, sends_.data(), MPI_STATUSES_IGNORE);
    if (s.config.sync == SyncMode::Barrier) MPI_Barrier(s.dec.comm);
  }

 private:
  void unpack_one(HaloState<Real>& s, int m, FieldPtrs<Real> into, bool finish) {
    const int dir = m / 2;
    Timed t(s.timers.dir[dir]);
    this->unpack(s, dir, m % 2, into, direction_queue(dir), finish);
  }

  std::array<MPI_Request, 6> recvs_{}, sends_{};  // index 2 * dir + sign
};

}  // namespace checkmpi
