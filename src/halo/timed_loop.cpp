#include "halo/timed_loop.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "core/watchdog.hpp"
#include "grid/routing.hpp"
#include "halo/probes.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

namespace {

// The fields in the backend's memory, allocated there (so the host backend
// first-touches them with its kernels' schedule), and their host copies
// that initialisation, validation and profiles work on.
template <class Real>
class BackendFields {
 public:
  BackendFields(Backend<Real>& backend, Fields<Real>& host) : backend_(backend), host_(host) {
    for (int f = 0; f < host.count(); ++f) ptrs.push_back(backend.allocate(host.grid.cells()));
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
  void upload(const FieldPtrs<Real>& at) {
    for (int f = 0; f < host_.count(); ++f) backend_.upload(at[std::size_t(f)], host_.data(f), host_.grid.cells());
  }
  void download(const FieldPtrs<Real>& at) {
    for (int f = 0; f < host_.count(); ++f) backend_.download(host_.data(f), at[std::size_t(f)], host_.grid.cells());
  }

  FieldPtrs<Real> ptrs;

 private:
  Backend<Real>& backend_;
  Fields<Real>& host_;
  FieldPtrs<Real> owned_;
};

// "its neighbours x 1/3, y 2/2, z 0/0 (below/above)", for the watchdog: the
// exchange does not say which of them a rank waits for. With `hostnames` (by
// rank), those on other nodes than this rank's with their node: "; on other
// nodes: 1 (cmpi-n1), 3 (cmpi-n3)", the ones an unreachable node stalls.
std::string neighbours(const Decomposition& dec, const std::vector<std::string>& hostnames) {
  std::string text = "one of its neighbours";
  std::vector<int> off;
  for (int d = 0; d < 3; ++d) {
    text += std::string(d ? ", " : " ") + "xyz"[d] + " " + std::to_string(dec.neighbour[d][0]) + "/" +
            std::to_string(dec.neighbour[d][1]);
    for (int peer : dec.neighbour[d])
      if (size_t(peer) < hostnames.size() && size_t(dec.rank) < hostnames.size() &&
          hostnames[size_t(peer)] != hostnames[size_t(dec.rank)] &&
          std::find(off.begin(), off.end(), peer) == off.end())
        off.push_back(peer);
  }
  text += " (below/above)";
  for (size_t i = 0; i < off.size(); ++i)
    text += (i ? ", " : "; on other nodes: ") + std::to_string(off[i]) + " (" + hostnames[size_t(off[i])] + ")";
  return text;
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
  const RouteMismatch m = check_routing(fields, dec, kRoutingSteps);
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


// One launch's fields and the rounds run on them.
template <class Real>
class Runner final : public RoundRunner {
 public:
  Runner(const Decomposition& dec, const HaloConfig& cfg, const BackendChoice& choice,
         const std::vector<std::string>& hostnames)
      : dec_(dec), cfg_(cfg), motion_(cfg.stencil, cfg.reverse), initial_(dec.grid), fields_(dec.grid, motion_),
        backend_(make_backend<Real>(choice)), on_backend_(*backend_, fields_),
        waits_for_(neighbours(dec, hostnames)) {}

  void run(const StrategyInfo& info, long long first, long long last, bool first_round, StrategyRun& r,
           ProfileFiles& profiles) override;
  std::vector<std::pair<std::string, double>> probe(long long steps, long long round) override {
    progress::at("compute probe", "");
    MPI_Barrier(dec_.comm);
    return probe_turn(*backend_, dec_.grid, on_backend_.ptrs, motion_, steps, round);
  }

 private:
  const Decomposition& dec_;
  const HaloConfig& cfg_;
  const Motion motion_;
  const InitialProfiles<Real> initial_;
  Fields<Real> fields_;
  std::unique_ptr<Backend<Real>> backend_;
  BackendFields<Real> on_backend_;
  const std::string waits_for_;  // whom a stalled exchange waits for (the watchdog's line)
};

// Test hook (--inject-delay): waits `fraction` of the time since `since`
// more, so that the step takes 1 + fraction times as long.
void stretch(double since, double fraction) {
  const double until = MPI_Wtime() + (MPI_Wtime() - since) * fraction;
  while (MPI_Wtime() < until) {
  }
}

template <class Real>
void Runner<Real>::run(const StrategyInfo& info, long long first, long long last, bool first_round, StrategyRun& r,
                       ProfileFiles& profiles) {
  const Decomposition& dec = dec_;
  const HaloConfig& cfg = cfg_;
  const Grid& g = dec.grid;
  const std::string label = info.id + " (" + info.alias + ")";
  progress::at(label + ": setup", "");
  StepTimers timers;
  const StepOptions options{cfg.reverse, cfg.border, cfg.sync == SyncMode::Barrier, cfg.self_copy};
  HaloState<Real> state{dec, g, on_backend_.ptrs, options, timers, *backend_, cfg.stencil, motion_};
  auto strategy = make_strategy<Real>(info, cfg.compute);
  strategy->setup(state);
  if (first_round) {
    r.mpi_buffers = strategy->mpi_buffers();
    r.parts = info.parts;
    r.parts.compute = resolved_compute(info.parts, cfg.compute);
    r.traits = strategy->traits();
    r.note = !strategy->note().empty() ? strategy->note() : info.note;
    if (backend_->kind() == BackendKind::Host && !info.host_note.empty()) r.note = info.host_note;
    if (r.mpi_buffers == "staged") r.note = "staged through host memory";
    progress::at(label + ": routing check", waits_for_);
    r.error = run_routing_check(*strategy, state, fields_, on_backend_, label);
    if (!r.error.empty()) {  // a misrouted exchange has nothing worth timing
      r.valid = false;
      return;
    }
  }

  // The timed steps start from the exact state after step `first`, reached by the warm-up steps from the state
  // `warmup` steps before it (the motion is periodic, so a negative step number is a state too): the fields are
  // written whole before the warm-up, which then finds them where a running code's steps find them (an upload
  // after it, with streaming stores, left the first timed step of every round to fetch them from memory).
  initialise(fields_, initial_, first - cfg.warmup);
  on_backend_.upload(state.f);
  progress::at(label + ": warm-up", waits_for_);
  for (long long w = 0; w < cfg.warmup; ++w) {
    progress::beat(w + 1);
    strategy->step(state);
  }
  timers = StepTimers{};

  // Test hooks: one wrong cell on the last rank after the first step; a
  // longer step.
  const bool corrupt = cfg.inject_error == info.id && dec.rank == dec.size - 1;
  const double delay = cfg.inject_delay_strategy == info.id ? cfg.inject_delay : 0.0;
  Reservoir samples(samples_per_round(dec.size, cfg.rounds));  // allocated here, not in the loop

  progress::at(label + ": timed loop", waits_for_);
  MPI_Barrier(dec.comm);
  MPI_Pcontrol(1);
  const double start = MPI_Wtime();
  double last_clock = start;  // one clock read per step: the step's end is the next one's start
  for (long long t = first + 1; t <= last && r.failed_at == 0; ++t) {
    progress::beat(t);
    const double excluded = timers.excluded;
    strategy->step(state);
    if (delay > 0) stretch(last_clock + (timers.excluded - excluded), delay);
    if (corrupt && t == 1) {
      on_backend_.download(state.f);
      fields_.f[0][g.index(1, 1, 1)] += Real(1);
      on_backend_.upload(state.f);
    }
    const double now = MPI_Wtime();
    const double step = now - last_clock - (timers.excluded - excluded);  // without mock's untimed exchange
    samples.add(step);
    r.step_sum += step;
    last_clock = now;
    ++r.steps;
    if (t % cfg.icheck != 0 && t != last) continue;
    {
      Timed diag(timers.diag);
      on_backend_.download(state.f);
      if (t % cfg.icheck == 0) profiles.write(fields_, t);
      r.mismatch = validate(fields_, initial_, t);
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
    last_clock = MPI_Wtime();  // diagnostics stay out of the step samples
  }
  timers.loop = MPI_Wtime() - start - timers.excluded;
  MPI_Pcontrol(0);
  r.valid = r.failed_at == 0;
  r.local += timers;
  r.round_samples.push_back(std::move(samples.values()));
  agree_output(dec.comm, profiles.error());
}

}  // namespace

long long round_start(long long itfin, long long rounds, long long k) {
  return itfin / rounds * k + std::min(k, itfin % rounds);  // the first itfin % rounds rounds one step longer
}

std::unique_ptr<RoundRunner> make_round_runner(const Decomposition& dec, const HaloConfig& cfg,
                                               const BackendChoice& choice,
                                               const std::vector<std::string>& hostnames) {
  if (cfg.precision == Precision::Single) return std::make_unique<Runner<float>>(dec, cfg, choice, hostnames);
  return std::make_unique<Runner<double>>(dec, cfg, choice, hostnames);
}

}  // namespace checkmpi
