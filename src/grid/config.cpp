#include "grid/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "core/watchdog.hpp"
#include "grid/namelist.hpp"

namespace checkmpi {

const std::vector<std::string>& halo_keys() {
  static const std::vector<std::string> keys{"lx",     "ly",    "lz",     "proc_x", "proc_y",
                                             "proc_z", "itfin", "icheck", "border"};
  return keys;
}

const std::vector<std::string>& stencil_keys() {
  static const std::vector<std::string> keys{"halo_width", "fields", "neighbours"};
  return keys;
}

CommandLine halo_command_line() {
  std::vector<OptionSpec> specs{
      {"input", 0, true, "namelist input file (default file.input)", false, "FILE"},
      {"no-input", 0, false, "read no input file: keys come from the options below"},
      {"size", 0, true, "global size (CheckMPI's keys: --lx, --ly, --lz)", false, "LXxLYxLZ"},
      {"local", 0, true, "size per rank instead: the global size is this times the grid", false, "LxMxN"},
      {"procs", 0, true, "ranks per direction (CheckMPI's keys: --proc_x, --proc_y, --proc_z, where 0 lets MPI "
                         "choose; default: MPI chooses)", false, "PXxPYxPZ"},
      {"iters", 0, true, "timed steps (CheckMPI's key: --itfin; default 100000)", false, "N"},
      {"icheck", 0, true, "steps between validations and profile dumps (default 100)", false, "N"},
      {"border", 0, true, "overlap=masked's border in cells (default 10)", false, "N"},
      {"halo-width", 0, true, "halo cells on each side, 1 to 4; every field then moves W cells per step "
                              "(namelist key halo_width; default 1)", false, "W"},
      {"fields", 0, true, "fields per rank, 1 to 1024 (namelist key fields; default 3)", false, "F"},
      {"neighbours", 0, true, "neighbours each rank exchanges with: faces (6), and edges (18), and corners (26); "
                              "the fields then move along a D3Q19 or D3Q27 lattice's velocities (namelist key "
                              "neighbours; default 6)", false, "6|18|26"},
      {"strategy", 's', true, "comma-separated ids, aliases or numbers, 'all' (default), or compositions of "
                              "parts such as pack=kernel,transport=persistent (see --list-strategies)", false, "LIST"},
      {"list-strategies", 0, false, "list the strategies and exit"},
      {"plan", 0, true, "write what a run with these options would be (grid, block, memory, messages per "
                        "strategy; schema checkmpi.plan/1) to FILE ('-': standard output) and exit, running "
                        "nothing", false, "FILE"},
      {"np", 0, true, "with --plan: the ranks to plan for (default: the grid's, when --procs gives it whole)",
       false, "N"},
      {"default-np", 0, true, "with --plan: the ranks when neither --np nor the grid gives them", false, "N"},
      {"reverse", 0, false, "reversed propagation (field(i) = field(i+1))"},
      {"precision", 0, true, "working precision (default single)", false, "single|double"},
      {"warmup", 0, true, "untimed steps before each round's timed steps, from a fresh set-up (default 1)", false,
       "N"},
      {"repeat", 0, true, "run the timed steps N times per strategy, each time in rounds; statistics over all "
                          "(default 1)", false, "N"},
      {"rounds", 0, true, "split each run's timed steps into N rounds, every strategy's round k before any round "
                          "k+1, the order shuffled per round (default 10, fewer below 10 steps per round)", false, "N"},
      {"seed", 0, true, "seed of the round order and the bootstrap (default: drawn, and recorded)", false, "N"},
      {"samples", 0, true, "keep each round's step times in FILE with the earlier launches' already there (a new "
                           "file if none) and rank them all, launches as the top level; every launch of one "
                           "run passes the same FILE (schema checkmpi.samples/1)", false, "FILE"},
      {"tie-threshold", 0, true, "a median within this fraction of the fastest's is tied with it (default 0.02)",
       false, "F"},
      {"sync", 0, true, "barriers after each direction, as CheckMPI, or none (default barrier)", false,
       "barrier|none"},
      {"self-copy", 0, false, "where a rank is its own neighbour, copy locally instead of through MPI"},
      {"outdir", 0, true, "directory for per-strategy output (default .)", false, "DIR"},
      {"json", 0, true, std::string("write results as JSON (schema ") + kHaloSchema + ") to this file", false, "FILE"},
      {"events", 0, true, "write the run's progress as JSON lines to FILE, one as each strategy starts (for a "
                          "program that follows the run)", false, "FILE"},
      {"memcpy-probe", 0, false, "also measure memcpy bandwidth (JSON probes; used by bench/)"},
      {"compute-probe", 0, false,
       "also time the backend's own whole-step compute, no MPI, a turn in every round (JSON probes; bench/)"},
      {"backend", 0, true, "where fields and kernels live (default auto: cuda if built with it "
                           "and every rank sees a GPU)", false, "auto|host|cuda"},
      {"require-gpu-aware", 0, false, "cuda backend: fail unless MPI is CUDA-aware"},
      {"stage", 0, false, "cuda backend: stage messages through host memory even if MPI is CUDA-aware"},
      {"watchdog", 0, true, "seconds without progress after which the job is diagnosed and aborted; 0: off "
                            "(default from the run's size, at least 60)", false, "S"},
      {"force", 0, false, "run even if the estimate says the run takes more than an hour"},
      {"compute", 0, true, "how the strategies move the fields (default auto: in place on the host, one pass "
                           "into a second buffer on cuda; two-pass: CheckMPI's, host steps in place, kernel steps "
                           "copy-then-shift)", false, "auto|in-place|one-pass|two-pass"},
      {"help", 'h', false, "show this help and exit"},
      {"version", 0, false, "print the version and exit"},
      {"inject-error", 0, true, "test only: corrupt one cell for this strategy id", true},
      {"inject-delay", 0, true, "test only: STRATEGY:FRACTION, each step of that strategy 1+FRACTION times as long",
       true},
      {"inject-misroute", 0, true, "test only: KIND:DIR, KIND self|swap|axis, DIR x|y|z: wrong neighbours", true},
  };
  // The namelist keys override the input file's; those other options name
  // (the vocabulary's --size, --procs, --iters) stay out of the list.
  for (const auto& key : halo_keys())
    if (key != "icheck" && key != "border") specs.push_back({key, 0, true, "", true});
  return CommandLine("checkmpi-halo", "[--input FILE] [--KEY VALUE ...] [options]", specs, {{"-o", "outdir"}});
}

long long resolve_rounds(const HaloConfig& c) {
  if (c.rounds > 0) return c.rounds;
  return std::clamp(c.itfin / kMinRoundSteps, 1LL, kDefaultRounds);
}

std::string read_text_file(const std::string& path, const std::string& what, long long max_bytes,
                           const std::string& limit) {
  const auto fail = [&](const std::string& why) { return UsageError("cannot read " + what + " '" + path + "': " + why); };
  // Non-blocking: a FIFO swapped in after a check cannot make the open wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw fail(std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw fail("not a regular file");
  }
  if (st.st_size > max_bytes) {
    ::close(fd);
    throw fail(std::to_string(st.st_size) + " bytes, more than " + limit);
  }
  std::string text;
  char chunk[1 << 16];
  for (;;) {  // to the end, not st_size: files in /proc say 0
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw fail(std::strerror(err));
    }
    if (n == 0) break;
    text.append(chunk, std::size_t(n));
    if ((long long)text.size() > max_bytes) {
      ::close(fd);
      throw fail("more than " + limit);
    }
  }
  ::close(fd);
  return text;
}

