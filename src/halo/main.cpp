#include "halo/main.hpp"

#include <cstdint>
#include <iostream>
#include <memory>
#include <random>

#include "core/atomic_file.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/events.hpp"
#include "core/text.hpp"
#include "core/watchdog.hpp"
#include "halo/backend_choice.hpp"
#include "halo/json_output.hpp"
#include "halo/launches.hpp"
#include "halo/plan.hpp"
#include "halo/probes.hpp"
#include "halo/resources.hpp"
#include "halo/text_output.hpp"
#include "halo/timed_loop.hpp"

namespace checkmpi {

namespace {

// Test hooks must name something this run does: a fault that is never
// injected would let a test pass for the wrong reason.
void check_fault_hooks(const HaloConfig& cfg, const std::vector<const StrategyInfo*>& chosen) {
  const std::pair<const char*, const std::string*> hooks[] = {{"--inject-error", &cfg.inject_error},
                                                               {"--inject-delay", &cfg.inject_delay_strategy}};
  for (const auto& [option, id] : hooks) {
    if (id->empty()) continue;
    bool found = false;
    for (const StrategyInfo* s : chosen) found = found || s->id == *id;
    if (!found) throw UsageError(std::string(option) + ": '" + *id + "' is not the id of a strategy this run runs");
  }
}

// --seed, or one rank 0 draws for everyone.
unsigned long long run_seed(const HaloConfig& cfg, MPI_Comm comm) {
  unsigned long long seed = cfg.seed;
  if (!cfg.seed_given) seed = (std::uint64_t(std::random_device{}()) << 21) ^ std::uint64_t(std::random_device{}());
  seed &= (1ULL << 53) - 1;  // exact in JSON's numbers, and --seed takes it back
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  return seed;
}

// Every strategy cfg.repeat times, each run's timed steps in cfg.rounds
// rounds: round k of every strategy before round k+1 of any, in an order
// shuffled per round, so that drift over the job reaches them alike and the
// rounds are independent samples of each (docs/halo.md, "How checkmpi
// decides"). A strategy that fails a check is not run again. With `probe`,
// the compute probe takes a turn in every round among the strategies (its
// place shuffled with theirs) and each turn is added there.
using ProbeTurns = std::vector<std::vector<std::pair<std::string, double>>>;
std::vector<StrategyResult> run_rounds(const std::vector<const StrategyInfo*>& chosen, const Decomposition& dec,
                                       const HaloConfig& cfg, const BackendChoice& backend, PendingFiles& files,
                                       const RunContext& ctx, ProbeTurns* probe) {
  const int rank = dec.rank;
  const auto runner = make_round_runner(dec, cfg, backend, ctx.hostnames);
  std::vector<StrategyResult> results(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) results[i].info = chosen[i];
  const long long total = cfg.repeat * cfg.rounds * static_cast<long long>(chosen.size());
  long long done = 0;
  for (long long rep = 0; rep < cfg.repeat; ++rep) {
    std::vector<StrategyRun> runs(chosen.size());
    std::vector<std::unique_ptr<ProfileFiles>> profiles;
    for (const StrategyInfo* info : chosen) {
      profiles.push_back(std::make_unique<ProfileFiles>(files, cfg.outdir + "/" + info->id, rank));
      agree_output(dec.comm, profiles.back()->error());
    }
    for (long long round = 0; round < cfg.rounds; ++round) {
      const long long first = round_start(cfg.itfin, cfg.rounds, round);
      const long long last = round_start(cfg.itfin, cfg.rounds, round + 1);
      const int probe_at = int(chosen.size());  // the probe's index in the order
      const std::vector<int> order = round_order(probe_at + (probe ? 1 : 0), cfg.seed, rep, round);
      if (rank == 0) {
        std::cout << "[" << (rep * cfg.rounds + round + 1) << "/" << cfg.repeat * cfg.rounds << "] "
                  << (cfg.repeat > 1 ? "run " + std::to_string(rep + 1) + ", " : "") << "round " << round + 1
                  << ", steps " << first + 1 << "-" << last << ":";
        for (const int i : order) std::cout << " " << (i == probe_at ? "probe" : chosen[size_t(i)]->id);
        std::cout << "\n" << std::flush;
      }
      for (const int i : order) {
        if (i == probe_at) {
          probe->push_back(runner->probe(last - first, rep * cfg.rounds + round));
          continue;
        }
        const StrategyInfo& info = *chosen[size_t(i)];
        StrategyRun& run = runs[size_t(i)];
        ++done;
        if (!results[size_t(i)].valid || !run.valid) continue;
        events::start(done, total, info.id + " (" + info.alias + ")");
        runner->run(info, first, last, round == 0, run, *profiles[size_t(i)]);
        if (rank == 0 && !run.valid)  // one write per line: a launcher that tags output tags each write
          std::cerr << (std::string("checkmpi-halo: ") + info.id + ": " + run.error + "\n");
      }
    }
    for (size_t i = 0; i < chosen.size(); ++i) {
      agree_output(dec.comm, profiles[i]->close());
      if (results[i].valid) add_run(results[i], std::move(runs[i]), dec.comm);
    }
  }
  return results;
}

// The JSON and samples file (rank 0) are written to their temporaries first,
// so that a full disk is found before anything is renamed; then every
// rank's profiles and task logs, and those two last, replace the previous
// files. Collective; OutputError on every rank if any file cannot be written.
void commit_outputs(const HaloConfig& cfg, const Decomposition& dec, const Json& doc, const Json& samples,
                    PendingFiles& files) {
  std::vector<std::unique_ptr<AtomicFile>> last;
  std::string error = files.finish_all();
  if (dec.rank == 0)
    for (const auto& [path, what] : {std::pair{cfg.samples, &samples}, std::pair{cfg.json, &doc}}) {
      if (path.empty()) continue;
      last.push_back(std::make_unique<AtomicFile>(path, /*sync=*/true));
      last.back()->append(what->dump(path == cfg.samples ? 0 : 2) + "\n");
      if (error.empty()) error = last.back()->finish();
    }
  agree_output(dec.comm, error);
  agree_output(dec.comm, files.commit_all());
  for (const auto& file : last)
    if (error.empty()) error = file->commit();
  agree_output(dec.comm, error);
}

// A document to FILE, whole or not at all ('-': standard output), never
// over the input file (`option` names FILE's option in the error).
void write_document(const Json& doc, const std::string& path, const CommandLine& cli, const std::string& option) {
  if (path.empty()) throw UsageError(option + " needs a file name (or - for standard output)");
  if (path != "-" && !cli.has("no-input") && same_file(path, cli.get("input", "file.input")))
    throw UsageError(option + " '" + path + "' is the input file; refusing to write over it");
  const std::string text = doc.dump() + "\n";
  if (path == "-") {
    std::cout << text;
    return;
  }
  AtomicFile file(path);
  file.append(text);
  if (!file.commit().empty()) throw OutputError(file.error());
}

// --list-strategies --json FILE: the catalog, or the rows --strategy selects
// (compositions included), as checkmpi.catalog/2.
void list_strategies_json(const CommandLine& cli, int rank) {
  const auto rows = select_strategies(split_list(cli.get("strategy", "all")));
  if (rank == 0) write_document(catalog_json(rows), cli.get("json", "-"), cli, "--json");
}

// --plan FILE: checkmpi.plan/1 for --np ranks (or the grid's), this process
// alone: no MPI traffic, nothing allocated or written but FILE.
void write_plan(const CommandLine& cli, HaloConfig cfg, int rank) {
  const int nranks = plan_ranks(cli, cfg);
  resolve_local_size(cfg, nranks);
  auto chosen = select_strategies(cfg.strategies);
  const BackendChoice backend = choose_backend(cfg, MPI_COMM_SELF);
  cfg.compute = run_compute(cfg.compute, backend.kind);
  const auto skipped = skip_unrunnable(chosen, cfg, backend.kind);
  const Json doc = plan_json(cfg, nranks, backend, chosen, skipped);
  if (rank == 0) write_document(doc, cli.get("plan", "-"), cli, "--plan");
}

}  // namespace

int halo_main(int argc, char** argv) {
  MPI_Comm world = MPI_COMM_WORLD;
  set_default_host_threads();
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  Decomposition dec;
  try {
    CommandLine cli = halo_command_line();
    collectively(world, [&] { cli.parse(argc, argv); });
    same_arguments(world, argc, argv);
    if (cli.has("help") || cli.has("version") || cli.has("list-strategies")) {
      if (rank == 0) {
        if (cli.has("help")) std::cout << cli.help();
        else if (cli.has("version")) std::cout << "checkmpi-halo " << version_text() << "\n";
        else if (!cli.has("json")) std::cout << strategy_listing();
      }
      if (cli.has("list-strategies") && cli.has("json")) list_strategies_json(cli, rank);
      return kExitOk;
    }
    collectively(world, check_host_threads);

    // Rank 0 reads the input; everyone parses the same text.
    std::string text;
    const bool with_input = !cli.has("no-input");
    const std::string input = cli.get("input", "file.input");
    if (with_input) {
      collectively(world, [&] {
        if (rank == 0) text = read_text_file(input, "input file");
      });
      int len = int(text.size());
      MPI_Bcast(&len, 1, MPI_INT, 0, world);
      text.resize(size_t(len));
      MPI_Bcast(text.data(), len, MPI_CHAR, 0, world);
    }
    HaloConfig cfg = collectively(world, [&] { return make_halo_config(cli, text); });
    if (cli.has("plan")) {
      write_plan(cli, cfg, rank);
      return kExitOk;
    }
    for (const char* option : {"np", "default-np"})
      if (cli.has(option))
        throw UsageError(std::string("--") + option + " is for --plan; a run's ranks are the ones mpirun starts");
    int world_size = 1;
    MPI_Comm_size(world, &world_size);
    collectively(world, [&] { resolve_local_size(cfg, world_size); });
    auto chosen = collectively(world, [&] { return select_strategies(cfg.strategies); });
    collectively(world, [&] { check_fault_hooks(cfg, chosen); });
    if (rank == 0)
      for (const std::string& w : cfg.warnings)
        std::cerr << (std::string("checkmpi-halo: warning: ") + w + "\n");
    dec = collectively(world, [&] { return make_decomposition(cfg, world); });
    const BackendChoice backend = choose_backend(cfg, dec.comm);
    cfg.compute = collectively(world, [&] { return run_compute(cfg.compute, backend.kind); });
    const auto skipped = collectively(world, [&] { return skip_unrunnable(chosen, cfg, backend.kind); });
    collectively(world, [&] {  // before check_resources makes the strategies' folders
      events::open(cli.get("events", ""), rank, "checkmpi-halo",
                   {{cfg.input, "input file"}, {cfg.json, "--json file"}, {cfg.samples, "--samples file"}});
    });
    int ranks_on_node = 1;
    check_resources(cfg, dec, backend, chosen, ranks_on_node);
    const Watchdog watchdog("checkmpi-halo", watchdog_seconds(cfg, dec.grid, ranks_on_node), rank);
    progress::at("gathering the run's context", "all ranks (collectives)");

    const RunContext ctx = gather_context(dec.comm, "checkmpi-halo");
    cfg.seed = run_seed(cfg, dec.comm);
    // --samples: the earlier launches, refused before anything runs if they are another run's.
    const Json fingerprint = launch_fingerprint(cfg, dec, backend.kind, chosen);
    const std::vector<Launch> earlier = collectively(world, [&] {
      return rank == 0 && !cfg.samples.empty() ? read_launches(cfg.samples, fingerprint) : std::vector<Launch>{};
    });
    if (rank == 0) {
      print_header(cfg, dec, ctx, chosen, backend);
      for (const Skipped& k : skipped)
        std::cout << "skipped " << k.info->id << " (" << k.info->alias << "): " << k.reason << "\n";
    }

    PendingFiles files;  // every rank's profiles and task logs, renamed into place at the end
    ProbeTurns probe_turns;
    std::vector<StrategyResult> results =
        run_rounds(chosen, dec, cfg, backend, files, ctx, cli.has("compute-probe") ? &probe_turns : nullptr);
    if (rank == 0 && !cfg.samples.empty()) add_launches(results, earlier);
    for (auto& r : results) {
      summarise(r, dec.comm);
      write_task_log(r, dec, cfg, files);
    }
    std::vector<int> group;
    if (rank == 0) group = rank_results(results, cfg.tie_threshold, cfg.seed, separable(results, ctx));
    Json samples;
    if (rank == 0 && !cfg.samples.empty()) {
      std::vector<Launch> all = earlier;
      all.push_back(this_launch(results, ctx.date, cfg.seed));
      samples = samples_json(fingerprint, all);
    }

    Json doc = results_json(cfg, dec, ctx, backend, results, skipped, group);
    progress::at("writing the results", "all ranks (collectives)");
    if (cli.has("memcpy-probe")) {
      const Stats bw = over_ranks({memcpy_bandwidth(dec.grid, cfg.stencil.fields, cfg.precision, backend)}, dec.comm)[0];
      doc["probes"]["memcpy_bandwidth"] = stats_json(bw);
      if (rank == 0)
        std::cout << (backend.kind == BackendKind::Cuda ? "device-to-device cudaMemcpy" : "memcpy")
                  << " bandwidth: " << fixed(bw.mean / 1e9, 2) << " GB/s per rank (mean)\n";
    }
    if (cli.has("compute-probe")) {
      const ComputeProbe probe = summarise_probe(probe_turns, cfg.repeat * cfg.itfin, backend.kind);
      const double bytes = double(shift_bytes(dec.grid, cfg.stencil.fields, real_bytes(cfg.precision)));
      const std::vector<Stats> st = over_ranks({probe.seconds_per_step, bytes / probe.seconds_per_step}, dec.comm);
      Json j = Json::object();
      j["compute"] = compute_name(probe.compute);
      j["steps"] = probe.steps;
      j["seconds_per_step"] = stats_json(st[0]);
      j["bandwidth"] = stats_json(st[1]);
      std::string each;
      if (!probe.kernels.empty()) {
        std::vector<double> secs;
        for (const auto& k : probe.kernels) secs.push_back(k.second);
        const std::vector<Stats> ks = over_ranks(secs, dec.comm);
        Json kernels = Json::object();
        std::size_t fastest = 0;
        for (std::size_t i = 0; i < ks.size(); ++i) {
          if (ks[i].mean < ks[fastest].mean) fastest = i;
          kernels[probe.kernels[i].first] = stats_json(ks[i]);
          each += (i ? ", " : "; ") + probe.kernels[i].first + " " + per_step_text(ks[i].mean);
        }
        j["kernels"] = kernels;
        j["fastest"] = probe.kernels[fastest].first;  // by the mean over ranks
      }
      doc["probes"]["compute"] = j;
      if (rank == 0)
        std::cout << "compute probe (" << compute_name(probe.compute) << ", no MPI): "
                  << per_step_text(st[0].mean) << " per step, " << fixed(st[1].mean / 1e9, 2)
                  << " GB/s per rank (mean)" << each << "\n";
    }
    bool all_valid = true;
    for (const auto& r : results) all_valid = all_valid && r.valid;
    if (rank == 0) print_table(results, group, cfg, ctx);
    commit_outputs(cfg, dec, doc, samples, files);
    if (rank == 0 && ctx.nodes == 1) {  // what a run stopped by SIGKILL left where this one wrote
      const auto folder = [](const std::string& path) {
        const auto slash = path.rfind('/');
        return slash == std::string::npos ? std::string() : path.substr(0, slash == 0 ? 1 : slash);
      };
      int removed = 0;
      for (const std::string& path : {cfg.json, cfg.samples})  // a user's folder: only these files' temporaries
        if (!path.empty() && path != "-")
          removed += remove_stale_temporaries(folder(path), {path.substr(path.rfind('/') + 1)});
      for (const auto& r : results) removed += remove_stale_temporaries(cfg.outdir + "/" + r.info->id);
      if (removed > 0)
        std::cout << "removed " << removed << " temporary file" << (removed == 1 ? "" : "s")
                  << " left by a stopped run\n";
    }
    if (rank == 0 && !cfg.json.empty()) std::cout << "results written to " << cfg.json << "\n";
    if (rank == 0 && !cfg.samples.empty())
      std::cout << "samples of " << earlier.size() + 1 << " launch" << (earlier.empty() ? "" : "es") << " in "
                << cfg.samples << "\n";
    const int code = all_valid ? kExitOk : kExitInvalid;
    free_decomposition(dec);
    return code;
  } catch (const UsageError& e) {
    if (rank == 0) std::cerr << (std::string("checkmpi-halo: error: ") + e.what() + "\n");
    free_decomposition(dec);
    return kExitUsage;
  } catch (const OutputError& e) {
    if (rank == 0) std::cerr << (std::string("checkmpi-halo: error: ") + e.what() + "\n");
    free_decomposition(dec);
    return kExitInternal;
  }
}

}  // namespace checkmpi
