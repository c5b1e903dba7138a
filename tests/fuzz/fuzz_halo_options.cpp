// libFuzzer target: checkmpi-halo's command line (options, --KEY overrides,
// strategy lists), the grid choice and the estimates made from it, as far
// as they go before anything runs. Input: NUL-separated arguments; an
// argument "--input" is followed by the namelist text itself. MPI is not
// initialised: proc_* = 0 (left to MPI_Dims_create) is taken as 1.
#include "core/errors.hpp"
#include "fuzz_args.hpp"
#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "halo/resources.hpp"
#include "strategies/strategy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzArgs in("checkmpi-halo", data, size);
  std::string text;
  for (std::size_t i = 1; i + 1 < in.args.size(); ++i)
    if (in.args[i] == "--input") text = in.args[i + 1];
  try {
    checkmpi::CommandLine cli = checkmpi::halo_command_line();
    cli.parse(in.argc(), in.argv.data());
    checkmpi::HaloConfig cfg = checkmpi::make_halo_config(cli, text);
    const auto chosen = checkmpi::select_strategies(cfg.strategies);
    for (long long* p : {&cfg.proc_x, &cfg.proc_y, &cfg.proc_z})
      if (*p == 0) *p = 1;
    for (int nranks : {1, 6, 64, 1 << 20}) {
      const auto dims = checkmpi::choose_dims(cfg, nranks);
      const checkmpi::Grid g{int(cfg.lx / dims[0]), int(cfg.ly / dims[1]), int(cfg.lz / dims[2])};
      checkmpi::fastest_run_seconds(cfg, g, checkmpi::BackendKind::Host, chosen.size());
      checkmpi::watchdog_seconds(cfg, g, nranks);
    }
  } catch (const checkmpi::UsageError&) {
  }
  return 0;
}
