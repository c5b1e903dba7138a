// Run configuration of checkmpi-halo: the CheckMPI namelist keys, overridable
// on the command line, plus the options checkmpi adds.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "grid/stencil.hpp"

namespace checkmpi {

enum class Precision { Single, Double };
// Bytes of one number at this precision.
inline std::size_t real_bytes(Precision p) { return p == Precision::Single ? 4 : 8; }

// The schema of checkmpi-halo --json (schemas/, docs/halo.md).
inline constexpr char kHaloSchema[] = "checkmpi.halo/5";
enum class SyncMode { Barrier, None };
// --backend: where the fields live and the kernels of step3 on run. Auto is
// cuda when the binary has CUDA and every rank sees a GPU, else host.
enum class BackendRequest { Auto, Host, Cuda };
// How the fields move one cell per step: --compute for the run, and the
// compute part of a strategy (docs/halo.md, "Compute").
enum class Compute {
  Auto,     // --compute: in-place on the host backend, one-pass on cuda; a strategy's part: the run's --compute
  InPlace,  // each field shifted in its own array, swept against its direction (host memory)
  OnePass,  // double-buffered: each cell read once and written once into the second buffer
  TwoPass,  // CheckMPI's FAST variant: copy into temporaries, then shift back
};

struct HaloConfig {
  // &parameters keys (CheckMPI names). The sizes have no default;
  // proc_* = 0: MPI_Dims_create chooses.
  long long lx = 0, ly = 0, lz = 0;
  long long proc_x = 0, proc_y = 0, proc_z = 0;
  long long itfin = 100000;
  long long icheck = 100;
  long long border = 10;
  // halo_width, fields, neighbours (checkmpi's keys, issue 34): CheckMPI's 1, 3, 6 by default.
  Stencil stencil;
  // --local LxMxN: the size per rank; lx, ly, lz follow from it and the grid
  // (resolve_local_size). 0: not given.
  std::array<long long, 3> local{0, 0, 0};

  std::string input = "file.input";  // empty: no input file, keys from options only
  std::vector<std::string> strategies{"all"};
  bool reverse = false;
  Precision precision = Precision::Single;
  long long warmup = 1;  // per round: a fresh set-up's first step is cold
  long long repeat = 1;     // runs of each strategy, each split into rounds
  // Rounds each run's timed steps are split into, every strategy's round k
  // before any round k+1, in an order shuffled per round (0: auto, see
  // resolve_rounds). The round is the unit of independence of the statistics.
  long long rounds = 0;
  unsigned long long seed = 0;  // of the round order and the bootstrap
  bool seed_given = false;      // else rank 0 draws one (the run records it)
  double tie_threshold = 0.02;  // a median slower than the fastest's by less is tied with it
  SyncMode sync = SyncMode::Barrier;
  bool self_copy = false;   // self-exchanges as local copies instead of MPI
  BackendRequest backend = BackendRequest::Auto;
  bool require_gpu_aware = false;  // cuda backend: usage error unless MPI is CUDA-aware
  bool stage = false;              // cuda backend: stage messages through host memory even if MPI is CUDA-aware
  Compute compute = Compute::Auto;  // resolved to the backend's own once the backend is chosen
  std::string outdir = ".";
  std::string json;         // empty: no JSON file
  std::string samples;      // --samples: every launch's step times (halo/launches.hpp); empty: none
  double watchdog = -1;     // seconds without progress before the job is aborted; 0: off; < 0: default
  bool force = false;       // run even if the estimate says it takes hours
  std::string inject_error; // test only: strategy id whose fields get corrupted
  // Test only (--inject-delay STRATEGY:FRACTION): every step of that strategy
  // takes 1 + FRACTION times as long (a busy wait after the step).
  std::string inject_delay_strategy;
  double inject_delay = 0;
  // Test only (--inject-misroute KIND:DIR): the neighbour table of direction
  // misroute_dir is made wrong: "self" (every rank its own neighbour), "swap"
  // (below and above exchanged) or "axis" (the next direction's neighbours).
  std::string misroute_kind;
  int misroute_dir = -1;
  std::vector<std::string> warnings;  // for rank 0 to print: repeated namelist keys, icheck > itfin
};

// The largest global size in one direction: keeps l+2 and plane sizes within int.
constexpr long long kMaxExtent = 1LL << 30;
// The most steps (itfin, icheck, --warmup) and --repeat runs a run takes.
constexpr long long kMaxSteps = 1000000000000LL, kMaxRepeat = 1000000;

// The namelist keys, in CheckMPI's order.
const std::vector<std::string>& halo_keys();
// checkmpi's own namelist keys (halo_width, fields, neighbours), also
// --halo-width, --fields and --neighbours.
const std::vector<std::string>& stencil_keys();

// checkmpi-halo's command line description.
CommandLine halo_command_line();

// Applies, in order: defaults, the namelist in `input_text` (the input file's
// contents; ignored with --no-input), then --KEY VALUE overrides, --size,
// --local, --procs and --iters (each refused beside the keys it sets: one
// spelling per setting on a command line) and the other options. Checks
// everything that does not depend on the number of ranks. Old spellings
// used go into `warnings`. Throws UsageError.
HaloConfig make_halo_config(const CommandLine& cli, const std::string& input_text);

// Rounds per run when --rounds does not say: 10, fewer when itfin has fewer
// than 10 steps per round (at least 1).
constexpr long long kDefaultRounds = 10, kMinRoundSteps = 10;
long long resolve_rounds(const HaloConfig& c);

// Reads a whole file; UsageError if it is missing or unreadable.
// A namelist is a few lines: anything bigger is the wrong file.
std::string read_text_file(const std::string& path, const std::string& what, long long max_bytes = 1 << 20,
                           const std::string& limit = "the 1 MiB a namelist file may have");

const char* precision_name(Precision p);
const char* sync_name(SyncMode s);
const char* backend_request_name(BackendRequest b);
// "auto", "in-place", "one-pass", "two-pass"; parse_compute throws UsageError
// naming `what` (the option or part) and the known names.
const char* compute_name(Compute c);
Compute parse_compute(const std::string& text, const std::string& what);

// "a,b,,c" -> {"a", "b", "c"}: the items of a comma-separated option.
std::vector<std::string> split_list(const std::string& text);

}  // namespace checkmpi
