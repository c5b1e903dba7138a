// How a step's messages travel: the carrier of each transport part. The
// engine calls a carrier at fixed
// points of its schedule; the transport moves the wire buffers (or the
// fields, for datatypes and shared memory) and calls back into the engine
// to pack, unpack and copy locally.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "strategies/engine.hpp"

namespace checkmpi {

template <class Real>
class Carrier {
 public:
  virtual ~Carrier() = default;
  // Memory for the receive wire buffers that the carrier allocates itself
  // (an RMA window, from MPI_Win_allocate: Open MPI 4.1 cannot make a window
  // over user memory on one rank), or null for the engine's own. Before setup.
  virtual Real* receive_memory(Engine<Real>&, std::size_t /*elements*/) { return nullptr; }
  // Once, after the engine has its channels and buffers; untimed.
  virtual void setup(Engine<Real>&) {}
  // Whether MPI may be handed device memory (GPU-aware MPI) by this transport.
  virtual bool takes_device_memory() const { return false; }
  // Whether `c` goes through MPI (false: a shared-memory read, or no MPI at all).
  virtual bool through_mpi(const Engine<Real>& e, const Channel& c) const { return !e.local(c); }
  // MPI messages per step: one per channel through MPI, unless the carrier
  // bundles channels.
  virtual int messages(const Engine<Real>& e) const {
    int n = 0;
    for (const Channel& c : e.channels()) n += through_mpi(e, c);
    return n;
  }
  // Whether `c` is packed and unpacked (false: read straight from a neighbour).
  virtual bool carries(const Channel&) const { return true; }
  // What the results table should say about how it ran ("" if nothing).
  virtual std::string note() const { return ""; }

  // Schedule by-direction: the whole exchange of direction `dir`, packing and
  // unpacking included, inside the direction's timer.
  virtual void exchange_direction(Engine<Real>&, int /*dir*/) {}

  // Schedule all-at-once, in this order: begin; per direction (timed in it) its
  // packing, then post_recvs; per direction post_sends; post; (the overlapped
  // compute, which may ask all_arrived); finish, which must call e.arrived()
  // for every carried channel; synchronise (with --sync barrier).
  virtual void begin(Engine<Real>&) {}
  // A transport that packs as it sends (partitioned) packs here itself.
  virtual bool packs_itself() const { return false; }
  virtual void pack_direction(Engine<Real>&, int /*dir*/, bool /*async*/) {}
  virtual void post_recvs(Engine<Real>&, int /*dir*/) {}
  virtual void post_sends(Engine<Real>&, int /*dir*/) {}
  virtual void post(Engine<Real>&) {}
  // Whether every message to this rank has arrived, without waiting or
  // unpacking (it may progress them); asked only where tells_arrival().
  virtual bool tells_arrival() const { return false; }
  virtual bool all_arrived(Engine<Real>&) { return false; }
  virtual void finish(Engine<Real>& e) = 0;
  virtual void synchronise(Engine<Real>& e);
};

// The finish of carriers with one receive and one send request per channel
// (MPI_REQUEST_NULL where a channel is copied locally): every receive
// waited for and its channel handed to e.arrived(), all after one
// MPI_Waitall, or each as soon as it arrives (MPI_Waitany) with its unpack
// left running on its queue while the others are in flight; then the sends.
template <class Real>
void complete_channels(Engine<Real>& e, std::vector<MPI_Request>& recvs, std::vector<MPI_Request>& sends) {
  const int n = int(recvs.size());
  if (e.parts().completion == Completion::Waitall) {
    MPI_Waitall(n, recvs.data(), MPI_STATUSES_IGNORE);
    for (const Channel& c : e.channels()) e.arrived(c, true);
  } else {
    for (const Channel& c : e.channels())  // self-copied messages are here already
      if (e.local(c)) e.arrived(c, false);
    for (;;) {
      int i = MPI_UNDEFINED;
      MPI_Waitany(n, recvs.data(), &i, MPI_STATUS_IGNORE);
      if (i == MPI_UNDEFINED) break;
      e.arrived(e.channels()[std::size_t(i)], false);
    }
  }
  MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
}

template <class Real>
std::unique_ptr<Carrier<Real>> make_carrier(Transport kind);

// The carriers, by family (one file each).
template <class Real>
std::unique_ptr<Carrier<Real>> make_point_to_point_carrier(Transport kind);  // sendrecv ... persistent, mock
template <class Real>
std::unique_ptr<Carrier<Real>> make_collective_carrier(Transport kind);  // neighbourhood collectives
template <class Real>
std::unique_ptr<Carrier<Real>> make_rma_carrier(Transport kind);  // rma-fence, rma-pscw
template <class Real>
std::unique_ptr<Carrier<Real>> make_shm_carrier();
template <class Real>
std::unique_ptr<Carrier<Real>> make_partitioned_carrier();

}  // namespace checkmpi
