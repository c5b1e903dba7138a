// libFuzzer target: checkmpi-p2p's command line, and the sweep, memory and
// time it implies, as far as they go before anything runs. Input:
// NUL-separated arguments.
#include "core/errors.hpp"
#include "fuzz_args.hpp"
#include "p2p/estimate.hpp"
#include "p2p/options.hpp"
#include "p2p/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzArgs in("checkmpi-p2p", data, size);
  try {
    checkmpi::CommandLine cli = checkmpi::p2p::p2p_command_line();
    cli.parse(in.argc(), in.argv.data());
    const checkmpi::p2p::P2PConfig cfg = checkmpi::p2p::make_p2p_config(cli);
    checkmpi::p2p::message_sizes(cfg);
    const int nprocs = cfg.pencil_rows > 0 ? cfg.pencil_rows * cfg.pencil_cols : 1 << 20;
    if (checkmpi::p2p::nbc_rank_problem(cfg, nprocs).empty()) checkmpi::p2p::memory_bytes_per_rank(cfg, nprocs);
    checkmpi::p2p::fastest_run_seconds(cfg, nprocs);
    checkmpi::p2p::watchdog_seconds(cfg);
  } catch (const checkmpi::UsageError&) {
  }
  return 0;
}
