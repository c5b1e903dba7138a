#include "halo/main.hpp"

#include <iostream>

#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/output.hpp"
#include "halo/backend_choice.hpp"
#include "halo/json_output.hpp"
#include "halo/probes.hpp"
#include "halo/resources.hpp"
#include "halo/text_output.hpp"
#include "halo/timed_loop.hpp"

namespace checkmpi {

int halo_main(int argc, char** argv) {
  MPI_Comm world = MPI_COMM_WORLD;
  set_default_host_threads();
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  Decomposition dec;
  try {
    CommandLine cli = halo_command_line();
    collectively(world, [&] { cli.parse(argc, argv); });
    if (cli.has("help") || cli.has("version") || cli.has("list-strategies")) {
      if (rank == 0) {
        if (cli.has("help")) std::cout << cli.help();
        else if (cli.has("version")) std::cout << "checkmpi-halo " << version_text() << "\n";
        else std::cout << strategy_listing();
      }
      return kExitOk;
    }

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
    const HaloConfig cfg = collectively(world, [&] { return make_halo_config(cli, text); });
    auto chosen = collectively(world, [&] { return select_strategies(cfg.strategies); });
    dec = collectively(world, [&] { return make_decomposition(cfg, world); });
    const BackendChoice backend = choose_backend(cfg, dec.comm);
    const auto skipped = collectively(world, [&] { return skip_unrunnable(chosen, cfg, backend.kind); });
    check_resources(cfg, dec, backend, chosen);

    const RunContext ctx = gather_context(dec.comm, "checkmpi-halo");
    if (rank == 0) {
      print_header(cfg, dec, ctx, chosen, backend);
      for (const Skipped& k : skipped)
        std::cout << "skipped " << k.info->id << " (" << k.info->alias << "): " << k.reason << "\n";
    }

    // Each strategy cfg.repeat times, interleaved (A B C A B C ...), so
    // that drift over the job reaches every strategy alike.
    std::vector<StrategyResult> results(chosen.size());
    const long long runs = cfg.repeat * static_cast<long long>(chosen.size());
    long long done = 0;
    for (long long rep = 0; rep < cfg.repeat; ++rep) {
      for (size_t i = 0; i < chosen.size(); ++i) {
        const StrategyInfo& info = *chosen[i];
        StrategyResult& r = results[i];
        r.info = &info;
        ++done;
        if (!r.valid) continue;  // a strategy that failed validation is not run again
        if (rank == 0)
          std::cout << "[" << done << "/" << runs << "] " << info.id << " (" << info.alias << ") ..." << std::flush;
        add_run(r,
                cfg.precision == Precision::Single ? run_strategy<float>(info, dec, cfg, backend)
                                                   : run_strategy<double>(info, dec, cfg, backend),
                dec.comm);
        if (rank == 0) {
          std::cout << " " << per_step_text(r.repeat_medians.back()) << " per step (median), "
                    << (r.valid ? "valid" : "INVALID") << "\n";
          if (!r.valid) std::cerr << "checkmpi-halo: " << info.id << ": " << r.error << "\n";
        }
      }
    }
    for (auto& r : results) {
      summarise(r, dec.comm);
      write_task_log(r, dec, cfg);
    }

    Json doc = results_json(cfg, dec, ctx, backend, results, skipped);
    if (cli.has("memcpy-probe")) {
      const Stats bw = over_ranks({memcpy_bandwidth(dec.grid, cfg.precision, backend)}, dec.comm)[0];
      doc["probes"]["memcpy_bandwidth"] = stats_json(bw);
      if (rank == 0)
        std::cout << (backend.kind == BackendKind::Cuda ? "device-to-device cudaMemcpy" : "memcpy")
                  << " bandwidth: " << fixed(bw.mean / 1e9, 2) << " GB/s per rank (mean)\n";
    }
    bool all_valid = true;
    for (const auto& r : results) all_valid = all_valid && r.valid;
    int code = all_valid ? kExitOk : kExitInvalid;
    if (rank == 0) {
      print_table(results);
      if (!cfg.json.empty()) {
        if (!write_file(cfg.json, doc.dump() + "\n")) {
          std::cerr << "checkmpi-halo: error: cannot write JSON file '" << cfg.json << "'\n";
          code = kExitInternal;
        } else {
          std::cout << "results written to " << cfg.json << "\n";
        }
      }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, dec.comm);
    free_decomposition(dec);
    return code;
  } catch (const UsageError& e) {
    if (rank == 0) std::cerr << "checkmpi-halo: error: " << e.what() << "\n";
    free_decomposition(dec);
    return kExitUsage;
  } catch (const RunError& e) {  // after the run started: every rank throws it together
    if (rank == 0) std::cerr << "checkmpi-halo: error: " << e.what() << "\n";
    free_decomposition(dec);
    return kExitInternal;
  }
}

}  // namespace checkmpi
