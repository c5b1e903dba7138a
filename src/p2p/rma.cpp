// rma: one-sided operations from rank 0 (origin) to rank 1 (target), as
// OSU's osu_put_latency, osu_get_latency and osu_acc_latency (-s SYNC) and,
// with --window W > 1, osu_put_bw: each iteration is one epoch of W
// operations on the target's window (MPI_Win_allocate, displacement 0)
// and its synchronisation:
//   fence     both ranks MPI_Win_fence, rank 0 operates, both MPI_Win_fence;
//   pscw      rank 0 MPI_Win_start / MPI_Win_complete, rank 1 MPI_Win_post / MPI_Win_wait;
//             with one operation per epoch (-W 1) fence and pscw run OSU's
//             latency loops instead: an epoch each way per iteration (fence,
//             rank 0 operates, fence, rank 1 operates, fence; pscw: rank 0's
//             epoch to rank 1, then rank 1's to rank 0), half of it reported;
//   lock      rank 0 MPI_Win_lock (shared) / MPI_Win_unlock, rank 1 passive;
//   lock-all  rank 0 MPI_Win_lock_all / MPI_Win_unlock_all, rank 1 passive;
//   flush     rank 0 holds a shared lock over the whole loop, MPI_Win_flush per epoch.
// put and get move MPI_CHAR, acc sums MPI_UNSIGNED_CHAR (MPI_SUM); with -c
// acc's bytes are at most 255 / W, so that no sum wraps (Open MPI 4.1's AVX
// reductions saturate 8-bit sums instead of wrapping: open-mpi/ompi#8045).
// Rank 0 times; -c checks what arrived (put, acc: at the target; get: at the
// origin; both ranks in the round trips) after every iteration, the ranks
// meeting in a barrier first.
#include "p2p/modes.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

struct Window {
  MPI_Win win = MPI_WIN_NULL;
  unsigned char* base = nullptr;
  Window(MPI_Comm comm, long long bytes) {
    // At least 64 bytes: MPICH 4.0.2 (ch4:ucx) lost puts into windows under 16 bytes (a put of 4 bytes read
    // back 0x00 in a 15-line C program, the same at 16 bytes read back right), so `-c` failed there.
    MPI_Win_allocate(MPI_Aint(std::max(64LL, bytes)), 1, MPI_INFO_NULL, comm, &base, &win);
  }
  ~Window() {
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
  }
};

// The group of one rank of comm, for pscw.
struct Peer {
  MPI_Group group = MPI_GROUP_NULL;
  Peer(MPI_Comm comm, int rank) {
    MPI_Group all = MPI_GROUP_NULL;
    MPI_Comm_group(comm, &all);
    MPI_Group_incl(all, 1, &rank, &group);
    MPI_Group_free(&all);
  }
  ~Peer() { MPI_Group_free(&group); }
};

constexpr int kOrigin = 0, kTarget = 1;

// Byte o of what the origin sends for `seed`: the pattern, for acc with a
// window of `times` operations bounded by 255 / times (sums that never wrap).
unsigned origin_byte(std::uint64_t seed, long long o, long long times) {
  const unsigned byte = pattern_byte(seed, std::size_t(o));
  return times > 1 ? byte % unsigned(255 / times + 1) : byte;
}

// The first byte of `got` that differs from `times` times origin_byte: "" or the error text.
std::string check_bytes(const unsigned char* got, long long size, std::uint64_t seed, long long times, const char* op,
                        int me, int from, long long iteration) {
  for (long long o = 0; o < size; ++o) {
    const unsigned want = unsigned(origin_byte(seed, o, times) * static_cast<unsigned long long>(times));
    if (got[o] != want)
      return format("%s: size %lld, offset %lld: expected 0x%02x, got 0x%02x (rank %d from rank %d, iteration %lld)",
                    op, size, o, want, unsigned(got[o]), me, from, iteration);
  }
  return "";
}

// One iteration: an epoch of rank 0 to rank 1 (both synchronise where the mode says), or a round trip
// (OSU's fence and pscw latency loops).
enum class Steps { Flush, Lock, LockAll, Fence, Pscw, FenceRound, PscwRound };

// What an iteration uses, held by value in the loop's exchange, so that nothing is reloaded between MPI calls.
struct Epoch {
  MPI_Win win;
  MPI_Group group;
  unsigned char* data;
  int window;
  bool origin;

  // `window` operations of `count` bytes to `to`.
  template <RmaOp Op>
  void operate(int count, int to) const {
    for (int j = 0; j < window; ++j) {
      if constexpr (Op == RmaOp::Put) MPI_Put(data, count, MPI_CHAR, to, 0, count, MPI_CHAR, win);
      else if constexpr (Op == RmaOp::Get) MPI_Get(data, count, MPI_CHAR, to, 0, count, MPI_CHAR, win);
      else MPI_Accumulate(data, count, MPI_UNSIGNED_CHAR, to, 0, count, MPI_UNSIGNED_CHAR, MPI_SUM, win);
    }
  }

