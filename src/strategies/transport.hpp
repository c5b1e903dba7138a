// How a step's messages travel: the carrier of each transport, in Comb's
// spirit: post the receives of a set of channels, post their sends, wait for
// them, and (where the transport's traits say it tests) tell whether every
// receive is in. What a transport can do is data (TransportTraits, parts.hpp);
// the engine's schedules decide when to call, on which set, and do
// everything that is not MPI: packing, unpacking, --self-copy's local copies.
// A set may hold channels of other routes (Engine::route): a carrier passes
// over those that are not its to move.
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
  // Once, after the engine has its channels and buffers; untimed. A carrier
  // that reaches some neighbours without messages says so here (Engine::share).
  virtual void setup(Engine<Real>&) {}
  // What the results table should say about how it ran ("" if nothing).
  virtual std::string note() const { return ""; }

  // The calls of a step, each on a set of channels as the transport's grain
  // says (one channel, a direction's, or the step's: engine.hpp, Channels),
  // in this order: post_recvs, post_sends (every message of the set packed,
  // unless the transport packs as it sends), then, for all the sets posted
  // since the last wait, wait. wait returns once every receive of its set has
  // arrived, each handed to Engine::arrived as it arrives or all after, and
  // the sends are complete.
  virtual void post_recvs(Engine<Real>&, Channels) {}
  virtual void post_sends(Engine<Real>&, Channels) = 0;
  virtual void wait(Engine<Real>&, Channels) = 0;
  // Whether every receive posted has arrived, without waiting or unpacking
  // (it may progress them); asked only where the traits say it tests.
  virtual bool test(Engine<Real>&) { return false; }
};

// The requests of carriers with one receive and one send per channel
// (MPI_REQUEST_NULL where a channel has none), and their completion.
class RequestSet {
 public:
  RequestSet() = default;
  ~RequestSet();  // frees the persistent requests still held
  RequestSet(const RequestSet&) = delete;
  RequestSet& operator=(const RequestSet&) = delete;

  void resize(std::size_t channels);
  MPI_Request* recv(int channel) { return &recvs_[std::size_t(channel)]; }
  MPI_Request* send(int channel) { return &sends_[std::size_t(channel)]; }
  // MPI_Startall of the set's receives or sends (persistent or partitioned).
  void start_recvs(Channels set);
  void start_sends(Channels set);
  // Every receive of the set waited for and its channel handed to
  // e.arrived(): all after one MPI_Waitall, or (completion=waitany) each as
  // soon as it arrives, its unpack left running on its queue while the others
  // are in flight; then the set's sends.
  template <class Real>
  void complete(Engine<Real>& e, Channels set);
  // Whether every receive has arrived (MPI_Request_get_status, which leaves
  // the requests to complete()).
  bool all_received() const;

 private:
  std::vector<MPI_Request> recvs_, sends_;  // by channel
};

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