const char* precision_name(Precision p) { return p == Precision::Single ? "single" : "double"; }

const char* sync_name(SyncMode s) { return s == SyncMode::Barrier ? "barrier" : "none"; }

const char* compute_name(Compute c) {
  switch (c) {
    case Compute::InPlace: return "in-place";
    case Compute::OnePass: return "one-pass";
    case Compute::TwoPass: return "two-pass";
    default: return "auto";
  }
}

Compute parse_compute(const std::string& text, const std::string& what) {
  for (Compute c : {Compute::Auto, Compute::InPlace, Compute::OnePass, Compute::TwoPass})
    if (text == compute_name(c)) return c;
  throw UsageError(what + " must be auto, in-place, one-pass or two-pass, got '" + text + "'");
}

const char* backend_request_name(BackendRequest b) {
  return b == BackendRequest::Host ? "host" : b == BackendRequest::Cuda ? "cuda" : "auto";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

namespace {

long long* key_slot(HaloConfig& c, const std::string& key) {
  if (key == "lx") return &c.lx;
  if (key == "ly") return &c.ly;
  if (key == "lz") return &c.lz;
  if (key == "proc_x") return &c.proc_x;
  if (key == "proc_y") return &c.proc_y;
  if (key == "proc_z") return &c.proc_z;
  if (key == "itfin") return &c.itfin;
  if (key == "icheck") return &c.icheck;
  return &c.border;
}

// halo_width, fields, neighbours: from the namelist, then --halo-width,
// --fields, --neighbours; an error names the spelling the value came in.
void apply_stencil(HaloConfig& c, const std::map<std::string, long long>& keys, const CommandLine& cli) {
  long long v[3] = {c.stencil.width, c.stencil.fields, c.stencil.neighbours};
  std::string named[3];
  const char* options[3] = {"halo-width", "fields", "neighbours"};
  for (int i = 0; i < 3; ++i) {
    named[i] = stencil_keys()[std::size_t(i)];
    if (auto it = keys.find(named[i]); it != keys.end()) v[i] = it->second;
    if (auto text = cli.value(options[i])) {
      named[i] = std::string("--") + options[i];
      v[i] = parse_integer(*text, named[i]);
    }
  }
  if (v[0] < 1 || v[0] > kMaxHaloWidth)
    throw UsageError(named[0] + " must be 1 to " + std::to_string(kMaxHaloWidth) + ", got " + std::to_string(v[0]));
  if (v[1] < 1 || v[1] > kMaxFields)
    throw UsageError(named[1] + " must be 1 to " + std::to_string(kMaxFields) + ", got " + std::to_string(v[1]));
  if (v[2] != 6 && v[2] != 18 && v[2] != 26)
    throw UsageError(named[2] + " must be 6, 18 or 26, got " + std::to_string(v[2]));
  c.stencil = Stencil{int(v[0]), int(v[1]), int(v[2])};
}

void check_config(const HaloConfig& c, const std::set<std::string>& given) {
  const std::pair<const char*, long long> sizes[] = {{"lx", c.lx}, {"ly", c.ly}, {"lz", c.lz}};
  for (const auto& [name, v] : sizes) {
    if (!given.count(name))
      throw UsageError(std::string(name) + " is not set (give it in the input file, as --size LXxLYxLZ or --" +
                       name + ", or give --local LxMxN)");
    if (c.local[0] > 0) continue;  // from --local and the grid: checked then (resolve_local_size)
    if (v <= 0) throw UsageError(std::string(name) + " must be positive, got " + std::to_string(v));
    if (v > kMaxExtent)
      throw UsageError(std::string(name) + " " + std::to_string(v) + " is too large: at most " +
                       std::to_string(kMaxExtent));
  }
  const std::pair<const char*, long long> procs[] = {
      {"proc_x", c.proc_x}, {"proc_y", c.proc_y}, {"proc_z", c.proc_z}};
  for (const auto& [name, v] : procs) {
    if (v < 0) throw UsageError(std::string(name) + " must be positive (or 0 to choose), got " + std::to_string(v));
    if (v > kMaxExtent)  // no more ranks along an axis than cells can have
      throw UsageError(std::string(name) + " " + std::to_string(v) + " is too large: at most " +
                       std::to_string(kMaxExtent));
  }
  // Upper limits far above any useful run, so that products of counts stay
  // far from overflow (strategies x repeats x rounds x steps).
  const auto in_range = [](const char* name, long long v, long long lo, long long hi, const char* what) {
    if (v < lo || v > hi)
      throw UsageError(std::string(name) + " must be " + what + " (" + std::to_string(lo) + " to " +
                       std::to_string(hi) + "), got " + std::to_string(v));
  };
  in_range("itfin", c.itfin, 1, kMaxSteps, "positive");
  in_range("icheck", c.icheck, 1, kMaxSteps, "positive");
  in_range("border", c.border, 1, kMaxExtent, "positive, at most the largest extent");
  in_range("--warmup", c.warmup, 0, kMaxSteps, "0 or more");
  in_range("--repeat", c.repeat, 1, kMaxRepeat, "at least 1");
  if (c.rounds < 0) throw UsageError("--rounds must be at least 1, got " + std::to_string(c.rounds));
  if (c.rounds > c.itfin)
    throw UsageError("--rounds " + std::to_string(c.rounds) + " is more than itfin (" + std::to_string(c.itfin) +
                     "): every round needs a step");
}

// "64x64x32": three positive integers.
std::array<long long, 3> parse_triple(const std::string& text, const std::string& option, const char* example) {
  std::array<long long, 3> v{};
  std::stringstream ss(text);
  std::string part;
  size_t n = 0;
  bool ok = true;
  while (std::getline(ss, part, 'x')) {
    if (n < 3) {
      try {
        v[n] = parse_integer(part, option);
      } catch (const UsageError&) {
        ok = false;
      }
    }
    ++n;
  }
  if (!ok || n != 3 || text.empty() || text.back() == 'x' || v[0] < 1 || v[1] < 1 || v[2] < 1)
    throw UsageError(option + " expects three positive integers like " + example + ", got '" + text + "'");
  return v;
}

// On one command line each setting has one spelling: the vocabulary's
// (--size, --local, --procs, --iters) or CheckMPI's keys; either overrides the input file.
void refuse_both(const CommandLine& cli, const std::string& option, const std::vector<std::string>& others,
                 const std::string& what) {
  if (!cli.has(option)) return;
  for (const auto& other : others)
    if (cli.has(other))
      throw UsageError("--" + option + " " + cli.get(option, "") + " and --" + other + " " + cli.get(other, "") +
                       " both set " + what + "; give one of them");
}

void apply_vocabulary(const CommandLine& cli, HaloConfig& c, std::set<std::string>& given) {
  refuse_both(cli, "size", {"local", "lx", "ly", "lz"}, "the global size");
  refuse_both(cli, "local", {"lx", "ly", "lz"}, "the global size");
  refuse_both(cli, "procs", {"proc_x", "proc_y", "proc_z"}, "the grid of ranks");
  refuse_both(cli, "iters", {"itfin"}, "the number of timed steps");
  if (auto v = cli.value("size")) {
    const auto size = parse_triple(*v, "--size", "64x64x32");
    c.lx = size[0], c.ly = size[1], c.lz = size[2];
  }
  if (auto v = cli.value("local")) {
    c.local = parse_triple(*v, "--local", "32x32x32");
    c.lx = c.ly = c.lz = 0;  // from the grid, once it is known (resolve_local_size)
  }
  if (cli.has("size") || cli.has("local")) given.insert({"lx", "ly", "lz"});
  if (auto v = cli.value("procs")) {
    const auto procs = parse_triple(*v, "--procs", "2x2x1");
    c.proc_x = procs[0], c.proc_y = procs[1], c.proc_z = procs[2];
  }
  if (cli.has("iters")) c.itfin = cli.get_int("iters", c.itfin);
}

void parse_delay(HaloConfig& c, const std::string& text) {
  const size_t colon = text.rfind(':');
  const std::string fraction = colon == std::string::npos ? "" : text.substr(colon + 1);
  c.inject_delay_strategy = text.substr(0, colon);
  c.inject_delay = fraction.empty() ? -1.0 : parse_number(fraction, "--inject-delay's FRACTION");
  if (c.inject_delay_strategy.empty() || !(c.inject_delay > 0 && c.inject_delay <= 10))
    throw UsageError("--inject-delay must be STRATEGY:FRACTION with FRACTION above 0 and at most 10, got '" + text +
                     "'");
}

void parse_misroute(HaloConfig& c, const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string dir = colon == std::string::npos ? "" : text.substr(colon + 1);
  if ((kind != "self" && kind != "swap" && kind != "axis") || dir.size() != 1 || dir.find_first_of("xyz") != 0)
    throw UsageError("--inject-misroute must be KIND:DIR with KIND self, swap or axis and DIR x, y or z, got '" +
                     text + "'");
  c.misroute_kind = kind;
  c.misroute_dir = dir[0] - 'x';
}

}  // namespace

HaloConfig make_halo_config(const CommandLine& cli, const std::string& input_text) {
  HaloConfig c;
  if (cli.has("no-input") && cli.has("input"))
    throw UsageError("--no-input and --input '" + cli.get("input", "") + "' contradict each other; give one");
  c.input = cli.has("no-input") ? "" : cli.get("input", "file.input");
  std::set<std::string> given;
  std::map<std::string, long long> stencil;
  if (!c.input.empty()) {
    std::set<std::string> allowed(halo_keys().begin(), halo_keys().end());
    allowed.insert(stencil_keys().begin(), stencil_keys().end());
    for (const auto& [key, value] : parse_namelist(input_text, "parameters", allowed, c.input, &c.warnings)) {
      if (std::find(stencil_keys().begin(), stencil_keys().end(), key) != stencil_keys().end()) {
        stencil[key] = value;
        continue;
      }
      *key_slot(c, key) = value;
      given.insert(key);
    }
  }
  apply_stencil(c, stencil, cli);
  for (const auto& key : halo_keys()) {
    if (auto v = cli.value(key)) {
      *key_slot(c, key) = parse_integer(*v, "--" + key);
      given.insert(key);
    }
  }
  apply_vocabulary(cli, c, given);
  c.warnings.insert(c.warnings.begin(), cli.deprecations().begin(), cli.deprecations().end());

  if (auto v = cli.value("strategy")) {
    c.strategies = split_list(*v);
    if (c.strategies.empty()) throw UsageError("--strategy needs at least one name");
  }
  c.reverse = cli.has("reverse");
  const std::string precision = cli.get("precision", "single");
  if (precision == "single") c.precision = Precision::Single;
  else if (precision == "double") c.precision = Precision::Double;
  else throw UsageError("--precision must be single or double, got '" + precision + "'");
  c.warmup = cli.get_int("warmup", 1);
  c.repeat = cli.get_int("repeat", 1);
  if (cli.has("rounds")) {
    c.rounds = cli.get_int("rounds", 0);
    if (c.rounds < 1) throw UsageError("--rounds must be at least 1, got " + std::to_string(c.rounds));
  }
  if ((c.seed_given = cli.has("seed"))) {
    const long long seed = cli.get_int("seed", 0);
    if (seed < 0 || seed > (1LL << 53) - 1)  // exact in JSON's numbers, so a run's recorded seed gives it back
      throw UsageError("--seed must be 0 to 2^53-1 (9007199254740991), got " + std::to_string(seed));
    c.seed = static_cast<unsigned long long>(seed);
  }
  c.tie_threshold = cli.get_double("tie-threshold", 0.02);
  if (!(c.tie_threshold >= 0 && c.tie_threshold < 1))
    throw UsageError("--tie-threshold must be at least 0 and below 1 (a fraction: 0.02 is 2%), got '" +
                     cli.get("tie-threshold", "") + "'");
  const std::string sync = cli.get("sync", "barrier");
  if (sync == "barrier") c.sync = SyncMode::Barrier;
  else if (sync == "none") c.sync = SyncMode::None;
  else throw UsageError("--sync must be barrier or none, got '" + sync + "'");
  c.self_copy = cli.has("self-copy");
  const std::string backend = cli.get("backend", "auto");
  if (backend == "auto") c.backend = BackendRequest::Auto;
  else if (backend == "host") c.backend = BackendRequest::Host;
  else if (backend == "cuda") c.backend = BackendRequest::Cuda;
  else throw UsageError("--backend must be auto, host or cuda, got '" + backend + "'");
  c.require_gpu_aware = cli.has("require-gpu-aware");
  c.stage = cli.has("stage");
  c.compute = parse_compute(cli.get("compute", "auto"), "--compute");
  c.outdir = cli.get("outdir", ".");
  if (c.outdir.empty()) throw UsageError("--outdir must not be empty");
  c.json = cli.get("json", "");
  if (cli.has("json") && c.json.empty()) throw UsageError("--json needs a file name");
  if (cli.has("events") && cli.get("events", "").empty()) throw UsageError("--events needs a file name");
  c.samples = cli.get("samples", "");
  if (cli.has("samples") && c.samples.empty()) throw UsageError("--samples needs a file name");
  c.watchdog = watchdog_option(cli);
  c.force = cli.has("force");
  c.inject_error = cli.get("inject-error", "");
  if (auto v = cli.value("inject-misroute")) parse_misroute(c, *v);
  if (auto v = cli.value("inject-delay")) parse_delay(c, *v);
  if (!cli.positional().empty()) throw UsageError("unexpected argument '" + cli.positional()[0] + "'");
  check_config(c, given);
  c.rounds = resolve_rounds(c);
  if (c.icheck > c.itfin)
    c.warnings.push_back("icheck (" + std::to_string(c.icheck) + ") is larger than itfin (" +
                         std::to_string(c.itfin) + "): no profile is written, and the fields are validated " +
                         "only after the last step");
  return c;
}

}  // namespace checkmpi
