// The Strategy interface every exchange strategy implements, and the catalog
// that names them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/config.hpp"
#include "core/fields.hpp"
#include "core/halo.hpp"

namespace checkmpi {

// What a strategy works on during a run.
template <class Real>
struct HaloState {
  const Decomposition& dec;
  const Grid& grid;
  FieldPtrs<Real> f;  // the current fields, in the backend's memory; a strategy may swap them
  const HaloConfig& config;
  StepTimers& timers;
  Backend<Real>& backend;

  // Whether direction `dir`'s messages go to this rank itself and --self-copy
  // replaces them with local copies.
  bool copies_locally(int dir) const { return config.self_copy && dec.dims[dir] == 1; }
};

// One way of doing a time step: exchange the halos, then move every field one
// cell. Strategies that overlap the two override step() as a whole.
template <class Real>
class Strategy {
 public:
  virtual ~Strategy() = default;
  // Called once before the timed loop (datatypes, buffers); untimed.
  virtual void setup(HaloState<Real>&) {}
  virtual void step(HaloState<Real>& s) {
    {
      Timed t(s.timers.comm);
      exchange(s);
    }
    Timed t(s.timers.compute);
    compute(s);
  }
  // How messages reach MPI: "host" memory, "device" memory (GPU-aware MPI),
  // or "staged" through host buffers.
  virtual std::string mpi_buffers(const HaloState<Real>&) const { return "host"; }
  // Bytes this rank sends per step (MPI payload).
  virtual std::size_t bytes_per_step(const Grid& g) const {
    std::size_t planes = 0;
    for (int d = 0; d < 3; ++d) planes += 2 * 3 * plane_count(g, d);
    return planes * sizeof(Real);
  }

 protected:
  // Exchanges x, then y, then z; times each direction; with --sync barrier
  // ends each direction with a barrier, as CheckMPI does.
  virtual void exchange(HaloState<Real>& s) {
    for (int dir = 0; dir < 3; ++dir) {
      Timed t(s.timers.dir[dir]);
      exchange_direction(s, dir);
      if (s.config.sync == SyncMode::Barrier) MPI_Barrier(s.dec.comm);
    }
  }
  virtual void exchange_direction(HaloState<Real>&, int /*dir*/) {}
  // CheckMPI's in-place shift on host memory (step0-step2).
  virtual void compute(HaloState<Real>& s) { shift_in_place(s.grid, s.f, s.config.reverse); }
};

struct StrategyInfo {
  int number;            // CheckMPI's StepN
  std::string id;        // "step0": output folder, JSON, --strategy
  std::string alias;     // "sendrecv-dtype": what it does
  std::string summary;   // one line for --list-strategies
  bool host_only;        // works on host memory only (seed Table 1: CPU-only)
  std::string host_note; // on the host backend, what the user should know ("" if nothing)
  std::unique_ptr<Strategy<float>> (*make_single)();
  std::unique_ptr<Strategy<double>> (*make_double)();

  template <class Real>
  std::unique_ptr<Strategy<Real>> make() const {
    if constexpr (std::is_same_v<Real, float>) return make_single();
    else return make_double();
  }
};

const std::vector<StrategyInfo>& strategy_catalog();

// Resolves ids ("step2"), aliases ("sendrecv-pack"), numbers ("2") and "all",
// in the order given, without repeats. Throws UsageError for an unknown name.
std::vector<const StrategyInfo*> select_strategies(const std::vector<std::string>& names);

// The table printed by --list-strategies.
std::string strategy_listing();

}  // namespace checkmpi
