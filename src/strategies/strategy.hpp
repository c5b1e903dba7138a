// The Strategy interface the run loop drives, and the catalog that names
// strategies: each row a combination of parts (parts.hpp) run by the engine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/json.hpp"
#include "grid/config.hpp"
#include "grid/fields.hpp"
#include "grid/planes.hpp"
#include "strategies/parts.hpp"

namespace checkmpi {

// What a strategy needs of the run's options (and no more of them).
struct StepOptions {
  bool reverse = false;    // --reverse: field(i) = field(i+1) (already in HaloState::motion)
  long long border = 10;   // overlap=masked's border in cells
  bool barrier = true;     // --sync barrier: barriers inside the timed exchange
  bool self_copy = false;  // --self-copy: a rank's messages to itself as local copies
};

// What a strategy works on during a run.
template <class Real>
struct HaloState {
  const Decomposition& dec;
  const Grid& grid;
  FieldPtrs<Real> f;  // the current fields, in the backend's memory; a strategy may swap or move them
  const StepOptions& options;
  StepTimers& timers;
  Backend<Real>& backend;
  const Stencil& stencil;  // fields, halo width, neighbours
  const Motion& motion;    // how each field moves

  // Whether the messages towards offset `o` go to this rank itself (one
  // rank along every axis of o) and --self-copy replaces them with local copies.
  bool copies_locally(const Offset& o) const {
    if (!options.self_copy) return false;
    for (int a = 0; a < 3; ++a)
      if (o[std::size_t(a)] != 0 && dec.dims[std::size_t(a)] != 1) return false;
    return true;
  }
};

// One way of doing a time step: exchange the halos and move every field,
// filling the timers.
template <class Real>
class Strategy {
 public:
  virtual ~Strategy() = default;
  // Called once before the timed loop (datatypes, buffers, requests); untimed.
  virtual void setup(HaloState<Real>&) = 0;
  virtual void step(HaloState<Real>&) = 0;
  // How messages reach MPI: "host" memory, "device" memory (GPU-aware MPI),
  // or "staged" through host buffers. After setup.
  virtual std::string mpi_buffers() const = 0;
  // What one step does on this rank. After setup.
  virtual Traits traits() const = 0;
  // What the results table should say about how it ran ("" if nothing).
  virtual std::string note() const { return ""; }
};

struct StrategyInfo {
  int number = -1;        // CheckMPI's StepN; -1 for checkmpi's own rows and compositions
  std::string id;         // "step0": output folder, JSON, --strategy
  std::string alias;      // "sendrecv-dtype": what it does
  std::string summary;    // one line for --list-strategies
  Parts parts;
  std::string host_note;  // on the host backend, what the user should know ("" if nothing)
  std::string note;       // what the table always says beside the verdict ("" if nothing)

  bool host_only() const { return !host_only_reason(parts).empty(); }
};

// The engine for `info`'s parts; `run` (the run's --compute, resolved) resolves compute=auto.
template <class Real>
std::unique_ptr<Strategy<Real>> make_strategy(const StrategyInfo& info, Compute run);

const std::vector<StrategyInfo>& strategy_catalog();

// Resolves ids ("step2"), aliases ("sendrecv-pack"), numbers ("2"), "all"
// and compositions, in the order given, without repeats. `names` is the
// comma-split --strategy list: consecutive KEY=VALUE items form one
// composition, and a repeated key starts the next. A composition equal to a
// catalog row is that row. Throws UsageError for an unknown name or an
// invalid composition (with the reason).
std::vector<const StrategyInfo*> select_strategies(const std::vector<std::string>& names);

// Whether `info` was chosen by "all" rather than by name in `names`.
bool chosen_by_all(const StrategyInfo& info, const std::vector<std::string>& names);

// The table printed by --list-strategies.
std::string strategy_listing();

// The same rows as a document of schema checkmpi.catalog/2 (--list-strategies
// --json): ids, parts, availability and each row's PartTraits, and what
// --compute auto runs on each backend.
Json catalog_json(const std::vector<const StrategyInfo*>& rows);
// One row of it: what a result (`catalog`) and a plan carry for their strategy.
Json catalog_row_json(const StrategyInfo& s);

// A strategy's parts as JSON, every part named (results' and the catalog's `parts`).
Json parts_json(const Parts& p);

}  // namespace checkmpi
