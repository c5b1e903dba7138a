// Blocking MPI_Sendrecv building blocks shared by the host strategies
// step0-step2: a plane moved by a derived datatype, or packed by hand into a
// contiguous buffer (one field or all three per message).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "strategies/strategy.hpp"

namespace checkmpi {

// One field's plane, sent and received in place through `plane_type`.
template <class Real>
void sendrecv_datatype(HaloState<Real>& s, int field, int dir, int sign, MPI_Datatype plane_type) {
  const Grid& g = s.grid;
  Real* f = s.f[field];
  const Plane out = plane(g, dir, send_index(g, dir, sign));
  const Plane in = plane(g, dir, recv_index(g, dir, sign));
  if (s.copies_locally(dir)) return copy_plane(f, out, in);
  const int tag = halo_tag(field, dir, sign);
  MPI_Sendrecv(f + out.offset, 1, plane_type, send_peer(s.dec, dir, sign), tag, f + in.offset, 1, plane_type,
               recv_peer(s.dec, dir, sign), tag, s.dec.comm, MPI_STATUS_IGNORE);
}

// Contiguous send and receive buffers big enough for three fields' planes in
// any direction.
template <class Real>
struct PackBuffers {
  std::vector<Real> send, recv;
  explicit PackBuffers(const Grid& g) {
    std::size_t most = 0;
    for (int d = 0; d < 3; ++d) most = std::max(most, plane_count(g, d));
    send.resize(3 * most);
    recv.resize(3 * most);
  }
};

// Packs the planes of `fields` one after another, one MPI_Sendrecv, unpacks.
template <class Real>
void sendrecv_packed(HaloState<Real>& s, std::initializer_list<int> fields, int dir, int sign,
                     PackBuffers<Real>& b) {
  const Grid& g = s.grid;
  const Plane out = plane(g, dir, send_index(g, dir, sign));
  const Plane in = plane(g, dir, recv_index(g, dir, sign));
  const int count = int(out.count() * fields.size());
  const int tag = fields.size() == 1 ? halo_tag(*fields.begin(), dir, sign) : halo_tag(3, dir, sign);
  {
    Timed t(s.timers.pack, &s.timers.pack_dir[dir]);
    Real* to = b.send.data();
    for (int f : fields) {
      pack_plane(s.f[f], out, to);
      to += out.count();
    }
  }
  if (s.copies_locally(dir))
    std::copy(b.send.begin(), b.send.begin() + count, b.recv.begin());
  else
    MPI_Sendrecv(b.send.data(), count, mpi_type<Real>(), send_peer(s.dec, dir, sign), tag, b.recv.data(), count,
                 mpi_type<Real>(), recv_peer(s.dec, dir, sign), tag, s.dec.comm, MPI_STATUS_IGNORE);
  Timed t(s.timers.unpack, &s.timers.unpack_dir[dir]);
  const Real* from = b.recv.data();
  for (int f : fields) {
    unpack_plane(from, in, s.f[f]);
    from += in.count();
  }
}

}  // namespace checkmpi
