#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "core/errors.hpp"
#include "grid/config.hpp"
#include "grid/decomposition.hpp"

using namespace checkmpi;

namespace {
HaloConfig config(std::vector<const char*> args, const std::string& text) {
  args.insert(args.begin(), "checkmpi-halo");
  CommandLine cli = halo_command_line();
  cli.parse(int(args.size()), args.data());
  return make_halo_config(cli, text);
}

std::string error_of(std::vector<const char*> args, const std::string& text) {
  try {
    config(std::move(args), text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kInput = "&parameters lx=12 ly=8 lz=4 proc_x=2 proc_y=0 proc_z=1 itfin=20 icheck=5 /";
}  // namespace

TEST(Config, DefaultsAsCheckMpi) {
  HaloConfig c = config({}, "&parameters lx=4 ly=4 lz=4 /");
  EXPECT_EQ(c.itfin, 100000);
  EXPECT_EQ(c.icheck, 100);
  EXPECT_EQ(c.border, 10);
  EXPECT_EQ(c.input, "file.input");
  EXPECT_EQ(c.precision, Precision::Single);
  EXPECT_EQ(c.sync, SyncMode::Barrier);
  EXPECT_EQ(c.outdir, ".");
  EXPECT_FALSE(c.reverse);
}

TEST(Config, CommandLineOverridesTheFile) {
  HaloConfig c = config({"--itfin", "7", "--lx=24", "--precision", "double", "--reverse", "--strategy",
                         "step2,sendrecv-dtype", "--sync", "none", "--warmup", "3"},
                        kInput);
  EXPECT_EQ(c.itfin, 7);
  EXPECT_EQ(c.lx, 24);
  EXPECT_EQ(c.ly, 8);
  EXPECT_EQ(c.precision, Precision::Double);
  EXPECT_TRUE(c.reverse);
  EXPECT_EQ(c.sync, SyncMode::None);
  EXPECT_EQ(c.warmup, 3);
  ASSERT_EQ(c.strategies.size(), 2u);
  EXPECT_EQ(c.strategies[1], "sendrecv-dtype");
}

TEST(Config, NoInputTakesKeysFromOptions) {
  HaloConfig c = config({"--no-input", "--lx", "8", "--ly", "8", "--lz", "8"}, "");
  EXPECT_EQ(c.input, "");
  EXPECT_EQ(c.lx, 8);
}

TEST(Config, BadValuesNameTheProblem) {
  EXPECT_EQ(error_of({"--lx", "0"}, kInput), "lx must be positive, got 0");
  EXPECT_EQ(error_of({}, "&parameters lx=4 ly=4 /"),
            "lz is not set (give it in the input file, as --size LXxLYxLZ or --lz, or give --local LxMxN)");
  EXPECT_EQ(error_of({"--ly", "-4"}, kInput), "ly must be positive, got -4");
  EXPECT_EQ(error_of({"--itfin", "0"}, kInput), "itfin must be positive (1 to 1000000000000), got 0");
  EXPECT_EQ(error_of({"--icheck", "0"}, kInput), "icheck must be positive (1 to 1000000000000), got 0");
  EXPECT_EQ(error_of({"--icheck", "-3"}, kInput), "icheck must be positive (1 to 1000000000000), got -3");
  EXPECT_EQ(error_of({"--border", "0"}, kInput), "border must be positive, at most the largest extent (1 to 1073741824), got 0");
  EXPECT_EQ(error_of({"--proc_x", "-1"}, kInput), "proc_x must be positive (or 0 to choose), got -1");
  EXPECT_EQ(error_of({"--itfin", "ten"}, kInput), "value of --itfin is not an integer: 'ten'");
  EXPECT_EQ(error_of({"--precision", "half"}, kInput), "--precision must be single or double, got 'half'");
  EXPECT_EQ(error_of({"--sync", "maybe"}, kInput), "--sync must be barrier or none, got 'maybe'");
  EXPECT_EQ(error_of({"--warmup", "-1"}, kInput), "--warmup must be 0 or more (0 to 1000000000000), got -1");
  EXPECT_EQ(error_of({"--backend", "gpu"}, kInput), "--backend must be auto, host or cuda, got 'gpu'");
  EXPECT_EQ(error_of({"extra"}, kInput), "unexpected argument 'extra'");
}

TEST(Config, BackendOptions) {
  HaloConfig c = config({}, kInput);
  EXPECT_EQ(c.backend, BackendRequest::Auto);
  EXPECT_FALSE(c.require_gpu_aware);
  EXPECT_FALSE(c.stage);
  c = config({"--backend", "cuda", "--require-gpu-aware", "--stage"}, kInput);
  EXPECT_EQ(c.backend, BackendRequest::Cuda);
  EXPECT_TRUE(c.require_gpu_aware);
  EXPECT_TRUE(c.stage);
  EXPECT_EQ(config({"--backend=host"}, kInput).backend, BackendRequest::Host);
  EXPECT_STREQ(backend_request_name(BackendRequest::Auto), "auto");
}

TEST(Config, UnknownOptionAndMissingValue) {
  CommandLine cli = halo_command_line();
  const char* a[] = {"checkmpi-halo", "--bogus"};
  EXPECT_THROW(cli.parse(2, a), UsageError);
  const char* b[] = {"checkmpi-halo", "--input"};
  try {
    halo_command_line().parse(2, b);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "option --input needs a value");
  }
}

TEST(Config, VocabularySetsWhatTheKeysSet) {
  HaloConfig c = config({"--size", "24x16x8", "--procs", "2x2x1", "--iters", "9"}, kInput);
  EXPECT_EQ(c.lx, 24);
  EXPECT_EQ(c.ly, 16);
  EXPECT_EQ(c.lz, 8);
  EXPECT_EQ(c.proc_x, 2);
  EXPECT_EQ(c.proc_y, 2);
  EXPECT_EQ(c.proc_z, 1);
  EXPECT_EQ(c.itfin, 9);
  EXPECT_EQ(c.icheck, 5);  // the file's, untouched
  EXPECT_TRUE(c.warnings.empty());
  // --local: the global size follows from the grid once the rank count is known.
  c = config({"--no-input", "--local", "4x5x6", "--procs", "2x1x3"}, "");
  EXPECT_EQ(c.lx, 0);
  resolve_local_size(c, 6);
  EXPECT_EQ(c.lx, 8);
  EXPECT_EQ(c.ly, 5);
  EXPECT_EQ(c.lz, 18);
  c = config({"--local", "4x4x4"}, kInput);  // the file's proc_y = 0: MPI chooses, its sizes give way
  resolve_local_size(c, 4);
  EXPECT_EQ(c.lx, 8);
  EXPECT_EQ(c.ly, 8);
  EXPECT_EQ(c.lz, 4);
  c = config({"--no-input", "--local", "1073741824x1x1", "--procs", "2x1x1"}, "");
  try {
    resolve_local_size(c, 2);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--local 1073741824x1x1 on a grid of 2x1x1 ranks makes lx larger than 1073741824");
  }
}

TEST(Config, OneSpellingPerSettingAndOldSpellings) {
  EXPECT_EQ(error_of({"--size", "8x8x8", "--ly", "4"}, kInput),
            "--size 8x8x8 and --ly 4 both set the global size; give one of them");
  EXPECT_EQ(error_of({"--local", "8x8x8", "--size", "8x8x8"}, kInput),
            "--size 8x8x8 and --local 8x8x8 both set the global size; give one of them");
  EXPECT_EQ(error_of({"--procs", "2x1x1", "--proc_x", "2"}, kInput),
            "--procs 2x1x1 and --proc_x 2 both set the grid of ranks; give one of them");
  EXPECT_EQ(error_of({"--itfin", "3", "--iters", "4"}, kInput),
            "--iters 4 and --itfin 3 both set the number of timed steps; give one of them");
  EXPECT_EQ(error_of({"--size", "8x8"}, kInput), "--size expects three positive integers like 64x64x32, got '8x8'");
  EXPECT_EQ(error_of({"--size", "8x8x8x"}, kInput),
            "--size expects three positive integers like 64x64x32, got '8x8x8x'");
  EXPECT_EQ(error_of({"--procs", "2x0x1"}, kInput),
            "--procs expects three positive integers like 2x2x1, got '2x0x1'");
  EXPECT_EQ(error_of({"--local", "x4x4"}, kInput),
            "--local expects three positive integers like 32x32x32, got 'x4x4'");
  // -o was --outdir's short form: it still is, with a deprecation line among the warnings.
  const HaloConfig c = config({"-o", "out"}, "&parameters lx=4 ly=4 lz=4 lx=8 /");
  EXPECT_EQ(c.outdir, "out");
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0], "-o is the old spelling of --outdir; it works in this release only");
  EXPECT_NE(c.warnings[1].find("'lx' is given again"), std::string::npos) << c.warnings[1];
}

