// MPI 4 partitioned communication: each message is made once with
// MPI_Psend_init/MPI_Precv_init, one partition per field; every step
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
  void setup(Engine<Real>& e) override {
    const Decomposition& dec = e.state().dec;
    requests_.resize(e.channels().size());
    for (const Channel& c : e.channels()) {
      if (!e.through_mpi(c)) continue;
      const auto in = e.recv_wire(c), out = e.send_wire(c);
      const int fields = e.fields();
      const MPI_Count per_field = in.count / fields;
      MPI_Precv_init(in.ptr, fields, per_field, in.type, recv_peer(dec, c), c.tag, dec.comm,
                     MPI_INFO_NULL, requests_.recv(c.index));
      MPI_Psend_init(out.ptr, fields, per_field, out.type, send_peer(dec, c), c.tag, dec.comm,
                     MPI_INFO_NULL, requests_.send(c.index));
    }
  }

  void post_recvs(Engine<Real>&, Channels set) override { requests_.start_recvs(set); }
  // Packs as it sends: each field's partition is ready as soon as it is packed.
  void post_sends(Engine<Real>& e, Channels set) override {
    requests_.start_sends(set);
    for (const Channel& c : set) {
      if (!e.through_mpi(c)) continue;
      for (int f = 0; f < e.fields(); ++f) {
        e.pack(c, /*finish=*/true, FieldRange{f, 1});  // the partition must be in place before it is ready
        MPI_Pready(f, *requests_.send(c.index));
      }
    }
  }
  void wait(Engine<Real>& e, Channels set) override { requests_.complete(e, set); }

 private:
  RequestSet requests_;
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