  template <RmaOp Op, Steps S>
  void run(int count) const {
    if constexpr (S == Steps::Flush) {  // rank 0 holds a shared lock over the whole sweep
      if (origin) operate<Op>(count, kTarget), MPI_Win_flush(kTarget, win);
    } else if constexpr (S == Steps::Lock) {
      if (origin)
        MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win), operate<Op>(count, kTarget), MPI_Win_unlock(kTarget, win);
    } else if constexpr (S == Steps::LockAll) {
      if (origin) MPI_Win_lock_all(0, win), operate<Op>(count, kTarget), MPI_Win_unlock_all(win);
    } else if constexpr (S == Steps::Fence) {
      MPI_Win_fence(0, win);
      if (origin) operate<Op>(count, kTarget);
      MPI_Win_fence(0, win);
    } else if constexpr (S == Steps::Pscw) {
      if (origin) MPI_Win_start(group, 0, win), operate<Op>(count, kTarget), MPI_Win_complete(win);
      else MPI_Win_post(group, 0, win), MPI_Win_wait(win);
    } else if constexpr (S == Steps::FenceRound) {
      MPI_Win_fence(0, win);
      if (origin) operate<Op>(count, kTarget);
      MPI_Win_fence(0, win);
      if (!origin) operate<Op>(count, kOrigin);
      MPI_Win_fence(0, win);
    } else {  // PscwRound: the one who operates starts and completes, the other posts and waits
      if (!origin) MPI_Win_post(group, 0, win), MPI_Win_wait(win);
      MPI_Win_start(group, 0, win), operate<Op>(count, origin ? kTarget : kOrigin), MPI_Win_complete(win);
      if (origin) MPI_Win_post(group, 0, win), MPI_Win_wait(win);
    }
  }
};

// f(op, steps) with both as compile-time constants (std::integral_constant): each pair's loop is compiled
// for it, nothing decided per iteration. With Open MPI's osc/sm (AMD VM, 8 B, put and get with flush, the
// launches that landed in the machine's fast state, 24 interleaved): 35.5-36.2 ns an operation when one
// loop tested both at run time, 33.2-33.7 so; a C loop of the same two calls 31.3.
template <class F>
void with_constants(RmaOp op, Steps steps, F&& f) {
  auto on_op = [&](auto s) {
    switch (op) {
      case RmaOp::Put: return f(std::integral_constant<RmaOp, RmaOp::Put>{}, s);
      case RmaOp::Get: return f(std::integral_constant<RmaOp, RmaOp::Get>{}, s);
      case RmaOp::Acc: return f(std::integral_constant<RmaOp, RmaOp::Acc>{}, s);
    }
  };
  switch (steps) {
    case Steps::Flush: return on_op(std::integral_constant<Steps, Steps::Flush>{});
    case Steps::Lock: return on_op(std::integral_constant<Steps, Steps::Lock>{});
    case Steps::LockAll: return on_op(std::integral_constant<Steps, Steps::LockAll>{});
    case Steps::Fence: return on_op(std::integral_constant<Steps, Steps::Fence>{});
    case Steps::Pscw: return on_op(std::integral_constant<Steps, Steps::Pscw>{});
    case Steps::FenceRound: return on_op(std::integral_constant<Steps, Steps::FenceRound>{});
    case Steps::PscwRound: return on_op(std::integral_constant<Steps, Steps::PscwRound>{});
  }
}

}  // namespace

