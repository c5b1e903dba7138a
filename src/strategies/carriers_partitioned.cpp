// MPI 4 partitioned communication: each message is made once with
// MPI_Psend_init/MPI_Precv_init, three partitions (one per field); every step
// the send is started and each field's partition is marked ready
// (MPI_Pready) as soon as the kernels have packed it, so the first field
// can travel while the others are packed. MPI libraries older than MPI 4
// (Open MPI 4.1) do not have it: the catalog lists the row as unavailable
// and this carrier is never made there.
#include <vector>

#include "core/errors.hpp"
#include "strategies/transport.hpp"

namespace checkmpi {

#if MPI_VERSION >= 4

namespace {

template <class Real>
class PartitionedCarrier final : public Carrier<Real> {
 public:
  ~PartitionedCarrier() override {
    for (auto* list : {&recvs_, &sends_})
      for (MPI_Request& r : *list)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }

  void setup(Engine<Real>& e) override {
    const Decomposition& dec = e.state().dec;
    recvs_.assign(e.channels().size(), MPI_REQUEST_NULL);
    sends_.assign(e.channels().size(), MPI_REQUEST_NULL);
    for (const Channel& c : e.channels()) {
      if (e.local(c)) continue;
      const auto in = e.recv_wire(c), out = e.send_wire(c);
      const MPI_Count per_field = in.count / 3;
      MPI_Precv_init(in.ptr, 3, per_field, in.type, recv_peer(dec, c.dir, c.sign), c.tag(), dec.comm,
                     MPI_INFO_NULL, &recvs_[std::size_t(c.index)]);
      MPI_Psend_init(out.ptr, 3, per_field, out.type, send_peer(dec, c.dir, c.sign), c.tag(), dec.comm,
                     MPI_INFO_NULL, &sends_[std::size_t(c.index)]);
    }
  }

  bool packs_itself() const override { return true; }
  void pack_direction(Engine<Real>& e, int dir, bool async) override {
    for (int i : e.in_direction(dir)) {
      const Channel& c = e.channels()[std::size_t(i)];
      if (e.local(c)) {
        e.pack(c, !async);
        continue;
      }
      MPI_Start(&sends_[std::size_t(i)]);
      for (int f = 0; f < 3; ++f) {
        e.pack(c, /*finish=*/true, FieldRange{f, 1});  // the partition must be in place before it is ready
        MPI_Pready(f, sends_[std::size_t(i)]);
      }
    }
  }
  void post_recvs(Engine<Real>& e, int dir) override {
    for (int i : e.in_direction(dir))
      if (!e.local(e.channels()[std::size_t(i)])) MPI_Start(&recvs_[std::size_t(i)]);
  }
  void post_sends(Engine<Real>& e, int dir) override {
    for (int i : e.in_direction(dir))
      if (e.local(e.channels()[std::size_t(i)])) e.copy_locally(e.channels()[std::size_t(i)]);
  }

  void finish(Engine<Real>& e) override { complete_channels(e, recvs_, sends_); }

 private:
  std::vector<MPI_Request> recvs_, sends_;  // by channel
};

}  // namespace

template <class Real>
std::unique_ptr<Carrier<Real>> make_partitioned_carrier() {
  return std::make_unique<PartitionedCarrier<Real>>();
}

#else

template <class Real>
std::unique_ptr<Carrier<Real>> make_partitioned_carrier() {
  throw UsageError("partitioned: " + unavailable_reason(Parts{Packing::Kernel, Buffers::Backend,
                                                               Transport::Partitioned}));
}

#endif

template std::unique_ptr<Carrier<float>> make_partitioned_carrier<float>();
template std::unique_ptr<Carrier<double>> make_partitioned_carrier<double>();

}  // namespace checkmpi