TEST(Config, HelpFitsEightyColumns) {
  const std::string help = halo_command_line().help();
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), CommandLine::kHelpWidth) << line;
  for (const char* word : {"--size LXxLYxLZ", "--local LxMxN", "--procs PXxPYxPZ", "--iters N", "--itfin",
                           "--proc_x", "--lx"})
    EXPECT_NE(help.find(word), std::string::npos) << word;
  EXPECT_EQ(help.find("-o, "), std::string::npos);  // deprecated: not advertised
}

TEST(Decomposition, FixedAndChosenDims) {
  HaloConfig c = config({}, kInput);  // proc_y = 0: chosen
  auto dims = choose_dims(c, 4);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], 2);
  EXPECT_EQ(dims[2], 1);
  c.proc_x = c.proc_y = c.proc_z = 0;
  dims = choose_dims(c, 8);
  EXPECT_EQ(dims[0] * dims[1] * dims[2], 8);
}

TEST(Decomposition, AGridThatDividesWhereMpisDoesNot) {
  // MPI_Dims_create's 2x2x1 does not divide 36x35x35; of the grids of 4 ranks only 4x1x1 does.
  HaloConfig c = config({}, "&parameters lx=36 ly=35 lz=35 /");
  EXPECT_EQ(choose_dims(c, 4), (std::array<int, 3>{4, 1, 1}));
  // Where MPI's grid divides, it stands.
  c = config({}, "&parameters lx=64 ly=64 lz=8 /");
  EXPECT_EQ(choose_dims(c, 4), (std::array<int, 3>{2, 2, 1}));
  // MPI's 3x2x2 cannot cut lz = 7: of those that can, the least surface per rank (4x3x1: 15x20x7 and 3x4x1:
  // 20x15x7 tie at 545 cells, ahead of 6x2x1 at 580); the tie goes to more ranks along x.
  c = config({}, "&parameters lx=60 ly=60 lz=7 /");
  EXPECT_EQ(choose_dims(c, 12), (std::array<int, 3>{4, 3, 1}));
  // A given proc_* is kept: proc_y = 1 and lx = 9 leave 1x1x4.
  c = config({"--proc_y", "1"}, "&parameters lx=9 ly=8 lz=8 /");
  EXPECT_EQ(choose_dims(c, 4), (std::array<int, 3>{1, 1, 4}));
}

