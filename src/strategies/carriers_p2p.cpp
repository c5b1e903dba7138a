// Point-to-point carriers: MPI_Sendrecv and MPI_Isend + MPI_Recv direction
// by direction (CheckMPI's step0-step6), MPI_Irecv + MPI_Isend with all six
// messages in flight (step7 on), the same on persistent requests, and mock,
// which moves the halos outside the measurement.
#include <vector>

#include "strategies/transport.hpp"

namespace checkmpi {

namespace {

template <class Real>
const Channel& channel(Engine<Real>& e, int i) {
  return e.channels()[std::size_t(i)];
}

template <class Real>
void isend(Engine<Real>& e, const Channel& c, MPI_Request* req) {
  const auto w = e.send_wire(c);
  const Decomposition& dec = e.state().dec;
  MPI_Isend(w.ptr, w.count, w.type, send_peer(dec, c.dir, c.sign), c.tag(), dec.comm, req);
}

template <class Real>
void irecv(Engine<Real>& e, const Channel& c, MPI_Request* req) {
  const auto w = e.recv_wire(c);
  const Decomposition& dec = e.state().dec;
  MPI_Irecv(w.ptr, w.count, w.type, recv_peer(dec, c.dir, c.sign), c.tag(), dec.comm, req);
}

// Schedule by-direction: per message pack, MPI_Sendrecv, unpack; or (isend
// directions) pack all, MPI_Isend all, MPI_Recv all, unpack all, then wait
// for the sends.
template <class Real>
class DirectionCarrier final : public Carrier<Real> {
 public:
  explicit DirectionCarrier(Transport kind) : kind_(kind) {}
  bool takes_device_memory() const override { return true; }
  void setup(Engine<Real>& e) override { sends_.resize(e.channels().size()); }

  void exchange_direction(Engine<Real>& e, int dir) override {
    const Decomposition& dec = e.state().dec;
    const std::vector<int>& ids = e.in_direction(dir);
    if (!(kind_ == Transport::IsendRecv || (kind_ == Transport::IsendRecvX && dir == 0))) {
      for (int i : ids) {
        const Channel& c = channel(e, i);
        e.pack(c);
        if (e.local(c)) {
          e.copy_locally(c);
        } else {
          const auto out = e.send_wire(c), in = e.recv_wire(c);
          MPI_Sendrecv(out.ptr, out.count, out.type, send_peer(dec, c.dir, c.sign), c.tag(), in.ptr, in.count,
                       in.type, recv_peer(dec, c.dir, c.sign), c.tag(), dec.comm, MPI_STATUS_IGNORE);
        }
        e.unpack(c);
      }
      return;
    }
    for (int i : ids) e.pack(channel(e, i));
    for (int i : ids) {
      sends_[std::size_t(i)] = MPI_REQUEST_NULL;
      if (e.local(channel(e, i))) e.copy_locally(channel(e, i));
      else isend(e, channel(e, i), &sends_[std::size_t(i)]);
    }
    for (int i : ids) {
      const Channel& c = channel(e, i);
      if (e.local(c)) continue;  // copied when the send was posted
      const auto in = e.recv_wire(c);
      MPI_Recv(in.ptr, in.count, in.type, recv_peer(dec, c.dir, c.sign), c.tag(), dec.comm, MPI_STATUS_IGNORE);
    }
    for (int i : ids) e.unpack(channel(e, i));
    MPI_Waitall(int(ids.size()), &sends_[std::size_t(ids.front())], MPI_STATUSES_IGNORE);
  }
  void finish(Engine<Real>&) override {}

