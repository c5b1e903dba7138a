#include "strategies/engine.hpp"

#include <cstring>

#include "strategies/transport.hpp"

namespace checkmpi {

std::vector<Channel> make_channels(Packing p, int fields, int neighbours) {
  std::vector<Channel> out;
  const std::vector<Offset>& around = neighbour_offsets(neighbours);
  for (int dir = 0; dir < 3; ++dir)
    for (int nb = 0; nb < int(around.size()); ++nb) {
      const Offset& o = around[std::size_t(nb)];
      const int last = o[2] != 0 ? 2 : o[1] != 0 ? 1 : 0;  // the direction it is timed in
      if (last != dir) continue;
      Packing how = p == Packing::HandX ? (dir == 0 ? Packing::Hand : Packing::Datatype) : p;
      const bool per_field = p == Packing::Datatype || p == Packing::HandX;
      for (int field = per_field ? 0 : -1; field < (per_field ? fields : 0); ++field) {
        Channel c;
        c.dir = dir;
        c.sign = o[std::size_t(dir)] > 0 ? Up : Down;
        c.to = o;
        c.neighbour = nb;
        c.field = field;
        c.how = how;
        c.index = int(out.size());
        c.tag = halo_tag(field < 0 ? fields : field, nb, fields);
        out.push_back(c);
      }
    }
  return out;
}

namespace {

// Adds the seconds of its scope to `sink`, less the packing and unpacking
// done inside it (a transport that packs as it sends; a wait unpacks what
// arrives), so that post and wait time MPI alone.
class Phase {
 public:
  Phase(double& sink, const StepTimers& t) : sink_(sink), t_(t), start_(MPI_Wtime()), inner_(t.pack + t.unpack) {}
  ~Phase() { sink_ += MPI_Wtime() - start_ - (t_.pack + t_.unpack - inner_); }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  double& sink_;
  const StepTimers& t_;
  double start_, inner_;
};

}  // namespace

template <class Real>
Engine<Real>::Engine(const StrategyInfo& info, Compute run)
    : info_(info), transport_(transport_traits(info.parts.transport)) {
  info_.parts.compute = resolved_compute(info.parts, run);
}

template <class Real>
Engine<Real>::~Engine() {
  std::unique_ptr<Carrier<Real>> carrier = std::move(carrier_);  // freed last: it may own memory used below
  for (MPI_Datatype& t : plane_types_)
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  if (!s_) return;
  for (int way = 0; way < 2; ++way) {
    if (wire_[way] && wire_[way] != data_[way] && wire_[way] != given_) s_->backend.release_host(wire_[way]);
    if (data_[way] && data_[way] != given_) {
      if (info_.parts.packing == Packing::Kernel) s_->backend.release(data_[way]);
      else s_->backend.release_host(data_[way]);
    }
  }
}

template <class Real>
void Engine<Real>::setup(HaloState<Real>& s) {
  s_ = &s;
  const Parts& p = info_.parts;
  const Grid& g = s.grid;
  fields_ = s.stencil.fields;
  // By direction, the faces relay the edges and corners; all at once, a
  // stencil with them sends them to their neighbours.
  direct_ = p.schedule == Schedule::AllAtOnce && s.stencil.neighbours > 6;
  const int neighbours = direct_ ? s.stencil.neighbours : 6;
  channels_ = make_channels(p.packing, fields_, neighbours);
  routes_.clear();
  for (const Channel& c : channels_) routes_.push_back(s.copies_locally(c.to) ? Route::Self : Route::Mpi);
  send_routes_ = routes_;
  for (int d = 0; d < 3; ++d) {
    const Channel* begin = channels_.data();
    while (begin->dir != d) ++begin;
    const Channel* end = begin;
    while (end != channels_.data() + channels_.size() && end->dir == d) ++end;
    by_dir_[std::size_t(d)] = {begin, end};
  }
  packed_bytes_.assign(channels_.size(), 0);
  compute_.setup(s, p.compute, p.overlap);
  carrier_ = make_carrier<Real>(p.transport);

  // Per neighbour, one field's block each way and its datatype; one block
  // per way holds every neighbour's message (all fields each), so that
  // collectives and windows can address every message from one base.
  const std::vector<Offset>& around = neighbour_offsets(neighbours);
  send_planes_.clear();
  recv_planes_.clear();
  message_offset_.assign(around.size(), 0);
  message_size_.assign(around.size(), 0);
  plane_types_.assign(around.size(), MPI_DATATYPE_NULL);
  for (std::size_t m = 0; m < around.size(); ++m) {
    const Offset& o = around[m];
    const int dir = o[2] != 0 ? 2 : o[1] != 0 ? 1 : 0;
    send_planes_.push_back(region(g, region_box(g, o, false, !direct_), dir));
    recv_planes_.push_back(region(g, region_box(g, o, true, !direct_), dir));
    plane_types_[m] = make_plane_datatype(send_planes_[m], mpi_type<Real>());
    message_offset_[m] = block_;
    std::size_t elements = std::size_t(fields_) * send_planes_[m].count();
    if (p.packing == Packing::MpiPack) {
      int bytes = 0;
      MPI_Pack_size(fields_, plane_types_[m], s.dec.comm, &bytes);
      elements = (std::size_t(bytes) + sizeof(Real) - 1) / sizeof(Real);
    }
    message_size_[m] = elements;
    block_ += elements;
  }
  if (p.packing == Packing::Datatype) block_ = 0;  // nothing is packed
  staged_ = s.backend.kind() != BackendKind::Host && p.packing == Packing::Kernel &&
            !(p.buffers == Buffers::Backend && s.backend.mpi_takes_backend_memory() &&
              transport_.device_memory);
  for (int way = 0; way < 2 && block_ > 0; ++way) {
    Real* given = way == 1 ? carrier_->receive_memory(*this, block_) : nullptr;
    if (given) {
      given_ = given;
      wire_[way] = given;
      data_[way] = staged_ ? s.backend.allocate(block_) : given;
      continue;
    }
    data_[way] = p.packing == Packing::Kernel ? s.backend.allocate(block_) : s.backend.allocate_host(block_);
    wire_[way] = staged_ ? s.backend.allocate_host(block_) : data_[way];
  }
  carrier_->setup(*this);

  traits_ = Traits{};
  traits_.kernel_passes = kernel_passes(p.compute);
  traits_.overlaps = p.overlap != Overlap::None;
  const PartTraits layout = part_traits(p, s.stencil);  // one message's fields: the catalog's and the plan's count too
  for (int d = 0; d < 3; ++d) {
    traits_.halo_bytes[d] = halo_bytes(g, d, fields_, sizeof(Real));
    traits_.message_bytes[d] = message_bytes(layout, g, d, sizeof(Real), direct_);
  }
  // What goes through MPI in the timed loop: a message per channel routed
  // so, or per neighbour where the transport bundles the fields.
  std::vector<bool> neighbour_counted(around.size(), false);
  for (const Channel& c : channels_) {
    if (!through_mpi(c) || !transport_.measured) continue;
    traits_.messages += !transport_.bundles_fields || !neighbour_counted[std::size_t(c.neighbour)];
    neighbour_counted[std::size_t(c.neighbour)] = true;
    // The payload (MPI_Pack's own bytes aside): the channel's fields' blocks.
    const std::size_t bytes =
        (c.field < 0 ? std::size_t(fields_) : 1) * send_planes_[std::size_t(c.neighbour)].count() * sizeof(Real);
    traits_.mpi_bytes[c.dir] += bytes;
    if (!c.face()) traits_.diagonal_bytes += bytes;
  }
}

template <class Real>
std::string Engine<Real>::mpi_buffers() const {
  if (!s_ || s_->backend.kind() == BackendKind::Host) return "host";
  return staged_ ? "staged" : "device";
}

template <class Real>
std::string Engine<Real>::note() const {
  return carrier_ ? carrier_->note() : "";
}

template <class Real>
void Engine<Real>::step(HaloState<Real>& s) {
  StepTimers& t = s.timers;
  const bool barrier = s.options.barrier && transport_.measured;  // mock synchronises untimed, in its wait
  if (info_.parts.schedule == Schedule::ByDirection) {
    {
      Timed comm(t.comm);
      for (int dir = 0; dir < 3; ++dir) {
        Timed timed(t.dir[dir]);
        const Channels set = in_direction(dir);
        if (transport_.grain[dir] == Grain::Message)
          for (const Channel& c : set) exchange({&c, &c + 1});
        else
          exchange(set);
        if (barrier) MPI_Barrier(s.dec.comm);
      }
    }
    Timed compute(t.compute);
    compute_.whole(s);
    return;
  }
  const bool overlap = info_.parts.overlap != Overlap::None;
  {
    Timed comm(t.comm);
    post_all_at_once(s);
  }
  if (overlap) compute_in_flight(s, async());
  {
    Timed comm(t.comm);
    wait(all());
    if (barrier) MPI_Barrier(s.dec.comm);
  }
  Timed compute(t.compute);
  if (overlap) compute_.after(s);
  else compute_.whole(s);
}

template <class Real>
void Engine<Real>::post_recvs(Channels set) {
  Phase post(s_->timers.post, s_->timers);
  carrier_->post_recvs(*this, set);
}

template <class Real>
void Engine<Real>::post_sends(Channels set) {
  for (const Channel& c : set)
    if (route(c) == Route::Self) copy_locally(c);
  Phase post(s_->timers.post, s_->timers);
  carrier_->post_sends(*this, set);
}

template <class Real>
void Engine<Real>::wait(Channels set) {
  for (const Channel& c : set)  // copied when the sends were posted
    if (route(c) == Route::Self) arrived(c);
  Phase wait(s_->timers.wait, s_->timers);
  carrier_->wait(*this, set);
}

template <class Real>
void Engine<Real>::exchange(Channels set) {
  for (const Channel& c : set)
    if (packs(c)) pack(c);
  post_recvs(set);
  post_sends(set);
  wait(set);
}

// The compute while the messages fly. In slices, where the transport can
// tell whether every halo is in: asking before each slice also lets MPI
// progress the messages, and once they are in, the rest is left to after().
template <class Real>
void Engine<Real>::compute_in_flight(HaloState<Real>& s, bool async) {
  StepTimers& t = s.timers;
  if (!compute_.sliced(s) || !transport_.tests) {
    Timed compute(t.compute);
    compute_.in_flight(s, async);
    return;
  }
  compute_.begin_slices();
  for (;;) {
    {
      Timed comm(t.comm);
      Phase wait(t.wait, t);
      if (carrier_->test(*this)) return;
    }
    Timed compute(t.compute);
    if (!compute_.next_slice(s)) return;
  }
}

// Packs every direction and sign, posts all receives, then all sends (a
// transport whose one call carries the whole step: everything packed, then
// that call). With waitany each direction packs on its own queue and is
// waited for just before its send, so packing one overlaps sending another.
template <class Real>
void Engine<Real>::post_all_at_once(HaloState<Real>& s) {
  const bool whole_step = transport_.grain[0] == Grain::Step;
  for (int dir = 0; dir < 3; ++dir) {
    Timed timed(s.timers.dir[dir]);
    for (const Channel& c : in_direction(dir))
      if (packs(c)) pack(c, !async());
    if (!whole_step) post_recvs(in_direction(dir));
  }
  if (whole_step) {
    post_recvs(all());
    post_sends(all());
    return;
  }
  for (int dir = 0; dir < 3; ++dir) {
    Timed timed(s.timers.dir[dir]);
    if (async()) s.backend.wait(direction_queue(dir));
    post_sends(in_direction(dir));
  }
}

template <class Real>
std::size_t Engine<Real>::offset(const Channel& c) const {
  const std::size_t base = message_offset_[std::size_t(c.neighbour)];
  return c.field < 0 ? base : base + std::size_t(c.field) * send_planes_[std::size_t(c.neighbour)].count();
}

template <class Real>
std::size_t Engine<Real>::count(const Channel& c) const {
  if (c.how == Packing::MpiPack) return message_size_[std::size_t(c.neighbour)];
  return (c.field < 0 ? std::size_t(fields_) : 1) * send_planes_[std::size_t(c.neighbour)].count();
}

template <class Real>
Plane Engine<Real>::send_plane(const Channel& c) const {
  return send_planes_[std::size_t(c.neighbour)];
}

template <class Real>
Plane Engine<Real>::recv_plane(const Channel& c) const {
  return recv_planes_[std::size_t(c.neighbour)];
}

template <class Real>
void Engine<Real>::pack(const Channel& c, bool finish, FieldRange which) {
  if (c.how == Packing::Datatype) return;  // MPI reads the fields in place
  HaloState<Real>& s = *s_;
  Timed timed(s.timers.pack, &s.timers.pack_dir[c.dir]);
  const Grid& g = s.grid;
  const Plane p = send_plane(c);
  const std::size_t pc = p.count();
  Real* message = data_[0] + message_offset_[std::size_t(c.neighbour)];
  if (c.how == Packing::Hand) {
    const FieldRange r = c.fields();
    for (int f = r.first; f < r.end(fields_); ++f) pack_plane(s.f[f], p, message + std::size_t(f) * pc);
  } else if (c.how == Packing::MpiPack) {
    int position = 0;
    const int capacity = int(count(c) * sizeof(Real));
    for (int f = 0; f < fields_; ++f)
      MPI_Pack(s.f[f] + p.offset, 1, plane_types_[std::size_t(c.neighbour)], message, capacity, &position,
               s.dec.comm);
    packed_bytes_[std::size_t(c.index)] = position;
  } else {
    s.backend.pack(g, s.f, p, message, queue(c), which);
    if (staged(c)) {
      const std::size_t at = message_offset_[std::size_t(c.neighbour)] + std::size_t(which.first) * pc;
      s.backend.copy(wire_[0] + at, data_[0] + at, std::size_t(which.end(fields_) - which.first) * pc, queue(c));
    }
    if (finish) s.backend.wait(queue(c));
  }
}

template <class Real>
void Engine<Real>::unpack(const Channel& c, bool finish) {
  if (c.how == Packing::Datatype) return;  // MPI wrote the fields in place
  HaloState<Real>& s = *s_;
  Timed timed(s.timers.unpack, &s.timers.unpack_dir[c.dir]);
  const Grid& g = s.grid;
  const Plane p = recv_plane(c);
  const std::size_t pc = p.count();
  const FieldPtrs<Real>& into = target();
  Real* message = data_[1] + message_offset_[std::size_t(c.neighbour)];
  if (c.how == Packing::Hand) {
    const FieldRange r = c.fields();
    for (int f = r.first; f < r.end(fields_); ++f) unpack_plane(message + std::size_t(f) * pc, p, into[f]);
  } else if (c.how == Packing::MpiPack) {
    int position = 0;
    const int capacity = int(count(c) * sizeof(Real));
    for (int f = 0; f < fields_; ++f)
      MPI_Unpack(message, capacity, &position, into[f] + p.offset, 1, plane_types_[std::size_t(c.neighbour)],
                 s.dec.comm);
  } else {
    if (staged(c)) s.backend.copy(data_[1] + offset(c), wire_[1] + offset(c), count(c), queue(c));
    s.backend.unpack(g, message, p, into, queue(c), c.fields());
    if (finish) s.backend.wait(queue(c));
  }
}

template <class Real>
void Engine<Real>::arrived(const Channel& c) {
  if (route(c) == Route::Shared) return;  // the carrier read it into the halo
  if (info_.parts.schedule == Schedule::ByDirection) {
    unpack(c);  // inside its direction's timer already
    return;
  }
  Timed timed(s_->timers.dir[c.dir]);
  unpack(c, !async());
}

template <class Real>
void Engine<Real>::copy_locally(const Channel& c) {
  HaloState<Real>& s = *s_;
  if (c.how == Packing::Datatype) {  // block to block within the field
    const Plane from = send_plane(c), to = recv_plane(c);
    Real* dst = target()[std::size_t(c.field)];
    const Real* src = s.f[std::size_t(c.field)];
    for (std::size_t l = 0; l < from.layers; ++l)
      for (std::size_t r = 0; r < from.rows; ++r)
        for (std::size_t col = 0; col < from.cols; ++col) {
          const std::size_t at = l * from.layer_stride + r * from.row_stride + col * from.col_stride;
          dst[to.offset + at] = src[from.offset + at];
        }
  } else if (c.how == Packing::Kernel) {
    s.backend.copy(data_[1] + offset(c), data_[0] + offset(c), count(c), queue(c));
    s.backend.wait(queue(c));
  } else {
    std::memcpy(data_[1] + offset(c), data_[0] + offset(c), count(c) * sizeof(Real));
  }
}

template <class Real>
typename Engine<Real>::Wire Engine<Real>::send_wire(const Channel& c) {
  if (c.how == Packing::Datatype)
    return {s_->f[std::size_t(c.field)] + send_plane(c).offset, 1, plane_types_[std::size_t(c.neighbour)]};
  if (c.how == Packing::MpiPack) return {wire_[0] + offset(c), packed_bytes_[std::size_t(c.index)], MPI_PACKED};
  return {wire_[0] + offset(c), int(count(c)), mpi_type<Real>()};
}

template <class Real>
typename Engine<Real>::Wire Engine<Real>::recv_wire(const Channel& c) {
  if (c.how == Packing::Datatype)
    return {target()[std::size_t(c.field)] + recv_plane(c).offset, 1, plane_types_[std::size_t(c.neighbour)]};
  if (c.how == Packing::MpiPack) return {wire_[1] + offset(c), int(count(c) * sizeof(Real)), MPI_PACKED};
  return {wire_[1] + offset(c), int(count(c)), mpi_type<Real>()};
}

template class Engine<float>;
template class Engine<double>;

template <class Real>
std::unique_ptr<Strategy<Real>> make_strategy(const StrategyInfo& info, Compute run) {
  return std::make_unique<Engine<Real>>(info, run);
}
template std::unique_ptr<Strategy<float>> make_strategy<float>(const StrategyInfo&, Compute);
template std::unique_ptr<Strategy<double>> make_strategy<double>(const StrategyInfo&, Compute);

}  // namespace checkmpi