TEST(Decomposition, WrongRankCountAndIndivisibleSizes) {
  HaloConfig c = config({}, "&parameters lx=12 ly=8 lz=4 proc_x=2 proc_y=2 proc_z=2 /");
  try {
    choose_dims(c, 4);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "proc_x*proc_y*proc_z = 8 does not match the 4 MPI ranks");
  }
  c = config({}, "&parameters lx=9 ly=8 lz=4 proc_x=2 proc_y=1 proc_z=1 /");
  try {
    choose_dims(c, 2);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "lx = 9 is not divisible by proc_x = 2");
  }
}

TEST(Decomposition, HugeGridsFailWithoutOverflow) {
  HaloConfig c = config({"--proc_x", "1073741824", "--proc_y", "1073741824", "--proc_z", "1073741824"},
                        "&parameters lx=8 ly=8 lz=8 /");
  try {
    choose_dims(c, 1 << 30);  // each dimension fits the ranks, their product 2^90 does not fit 64 bits
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "proc_x*proc_y*proc_z overflows: far more than the 1073741824 MPI ranks");
  }
  // Above the cells an axis can have: refused with the input (the plan multiplied them and wrapped around).
  EXPECT_EQ(error_of({"--proc_x", "4294967296", "--proc_y", "4294967296"}, "&parameters lx=8 ly=8 lz=8 /"),
            "proc_x 4294967296 is too large: at most 1073741824");
}

