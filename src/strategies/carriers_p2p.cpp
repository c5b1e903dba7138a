// Point-to-point carriers: MPI_Sendrecv and MPI_Isend + MPI_Recv direction
// by direction (CheckMPI's step0-step6), MPI_Irecv + MPI_Isend with all six
// messages in flight (step7 on), the same on persistent requests, and mock,
// which moves the halos outside the measurement.
#include <vector>

#include "strategies/transport.hpp"

namespace checkmpi {

namespace {

template <class Real>
void isend(Engine<Real>& e, const Channel& c, MPI_Request* req) {
  const auto w = e.send_wire(c);
  const Decomposition& dec = e.state().dec;
  MPI_Isend(w.ptr, w.count, w.type, send_peer(dec, c), c.tag, dec.comm, req);
}

template <class Real>
void irecv(Engine<Real>& e, const Channel& c, MPI_Request* req) {
  const auto w = e.recv_wire(c);
  const Decomposition& dec = e.state().dec;
  MPI_Irecv(w.ptr, w.count, w.type, recv_peer(dec, c), c.tag, dec.comm, req);
}

// Schedule by-direction, on sets of the transport's grain. sendrecv (a set
// of one message): one MPI_Sendrecv, in the wait, since a blocking exchange
// posts nothing. isend-recv (a direction's set): the MPI_Isend posted, then
// in the wait an MPI_Recv and its unpack per message, then the sends
// completed. isend-recv-x is the one in x, the other in y and z.
template <class Real>
class DirectionCarrier final : public Carrier<Real> {
 public:
  void setup(Engine<Real>& e) override { requests_.resize(e.channels().size()); }
  void post_sends(Engine<Real>& e, Channels set) override {
    if (sendrecv(e, set)) return;
    for (const Channel& c : set)
      if (e.through_mpi(c)) isend(e, c, requests_.send(c.index));
  }
  void wait(Engine<Real>& e, Channels set) override {
    const Decomposition& dec = e.state().dec;
    const bool together = sendrecv(e, set);
    for (const Channel& c : set) {
      if (!e.through_mpi(c)) continue;
      const auto in = e.recv_wire(c);
      if (together) {
        const auto out = e.send_wire(c);
        MPI_Sendrecv(out.ptr, out.count, out.type, send_peer(dec, c), c.tag, in.ptr, in.count,
                     in.type, recv_peer(dec, c), c.tag, dec.comm, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(in.ptr, in.count, in.type, recv_peer(dec, c), c.tag, dec.comm, MPI_STATUS_IGNORE);
      }
      e.arrived(c);
    }
    if (!together) MPI_Waitall(set.size(), requests_.send(set.index()), MPI_STATUSES_IGNORE);
  }

 private:
  static bool sendrecv(const Engine<Real>& e, Channels set) {
    return transport_traits(e.parts().transport).grain[set.first->dir] == Grain::Message;
  }
  RequestSet requests_;  // the sends of isend-recv
};

// Schedule all-at-once on a request per message: MPI_Irecv/MPI_Isend every
// step, or persistent requests made once and started with MPI_Startall.
template <class Real>
class RequestCarrier final : public Carrier<Real> {
 public:
  explicit RequestCarrier(bool persistent) : persistent_(persistent) {}

  void setup(Engine<Real>& e) override {
    requests_.resize(e.channels().size());
    if (!persistent_) return;
    const Decomposition& dec = e.state().dec;
    for (const Channel& c : e.channels()) {
      if (!e.through_mpi(c)) continue;
      const auto in = e.recv_wire(c), out = e.send_wire(c);
      MPI_Recv_init(in.ptr, in.count, in.type, recv_peer(dec, c), c.tag, dec.comm,
                    requests_.recv(c.index));
      MPI_Send_init(out.ptr, out.count, out.type, send_peer(dec, c), c.tag, dec.comm,
                    requests_.send(c.index));
    }
  }

  void post_recvs(Engine<Real>& e, Channels set) override {
    if (persistent_) return requests_.start_recvs(set);
    for (const Channel& c : set)
      if (e.through_mpi(c)) irecv(e, c, requests_.recv(c.index));
  }
  void post_sends(Engine<Real>& e, Channels set) override {
    if (persistent_) return requests_.start_sends(set);
    for (const Channel& c : set)
      if (e.through_mpi(c)) isend(e, c, requests_.send(c.index));
  }
  void wait(Engine<Real>& e, Channels set) override { requests_.complete(e, set); }
  bool test(Engine<Real>&) override { return requests_.all_received(); }

 private:
  bool persistent_;
  RequestSet requests_;
};

// The floor: step7's packing, unpacking and compute with no MPI call in the
// measurement. The halos still arrive, by an exchange in the wait whose time
// is taken out of the timers (and the barrier of --sync barrier with it),
// so the results are validated like every other strategy's.
template <class Real>
class MockCarrier final : public Carrier<Real> {
 public:
  void setup(Engine<Real>& e) override { requests_.resize(e.channels().size()); }
  void post_sends(Engine<Real>&, Channels) override {}
  void wait(Engine<Real>& e, Channels set) override {
    HaloState<Real>& s = e.state();
    {
      Untimed untimed(s.timers);
      for (const Channel& c : set)
        if (e.through_mpi(c)) irecv(e, c, requests_.recv(c.index));
      for (const Channel& c : set)
        if (e.through_mpi(c)) isend(e, c, requests_.send(c.index));
      MPI_Waitall(set.size(), requests_.recv(set.index()), MPI_STATUSES_IGNORE);
      MPI_Waitall(set.size(), requests_.send(set.index()), MPI_STATUSES_IGNORE);
      if (s.options.barrier) MPI_Barrier(s.dec.comm);
    }
    e.arrived(set);
  }

 private:
  RequestSet requests_;
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
      return std::make_unique<DirectionCarrier<Real>>();
  }
}
template std::unique_ptr<Carrier<float>> make_point_to_point_carrier<float>(Transport);
template std::unique_ptr<Carrier<double>> make_point_to_point_carrier<double>(Transport);

}  // namespace checkmpi