 private:
  Transport kind_;
  std::vector<MPI_Request> sends_;  // by channel; a direction's channels are contiguous
};

// Schedule all-at-once on a request per message: MPI_Irecv/MPI_Isend every
// step, or persistent requests made once and started with MPI_Startall.
// Under --self-copy the send does the copy and no request is made.
template <class Real>
class RequestCarrier final : public Carrier<Real> {
 public:
  explicit RequestCarrier(bool persistent) : persistent_(persistent) {}
  ~RequestCarrier() override {
    for (auto* list : {&recvs_, &sends_})
      for (MPI_Request& r : *list)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  bool takes_device_memory() const override { return true; }

  void setup(Engine<Real>& e) override {
    recvs_.assign(e.channels().size(), MPI_REQUEST_NULL);
    sends_.assign(e.channels().size(), MPI_REQUEST_NULL);
    if (!persistent_) return;
    const Decomposition& dec = e.state().dec;
    for (const Channel& c : e.channels()) {
      if (e.local(c)) continue;
      const auto in = e.recv_wire(c), out = e.send_wire(c);
      MPI_Recv_init(in.ptr, in.count, in.type, recv_peer(dec, c.dir, c.sign), c.tag(), dec.comm,
                    &recvs_[std::size_t(c.index)]);
      MPI_Send_init(out.ptr, out.count, out.type, send_peer(dec, c.dir, c.sign), c.tag(), dec.comm,
                    &sends_[std::size_t(c.index)]);
    }
  }

  // --self-copy is per direction, so a direction's requests are all made or all absent.
  void post_recvs(Engine<Real>& e, int dir) override {
    const std::vector<int>& ids = e.in_direction(dir);
    if (e.local(channel(e, ids.front()))) return;
    if (persistent_) MPI_Startall(int(ids.size()), &recvs_[std::size_t(ids.front())]);
    else
      for (int i : ids) irecv(e, channel(e, i), &recvs_[std::size_t(i)]);
  }
  void post_sends(Engine<Real>& e, int dir) override {
    const std::vector<int>& ids = e.in_direction(dir);
    if (e.local(channel(e, ids.front()))) {
      for (int i : ids) e.copy_locally(channel(e, i));
    } else if (persistent_) {
      MPI_Startall(int(ids.size()), &sends_[std::size_t(ids.front())]);
    } else {
      for (int i : ids) isend(e, channel(e, i), &sends_[std::size_t(i)]);
    }
  }

  // MPI_Request_get_status leaves the requests to finish().
  bool tells_arrival() const override { return true; }
  bool all_arrived(Engine<Real>&) override {
    for (MPI_Request r : recvs_) {
      int flag = 1;
      MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
      if (!flag) return false;
    }
    return true;
  }

  void finish(Engine<Real>& e) override { complete_channels(e, recvs_, sends_); }

 private:
  bool persistent_;
  std::vector<MPI_Request> recvs_, sends_;  // by channel
};

// The floor: step7's packing, unpacking and compute with no MPI call in the
// measurement. The halos still arrive, by an exchange whose time is taken
// out of the timers (and the barrier of --sync barrier with it), so the
// results are validated like every other strategy's.
template <class Real>
class MockCarrier final : public Carrier<Real> {
 public:
  bool takes_device_memory() const override { return true; }  // as step7, whose packing it mirrors
  bool through_mpi(const Engine<Real>&, const Channel&) const override { return false; }
  void setup(Engine<Real>& e) override { requests_.assign(2 * e.channels().size(), MPI_REQUEST_NULL); }
  void finish(Engine<Real>& e) override {
    HaloState<Real>& s = e.state();
    {
      Untimed untimed(s.timers);
      const std::size_t n = e.channels().size();
      for (const Channel& c : e.channels())
        if (!e.local(c)) irecv(e, c, &requests_[std::size_t(c.index)]);
      for (const Channel& c : e.channels()) {
        if (e.local(c)) e.copy_locally(c);
        else isend(e, c, &requests_[n + std::size_t(c.index)]);
      }
      MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      if (s.options.barrier) MPI_Barrier(s.dec.comm);
    }
    for (const Channel& c : e.channels()) e.arrived(c, true);
  }
  void synchronise(Engine<Real>&) override {}  // done, untimed, in finish

 private:
  std::vector<MPI_Request> requests_;  // receives, then sends
};

}  // namespace

template <class Real>
std::unique_ptr<Carrier<Real>> make_point_to_point_carrier(Transport kind) {
  switch (kind) {
    case Transport::IsendIrecv:
      return std::make_unique<RequestCarrier<Real>>(false);
    case Transport::Persistent:
      return std::make_unique<RequestCarrier<Real>>(true);
    case Transport::Mock:
      return std::make_unique<MockCarrier<Real>>();
    default:
      return std::make_unique<DirectionCarrier<Real>>(kind);
  }
}
template std::unique_ptr<Carrier<float>> make_point_to_point_carrier<float>(Transport);
template std::unique_ptr<Carrier<double>> make_point_to_point_carrier<double>(Transport);

}  // namespace checkmpi
