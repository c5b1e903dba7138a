// Checks that depend on the machine, made before anything is allocated or
// written: memory (host and GPU), message sizes, output locations.
#pragma once

#include <cstddef>
#include <vector>

#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "halo/backend_choice.hpp"

namespace checkmpi {

// --json and --samples (rank 0): neither '-', nor in a strategy's folder
// (the run's own profiles and task logs), nor the input file, nor each
// other. Before any folder is made: a refused run writes nothing.
void check_output_files(const HaloConfig& cfg, const std::vector<const StrategyInfo*>& chosen);

// Memory one rank needs at most: `copies` sets of the fields, plus one
// message of all fields per direction, sign and way.
double bytes_per_rank(const Grid& g, const Stencil& s, Precision p, int copies = 2);

// Sets of the fields the backend keeps for the chosen strategies with the
// run's --compute `run` (resolved): 1 if every one shifts in place, else 2
// (a second buffer or temporaries).
int field_copies(const std::vector<const StrategyInfo*>& chosen, Compute run);

// Sets of the fields in host memory: the host's own (initial state,
// validation, profiles) and, on the host backend, the backend's as well.
int host_field_copies(const std::vector<const StrategyInfo*>& chosen, Compute run, BackendKind kind);

// UsageError if one halo message of the block would exceed 2^31 elements.
void check_plane_sizes(const Grid& g, const Stencil& s);

// Seconds the run takes at the very least (each step moving the arrays at a
// fast machine's memory bandwidth); runs that surely take over an hour are
// refused unless --force.
double fastest_run_seconds(const HaloConfig& cfg, const Grid& g, BackendKind kind, std::size_t strategies);

// --watchdog, or by default ten times the longest quiet stretch a healthy run
// has on a slow, crowded node (at least 60 s).
double watchdog_seconds(const HaloConfig& cfg, const Grid& g, int ranks_on_node);

// Collective; throws UsageError on every rank if any rank finds a problem:
// memory, message size, expected run time, output locations (and a JSON file
// that is the input file). Sets `local_size` to the ranks on this node.
void check_resources(const HaloConfig& cfg, const Decomposition& dec, const BackendChoice& backend,
                     const std::vector<const StrategyInfo*>& chosen, int& local_size);

}  // namespace checkmpi
