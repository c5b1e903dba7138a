#include "halo/timed_loop.hpp"

#include <string>
#include <utility>

#include "core/errors.hpp"
#include "core/watchdog.hpp"
#include "grid/profiles.hpp"
#include "grid/routing.hpp"

namespace checkmpi {

namespace {

// The fields in the backend's memory, allocated there (so the host backend
// first-touches them with its kernels' schedule), and their host copies
// that initialisation, validation and profiles work on.
template <class Real>
class BackendFields {
 public:
  BackendFields(Backend<Real>& backend, Fields<Real>& host) : backend_(backend), host_(host) {
    for (Real*& p : ptrs) p = backend.allocate(host.grid.cells());
    owned_ = ptrs;
  }
  ~BackendFields() {
    for (Real* p : owned_)
      if (p) backend_.release(p);
  }
  BackendFields(const BackendFields&) = delete;
  BackendFields& operator=(const BackendFields&) = delete;

  // Host -> `at` and back; `at` is where a strategy keeps the fields now
  // (double-buffered strategies swap them, shared memory moves them).
  void upload(FieldPtrs<Real> at) {
    for (int f = 0; f < 3; ++f) backend_.upload(at[f], host_.data(f), host_.grid.cells());
  }
  void download(FieldPtrs<Real> at) {
    for (int f = 0; f < 3; ++f) backend_.download(host_.data(f), at[f], host_.grid.cells());
  }

  FieldPtrs<Real> ptrs{};