void run_rma(const Session& s, ModeOutput& out) {
  const bool origin = s.rank == kOrigin;
  const int window = int(s.cfg.window);
  const RmaSync sync = s.cfg.sync;
  auto local = make_buffer(BufferKind::Host, std::size_t(std::max(1LL, s.cfg.max_size)));
  unsigned char* const local_data = static_cast<unsigned char*>(local->data());
  const Window w(s.comm, s.cfg.max_size);
  const Peer peer(s.comm, origin ? kTarget : kOrigin);
  MPI_Win win = w.win;
  MPI_Group group = peer.group;
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  struct Case {
    RmaOp op;
    long long size;
  };
  std::vector<Case> cases;
  for (RmaOp op : s.cfg.rma_ops)
    for (long long size : all_sizes) cases.push_back({op, size});
  std::vector<Pooled> pooled(cases.size());
  out.table.clear();
  if (sync == RmaSync::Flush && origin) MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win);
  // OSU's latency loops for fence and pscw: an epoch each way, half of it reported.
  const bool round_trip = window == 1 && (sync == RmaSync::Fence || sync == RmaSync::Pscw);
  const double factor = round_trip ? 0.5 : 1.0;
  const int me = s.rank, other = 1 - s.rank;
  const Steps steps = round_trip ? (sync == RmaSync::Fence ? Steps::FenceRound : Steps::PscwRound)
                      : sync == RmaSync::Flush   ? Steps::Flush
                      : sync == RmaSync::Lock    ? Steps::Lock
                      : sync == RmaSync::LockAll ? Steps::LockAll
                      : sync == RmaSync::Fence   ? Steps::Fence
                                                 : Steps::Pscw;
  const Epoch epoch{win, group, local_data, window, origin};
  // Who operates (sends from its local buffer) and who is operated on, in an iteration.
  const bool operates = origin || round_trip, operated_on = !origin || round_trip;
  try {
    sweep(
        s, cases.size(),
        [&](size_t k) { return format("%s (%s), %lld B", rma_op_name(cases[k].op), rma_sync_name(sync), cases[k].size); },
        [&](size_t k) {
          const RmaOp op = cases[k].op;
          const long long size = cases[k].size;
          const int count = int(size);
          const Layout layout = Layout::contiguous(std::size_t(size));
          const bool damage = size == s.cfg.corrupt_size;
          auto prepare = [&](long long i) {
            // The data of iteration i: the operating rank's for put and acc (the sums start from 0),
            // the window of the rank operated on for get; all in place before the iteration starts.
            const bool damaged = damage && i == 0 && origin;
            if (op == RmaOp::Put && operates) {
              local->fill(layout, pattern_seed(me, i, size));
              if (damaged) local->corrupt(layout, std::size_t(s.cfg.corrupt_offset));
            }
            if (op == RmaOp::Acc && operates) {
              const std::uint64_t seed = pattern_seed(me, i, size);
              for (long long o = 0; o < size; ++o) local_data[o] = (unsigned char)origin_byte(seed, o, window);
              if (damaged) local_data[s.cfg.corrupt_offset] ^= 0xFF;
            }
            if (op == RmaOp::Acc && operated_on) std::fill(w.base, w.base + size, 0);
            if (op == RmaOp::Get && operated_on) {
              const std::uint64_t seed = pattern_seed(me, i, size);
              for (long long o = 0; o < size; ++o) w.base[o] = pattern_byte(seed, std::size_t(o));
              if (damage && i == 0 && !origin) w.base[s.cfg.corrupt_offset] ^= 0xFF;
            }
            MPI_Barrier(s.comm);
          };
          auto verify = [&](long long i) {
            MPI_Barrier(s.comm);  // the iteration is complete at both ranks
            const char* name = rma_op_name(op);
            if (op == RmaOp::Get)
              return operates ? check_bytes(local_data, size, pattern_seed(other, i, size), 1, name, me, other, i)
                              : std::string();
            return operated_on ? check_bytes(w.base, size, pattern_seed(other, i, size),
                                             op == RmaOp::Acc ? window : 1, name, me, other, i)
                               : std::string();
          };
          with_constants(op, steps, [&](auto op_c, auto steps_c) {
            pooled[k].add(run_loop(
                make_loop(s, size, origin),
                [epoch, count](long long) { epoch.run<decltype(op_c)::value, decltype(steps_c)::value>(count); },
                prepare, verify));
          });
        },
        [&](size_t k) {
          if (!origin) return;
          const RmaOp op = cases[k].op;
          const long long size = cases[k].size;
          if (k == 0 || cases[k - 1].op != op)
            out.table += format("# %s, synchronisation %s, %d operation(s) per epoch: time per epoch%s\n",
                                rma_op_name(op), rma_sync_name(sync), window,
                                round_trip ? " (half of an epoch each way, as OSU)" : "") +
                         "# Size       Latency (us)     Min (us)  Median (us)     Max (us)      MB/s\n";
          const Samples& samples = pooled[k].all;
          const Stats time = sample_stats(samples, factor);
          const double bandwidth = double(size) * window * double(samples.iterations) / (samples.total * factor);
          Json r = Json::object();
          r["op"] = rma_op_name(op);
          r["sync"] = rma_sync_name(sync);
          r["size"] = size;
          r["iterations"] = samples.iterations;
          r["window"] = window;
          r["latency"] = stats_json(time);
          r["bandwidth"] = bandwidth;
          r["block"] = samples.block;
          const std::string what = format("%s %lld B", rma_op_name(op), size);
          r["repeats"] = repeats_json(out, what, {{"latency", &pooled[k]}}, factor);
          note_tail(out, time, what);
          out.results.push(r);
          out.table += format("%-10lld%18.2f%13.2f%13.2f%13.2f%10.2f\n", size, time.mean * 1e6, time.min * 1e6,
                              time.median * 1e6, time.max * 1e6, bandwidth / 1e6);
        });
  } catch (const ValidationError&) {
    if (sync == RmaSync::Flush && origin) MPI_Win_unlock(kTarget, win);
    throw;
  }
  if (sync == RmaSync::Flush && origin) MPI_Win_unlock(kTarget, win);
  if (origin)
    out.table += "# Latency: mean time per epoch (its operations and synchronisation) at rank 0, as OSU; MB/s: "
                 "size x operations per epoch over the total time\n";
}

}  // namespace checkmpi::p2p