TEST(Config, WarningsForRepeatedKeysAndIcheckAboveItfin) {
  const HaloConfig c = config({}, "&parameters lx=4 ly=4 lz=4\nlx=8 itfin=3 icheck=5 /");
  EXPECT_EQ(c.lx, 8);  // the last value, as Fortran
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0], "file.input, line 2: 'lx' is given again; the last value (8) is used, as Fortran does");
  EXPECT_EQ(c.warnings[1], "icheck (5) is larger than itfin (3): no profile is written, and the fields are "
                           "validated only after the last step");
  EXPECT_TRUE(config({}, kInput).warnings.empty());
}

TEST(Config, WatchdogForceAndFaultHooks) {
  EXPECT_EQ(config({}, kInput).watchdog, -1);  // default: from the run's size
  EXPECT_EQ(config({"--watchdog", "0"}, kInput).watchdog, 0);
  EXPECT_EQ(config({"--watchdog", "2.5", "--force"}, kInput).watchdog, 2.5);
  EXPECT_TRUE(config({"--force"}, kInput).force);
  for (const char* bad : {"-1", "1e8", "0.5", "1e-300"})
    EXPECT_EQ(error_of({"--watchdog", bad}, kInput),
              std::string("--watchdog must be 0 (off) or 1 to 10^7 seconds, got '") + bad + "'");
  for (const char* bad : {"nan", "inf", "0x10", "1.5s", "", " 2"})
    EXPECT_EQ(error_of({"--watchdog", bad}, kInput),
              std::string("value of --watchdog is not a decimal number: '") + bad + "'");
  EXPECT_EQ(config({"--watchdog", "1"}, kInput).watchdog, 1);
  EXPECT_EQ(config({"--watchdog", "1e3"}, kInput).watchdog, 1000);
  EXPECT_EQ(error_of({"--watchdog", "3", "--watchdog", "4"}, kInput), "option --watchdog is given twice; give it once");
  EXPECT_EQ(error_of({"--seed", "9007199254740992"}, kInput),
            "--seed must be 0 to 2^53-1 (9007199254740991), got 9007199254740992");
  EXPECT_EQ(error_of({"--no-input", "--input", "x.input", "--size", "8x8x8"}, kInput),
            "--no-input and --input 'x.input' contradict each other; give one");
  const HaloConfig m = config({"--inject-misroute", "axis:z"}, kInput);
  EXPECT_EQ(m.misroute_kind, "axis");
  EXPECT_EQ(m.misroute_dir, 2);
  for (const char* bad : {"self", "self:", "self:xy", "turn:x", ":x"})
    EXPECT_NE(error_of({"--inject-misroute", bad}, kInput).find("--inject-misroute must be KIND:DIR"),
              std::string::npos)
        << bad;
}

TEST(Decomposition, MisrouteMakesOneDirectionWrong) {
  Decomposition d;  // the middle rank of 3x3x3, numbered row-major as MPI_Cart_create does
  d.dims = {3, 3, 3};
  d.coords = {1, 1, 1};
  d.rank = 13;
  set_neighbours(d);
  EXPECT_EQ(d.neighbour[0], (std::array<int, 2>{4, 22}));
  EXPECT_EQ(d.neighbour[1], (std::array<int, 2>{10, 16}));
  EXPECT_EQ(d.neighbour[2], (std::array<int, 2>{12, 14}));
  EXPECT_EQ(d.at({1, 1, 1}), 26);
  EXPECT_EQ(d.at({-1, 0, 1}), 5);
  Decomposition self = d, swap = d, axis = d;
  misroute(self, "self", 0);
  misroute(swap, "swap", 1);
  misroute(axis, "axis", 2);
  EXPECT_EQ(self.neighbour[0], (std::array<int, 2>{13, 13}));
  EXPECT_EQ(swap.neighbour[1], (std::array<int, 2>{16, 10}));
  EXPECT_EQ(axis.neighbour[2], (std::array<int, 2>{4, 22}));  // x's neighbours
  EXPECT_EQ(self.neighbour[1], d.neighbour[1]);               // the others' faces untouched
  // Edges and corners along the direction follow: x dropped, y negated.
  EXPECT_EQ(self.at({1, 1, 0}), d.at({0, 1, 0}));
  EXPECT_EQ(swap.at({1, 1, -1}), d.at({1, -1, -1}));
  EXPECT_EQ(swap.at({1, 0, -1}), d.at({1, 0, -1}));
}
