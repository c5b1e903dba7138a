// datatype: ping-pong of MPI_Type_vector(count, blocklen, stride, MPI_FLOAT)
// data sent with the type, against the same bytes packed by hand into a
// contiguous buffer, sent as bytes and unpacked by hand. The difference is
// what the datatype engine adds; its slope over bytes is LogGOP's O.
#include <algorithm>

#include "p2p/modes.hpp"

namespace checkmpi::p2p {

namespace {

constexpr int kTag = 1;

}  // namespace

void run_datatype(const Session& s, ModeOutput& out) {
  const int peer = 1 - s.rank;
  long long extent = 0, payload = 0;
  for (const auto& v : s.cfg.vectors) {
    extent = std::max(extent, v.extent_bytes());
    payload = std::max(payload, v.payload_bytes());
  }
  auto send = make_buffer(s.cfg, std::size_t(extent));
  auto recv = make_buffer(s.cfg, std::size_t(extent));
  auto packed_out = make_buffer(s.cfg, std::size_t(payload));
  auto packed_in = make_buffer(s.cfg, std::size_t(payload));
  // Raw pointers: no virtual call on them inside the timed loops.
  void* const send_data = send->data();
  void* const recv_data = recv->data();
  void* const packed_out_data = packed_out->data();
  void* const packed_in_data = packed_in->data();
  // Staged: the type's whole extent crosses to and from the host; packing by hand stays on the device.
  Staging send_stage(*send), recv_stage(*recv), packed_out_stage(*packed_out), packed_in_stage(*packed_in);
  out.table = "# Count  Blocklen  Stride      Bytes  Contig  Datatype (us)  Packed (us)  Overhead (us)\n";
  // The fit uses the non-contiguous tuples, where the engine has work to do
  // (all tuples when every one is contiguous).
  std::vector<double> bytes[2], overhead[2], packed_time[2];
  const auto& vectors = s.cfg.vectors;
  std::vector<Pooled> with_type(vectors.size()), by_hand(vectors.size());
  auto tuple = [&](size_t k) {
    return format("count %lld, blocklen %lld, stride %lld", vectors[k].count, vectors[k].blocklen, vectors[k].stride);
  };
  sweep(
      s, vectors.size(), [&](size_t k) { return tuple(k) + format(" (%lld B)", vectors[k].payload_bytes()); },
      [&](size_t k) {
        const VectorShape& v = vectors[k];
        MPI_Datatype type;
        MPI_Type_vector(int(v.count), int(v.blocklen), int(v.stride), MPI_FLOAT, &type);
        MPI_Type_commit(&type);
        const Layout layout = Layout::of(v);
        const int size = int(v.payload_bytes());
        const std::size_t span = std::size_t(v.extent_bytes());
        const PayloadCheck check(s.cfg, layout, size, tuple(k) + ": ");
        const Loop loop = make_loop(s, size, s.rank == 0);
        auto prepare = [&](long long i) { check.prepare(*send, s.rank, i); };
        auto verify = [&](long long i) { return check.verify(*recv, peer, s.rank, i); };
        try {
          with_type[k].add(run_loop(
              loop,
              [&](long long) {
                if (s.rank == 0) {
                  send_stage.out(span);
                  MPI_Send(send_data, 1, type, peer, kTag, s.comm);
                }
                MPI_Recv(recv_data, 1, type, peer, kTag, s.comm, MPI_STATUS_IGNORE);
                recv_stage.in(span);
                if (s.rank == 1) {
                  send_stage.out(span);
                  MPI_Send(send_data, 1, type, peer, kTag, s.comm);
                }
              },
              prepare, verify));
          by_hand[k].add(run_loop(
              loop,
              [&](long long) {
                if (s.rank == 0) {
                  send->pack(layout, *packed_out);
                  packed_out_stage.out(std::size_t(size));
                  MPI_Send(packed_out_data, size, MPI_CHAR, peer, kTag, s.comm);
                }
                MPI_Recv(packed_in_data, size, MPI_CHAR, peer, kTag, s.comm, MPI_STATUS_IGNORE);
                packed_in_stage.in(std::size_t(size));
                recv->unpack(layout, *packed_in);
                if (s.rank == 1) {
                  send->pack(layout, *packed_out);
                  packed_out_stage.out(std::size_t(size));
                  MPI_Send(packed_out_data, size, MPI_CHAR, peer, kTag, s.comm);
                }
              },
              prepare, verify));
        } catch (...) {
          MPI_Type_free(&type);
          throw;
        }
        MPI_Type_free(&type);
      },
      [&](size_t k) {
        if (s.rank != 0) return;
        const VectorShape& v = vectors[k];
        const int size = int(v.payload_bytes());
        const Stats dt = sample_stats(with_type[k].all, 0.5), pk = sample_stats(by_hand[k].all, 0.5);
        const double extra = dt.median - pk.median;
        Json r = Json::object();
        r["count"] = v.count;
        r["blocklen"] = v.blocklen;
        r["stride"] = v.stride;
        r["bytes"] = size;
        r["contiguous"] = v.contiguous();
        r["datatype"] = stats_json(dt);
        r["packed"] = stats_json(pk);
        r["overhead"] = extra;
        r["iterations"] = with_type[k].all.iterations;
        r["repeats"] = repeats_json(out, tuple(k), {{"datatype", &with_type[k]}, {"packed", &by_hand[k]}}, 0.5);
        note_tail(out, dt, tuple(k) + " datatype");
        note_tail(out, pk, tuple(k) + " packed");
        out.results.push(r);
        out.table += format("%-7lld%10lld%8lld%11d%8s%15.2f%13.2f%15.3f\n", v.count, v.blocklen, v.stride, size,
                            v.contiguous() ? "yes" : "no", dt.median * 1e6, pk.median * 1e6, extra * 1e6);
        const int group = v.contiguous() ? 0 : 1;
        bytes[group].push_back(size);
        overhead[group].push_back(extra);
        packed_time[group].push_back(pk.median);
      });
  if (s.rank != 0) return;
  const int group = bytes[1].empty() ? 0 : 1;
  const OverheadFit fit = fit_overhead(bytes[group], overhead[group], packed_time[group]);
  Json j = Json::object();
  j["O"] = fit.O;
  j["o"] = fit.o;
  j["r2"] = fit.r2;
  j["points"] = fit.points;
  j["tuples"] = group == 1 ? "non-contiguous" : "contiguous";
  out.fits["datatype"] = j;
  note_fit(out, fit.r2, "datatype overhead fit");
  out.table += format("# datatype overhead = o + O*bytes over the %s tuples (median half round trips): "
                      "O = %.4f ns/B, o = %.3f us, R^2 = %.4f\n",
                      group == 1 ? "non-contiguous" : "contiguous", fit.O * 1e9, fit.o * 1e6, fit.r2);
}

}  // namespace checkmpi::p2p