 private:
  Backend<Real>& backend_;
  Fields<Real>& host_;
  FieldPtrs<Real> owned_{};
};

// "its neighbours x 1/3, y 2/2, z 0/0 (below/above)", for the watchdog: the
// exchange does not say which of them a rank waits for.
std::string neighbours(const Decomposition& dec) {
  std::string text = "one of its neighbours";
  for (int d = 0; d < 3; ++d)
    text += std::string(d ? ", " : " ") + "xyz"[d] + " " + std::to_string(dec.neighbour[d][0]) + "/" +
            std::to_string(dec.neighbour[d][1]);
  return text + " (below/above)";
}

// The untimed routing check (core/routing.hpp): kRoutingSteps steps from
// globally unique values. Returns "" or what went wrong, the same on every rank.
template <class Real>
std::string run_routing_check(Strategy<Real>& strategy, HaloState<Real>& state, Fields<Real>& fields,
                              BackendFields<Real>& on_backend, const std::string& label) {
  const Decomposition& dec = state.dec;
  initialise_routing(fields, dec);
  on_backend.upload(state.f);
  for (int t = 1; t <= kRoutingSteps; ++t) {
    progress::beat(t);
    strategy.step(state);
  }
  on_backend.download(state.f);
  progress::at(label + ": routing check", "all ranks (MPI_Allreduce)");
  const RouteMismatch m = check_routing(fields, dec, kRoutingSteps, state.options.reverse);
  long long bad = 0;
  MPI_Allreduce(&m.count, &bad, 1, MPI_LONG_LONG, MPI_SUM, dec.comm);
  if (bad == 0) return "";
  try {
    agree(dec.comm, m.count ? m.describe(dec) : "");
  } catch (const UsageError& e) {
    return "routing check failed after " + std::to_string(kRoutingSteps) + " steps: " + e.what() + ", " +
           std::to_string(bad) + " in all";
  }
  return "";
}

}  // namespace

template <class Real>
StrategyRun run_strategy(const StrategyInfo& info, const Decomposition& dec, const HaloConfig& cfg,
                         const BackendChoice& choice, PendingFiles& files) {
  const Grid& g = dec.grid;
  const std::string label = info.id + " (" + info.alias + ")";
  progress::at(label + ": setup", "");
  const InitialProfiles<Real> initial(g);
  Fields<Real> fields(g);
  const auto backend = make_backend<Real>(choice);
  BackendFields<Real> on_backend(*backend, fields);
  initialise(fields, initial);
  on_backend.upload(on_backend.ptrs);
  StrategyRun r;
  StepTimers& timers = r.local;
  const StepOptions options{cfg.reverse, cfg.border, cfg.sync == SyncMode::Barrier, cfg.self_copy};
  HaloState<Real> state{dec, g, on_backend.ptrs, options, timers, *backend};
  auto strategy = make_strategy<Real>(info, cfg.compute);
  strategy->setup(state);
  r.mpi_buffers = strategy->mpi_buffers();
  r.parts = info.parts;
  r.parts.compute = resolved_compute(info.parts, cfg.compute);
  r.traits = strategy->traits();
  r.note = !strategy->note().empty() ? strategy->note() : info.note;
  if (backend->kind() == BackendKind::Host && !info.host_note.empty()) r.note = info.host_note;
  if (r.mpi_buffers == "staged") r.note = "staged through host memory";

  progress::at(label + ": routing check", neighbours(dec));
  r.error = run_routing_check(*strategy, state, fields, on_backend, label);

  const std::string dir = cfg.outdir + "/" + info.id;
  ProfileFiles profiles(files, dir, dec.rank);
  agree_output(dec.comm, profiles.error());
  if (!r.error.empty()) {  // a misrouted exchange has nothing worth timing
    r.valid = false;
    timers = StepTimers{};
    agree_output(dec.comm, profiles.close());
    return r;
  }

  progress::at(label + ": warm-up", neighbours(dec));
  for (long long w = 0; w < cfg.warmup; ++w) {
    progress::beat(w + 1);
    strategy->step(state);
  }
  // The timed loop starts from CheckMPI's initial state.
  initialise(fields, initial);
  on_backend.upload(state.f);
  timers = StepTimers{};

  // Test hook: one wrong cell on the last rank after the first step.
  const bool corrupt = cfg.inject_error == info.id && dec.rank == dec.size - 1;
  Reservoir samples(samples_per_rank(dec.size));  // allocated here, not in the loop

  progress::at(label + ": timed loop", neighbours(dec));
  MPI_Barrier(dec.comm);
  MPI_Pcontrol(1);
  const double start = MPI_Wtime();
  double last = start;  // one clock read per step: the step's end is the next one's start
  for (long long t = 1; t <= cfg.itfin && r.failed_at == 0; ++t) {
    progress::beat(t);
    const double excluded = timers.excluded;
    strategy->step(state);
    if (corrupt && t == 1) {
      on_backend.download(state.f);
      fields.f[0][g.index(1, 1, 1)] += Real(1);
      on_backend.upload(state.f);
    }
    const double now = MPI_Wtime();
    const double step = now - last - (timers.excluded - excluded);  // without mock's untimed exchange
    samples.add(step);
    r.step_sum += step;
    last = now;
    r.steps = t;
    if (t % cfg.icheck != 0 && t != cfg.itfin) continue;
    {
      Timed diag(timers.diag);
      on_backend.download(state.f);
      if (t % cfg.icheck == 0) profiles.write(fields, t);
      r.mismatch = validate(fields, initial, t, cfg.reverse);
      long long bad = 0;
      MPI_Allreduce(&r.mismatch.count, &bad, 1, MPI_LONG_LONG, MPI_SUM, dec.comm);
      if (bad > 0) {
        r.failed_at = t;
        try {
          agree(dec.comm, r.mismatch.count ? r.mismatch.describe() : "");
        } catch (const UsageError& e) {
          r.error = "validation failed at t=" + std::to_string(t) + ": " + e.what() + ", " +
                    std::to_string(bad) + " in all";
        }
      }
    }
    last = MPI_Wtime();  // diagnostics stay out of the step samples
  }
  timers.loop = MPI_Wtime() - start - timers.excluded;
  MPI_Pcontrol(0);
  r.valid = r.failed_at == 0;
  r.step_samples = std::move(samples.values());
  progress::at(label + ": statistics", "all ranks (collectives)");
  agree_output(dec.comm, profiles.close());
  return r;
}

template StrategyRun run_strategy<float>(const StrategyInfo&, const Decomposition&, const HaloConfig&,
                                         const BackendChoice&, PendingFiles&);
template StrategyRun run_strategy<double>(const StrategyInfo&, const Decomposition&, const HaloConfig&,
                                          const BackendChoice&, PendingFiles&);

}  // namespace checkmpi
