"""The `checkmpi` command line: run, p2p, report, predict, export, calibrate, campaign."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from checkmpi import __version__, bounds
from checkmpi.errors import CheckmpiError, Stopped, stopping_on_signals
from checkmpi.results import P2P_MODES


class Parser(argparse.ArgumentParser):
    """argparse that reports mistakes as one line through CheckmpiError."""

    def error(self, message: str):  # type: ignore[override]
        raise CheckmpiError(f"{message} (see '{self.prog} --help')")


class OneSetting(argparse.Action):
    """A setting with several names (--iters and CheckMPI's --itfin): two of
    them on one command line are an error, as in checkmpi-halo."""

    def __init__(self, option_strings, dest, what: str, **kwargs):
        self.what = what
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_spelled", {})
        first = given.setdefault(self.dest, (option_string, values))
        if first[0] != option_string:
            raise CheckmpiError(f"{first[0]} {first[1]} and {option_string} {values} both set {self.what}; "
                                "give one of them")
        setattr(namespace, self.dest, values)


class OldSpelling(argparse.Action):
    """A name an option had before: it still works for one release, with a
    deprecation line; --help leaves it out."""

    def __init__(self, option_strings, dest, new: str, nargs=None, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, nargs=nargs, default=argparse.SUPPRESS, help=argparse.SUPPRESS,
                         **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"checkmpi: warning: {option_string} is the old spelling of {self.new}; it works in this release only",
              file=sys.stderr)
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


MAX_GBS = 1e6  # a copy bandwidth (GB/s)

LAUNCHER_HELP = ("MPI launcher: mpirun (default), mpiexec or srun; Open MPI and MPICH are told apart, srun gets "
                 "the PMI plugin the executable's MPI needs")


def _launcher_options(p: argparse.ArgumentParser, what: str = "the MPI job") -> None:
    """What every command that launches takes: where the tools are, the launcher, its options, a time limit."""
    p.add_argument("--bin", metavar="DIR", help="folder of the native executables (else $CHECKMPI_BIN, "
                   "./build/bin, PATH)")
    p.add_argument("--launcher", default="mpirun", metavar="mpirun|mpiexec|srun", help=LAUNCHER_HELP)
    p.add_argument("--mpi-args", default="", metavar='"ARGS"',
                   help='options for the launcher, e.g. --mpi-args "--hostfile hosts --bind-to core --map-by '
                        'socket" (split as the shell would)')
    p.add_argument("--timeout", type=bounds.option("--timeout", bounds.MAX_SECONDS, "seconds"), metavar="S",
                   help=f"stop {what} after S seconds (above 0, at most 10^7)")


def _no_report(p: argparse.ArgumentParser, extra: str = "") -> None:
    p.add_argument("--no-report", action="store_true", help="print the tables only: no plots, no HTML page" + extra)


def _launch_options(p: argparse.ArgumentParser) -> None:
    _launcher_options(p)
    p.add_argument("--hostfile", metavar="FILE", help="the nodes to run on, in the launcher's format (Open MPI: "
                   "--hostfile, MPICH: -f; e.g. scripts/cluster-local.sh's)")
    p.add_argument("--hosts", metavar="H1,H2,...", help="the nodes to run on, each NAME or NAME:SLOTS (Open MPI: "
                   "--host, MPICH: -hosts)")
    p.add_argument("-o", "--json", metavar="FILE", help="where the results go (default results/<kind>-<time>.json)")
    p.add_argument("--outdir", metavar="DIR", help="per-run output, log and report (default: the JSON path "
                   "without .json)")
    _no_report(p)
    p.add_argument("--wide", action="store_true", help="tables with every figure (default: fit 80 columns)")


def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategy", default="all", metavar="LIST", help="as checkmpi-halo --strategy: ids, aliases, "
                   "numbers, all, compositions (default all)")
    p.add_argument("--precision", choices=("single", "double"), default="single",
                   help="working precision (default single)")
    p.add_argument("--sync", choices=("barrier", "none"), default="barrier",
                   help="as checkmpi-halo --sync (default barrier)")
    p.add_argument("--compute", choices=("auto", "in-place", "one-pass", "two-pass"), default="auto",
                   help="as checkmpi-halo --compute (default auto: what the backend runs by default, in-place on "
                        "the host)")
    p.add_argument("--self-copy", action="store_true", help="as checkmpi-halo --self-copy")
    p.add_argument("--border", type=int, default=10, help="overlap=masked's border (default 10)")
    p.add_argument("--backend", choices=("host", "cuda"), default="host", help="whose pack bandwidth (default host)")
    p.add_argument("--copy-bandwidth", type=bounds.option("--copy-bandwidth", MAX_GBS, "GB/s"), metavar="GB/s",
                   help="--p2p: copy bandwidth (default: --halo's probe, else 10)")
    p.add_argument("--bin", metavar="DIR", help="folder of checkmpi-halo (else $CHECKMPI_BIN, ./build/bin, PATH)")


def build_parser() -> Parser:
    top = Parser(prog="checkmpi", description="Runs checkmpi's MPI benchmarks and reports their results.",
                 allow_abbrev=False)
    top.add_argument("--version", action="version", version=f"checkmpi {__version__}", help="print and exit")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True,
                             help="what to do (COMMAND -h: its options)")

    run = sub.add_parser("run", allow_abbrev=False, help="run checkmpi-halo (no options: the main job)",
                         description="Runs checkmpi-halo through MPI. With no options it is the main job: one "
                         "rank per core, an automatic decomposition, a per-rank size and step count that take "
                         "about half a minute, every strategy; a file.input in the working directory supplies "
                         "sizes, grid and steps instead, as in CheckMPI. Options it does not know go to "
                         "checkmpi-halo (e.g. --precision double, --warmup 10, --reverse, --repeat 3).")
    run.add_argument("-n", "--np", type=int, help="ranks (default: --procs, else one per core)")
    run.add_argument("--procs", metavar="PXxPYxPZ", help="rank grid, e.g. 2x2x2 (default: balanced, or "
                     "file.input's)")
    size = run.add_mutually_exclusive_group()
    size.add_argument("--size", metavar="LXxLYxLZ", help="global size")
    size.add_argument("--local", metavar="LxMxN", help="size per rank (global = local x grid)")
    run.add_argument("--strategy", metavar="LIST", help="ids, aliases or numbers, comma-separated (default all)")
    run.add_argument("--iters", "--itfin", type=int, metavar="N", action=OneSetting, what="the number of timed steps",
                     help="timed steps (--itfin: CheckMPI's name; default: calibrated to --budget)")
    run.add_argument("--budget", type=bounds.option("--budget", bounds.MAX_SECONDS, "seconds"), default=30.0,
                     metavar="S", help="seconds the job should take when --iters is not given (default 30)")
    run.add_argument("--launches", type=int, metavar="N",
                     help="launches of checkmpi-halo ranked together, each its own processes and seed: what a "
                     "launch fixes (where ranks sit) varies between them (default 3 when checkmpi chooses the "
                     "steps, shared by --budget; else 1)")
    _launch_options(run)
    run.set_defaults(func=_run)

    p2p = sub.add_parser("p2p", allow_abbrev=False, help="run checkmpi-p2p MODE",
                         description="Runs checkmpi-p2p MODE through MPI and reports it; options it does not "
                         "know go to checkmpi-p2p (e.g. -m 1:65536; loggp's message count is --prtt-n).")
    p2p.add_argument("mode", choices=P2P_MODES, help="measurement mode")
    p2p.add_argument("-n", "--np", type=int, help="ranks (default 2; self: 1; ring, barrier, coll: one per core; "
                     "mbw-mr: one per core rounded down to even; nbc: P*Q of --pencil PxQ, "
                     "else one per core, at least 2)")
    _launch_options(p2p)
    p2p.set_defaults(func=_p2p)

    rep = sub.add_parser("report", allow_abbrev=False, help="tables, plots and HTML from results files",
                         description="Prints the tables of the results files and writes plots and an HTML page "
                         "into one folder per report.")
    rep.add_argument("files", nargs="*", metavar="RESULTS.json", help="checkmpi-halo and checkmpi-p2p results")
    rep.add_argument("--outdir", metavar="DIR", help="the report's folder (plots/ and report.html): default, for "
                     "one file its path without .json, for several a new results/report-<time>/")
    rep.add_argument("--html", metavar="FILE", help="write the HTML page here instead of OUTDIR/report.html")
    rep.add_argument("--plots", metavar="DIR", help="write PNG and SVG plots here instead of OUTDIR/plots")
    _no_report(rep, " unless --html asks for one")
    rep.add_argument("--no-plots", dest="no_report", nargs=0, action=OldSpelling, new="--no-report")
    rep.add_argument("--wide", action="store_true", help="tables with every figure (default: fit 80 columns)")
    rep.add_argument("--copy-bandwidth", type=bounds.option("--copy-bandwidth", MAX_GBS, "GB/s"), metavar="GB/s",
                     help="copy bandwidth for predictions (default: the run's memcpy probe, else 10)")
    rep.add_argument("--machine", metavar="MACHINE.json", help="predict from this machine profile (else from "
                     "ping-pong or LogGP results among the files)")
    rep.add_argument("--scale", metavar="N,N,...", help="rank counts of the scale-up projection (default: the "
                     "halo runs' own, when they share a block size)")
    rep.add_argument("--ranks-per-node", type=int, metavar="N", help="for the predictions (default: the runs')")
    rep.add_argument("--campaign", metavar="REPORT.json", help="a campaign's report (checkmpi campaign report "
                     "--json): its weak scale-up as measured points on the projection")
    rep.add_argument("--bin", metavar="DIR", help="folder of checkmpi-halo, which lists the strategies")
    rep.set_defaults(func=_report)

    pred = sub.add_parser("predict", allow_abbrev=False, help="predicted time per step, phase by phase",
                          description="Predicts each strategy's time per step on the busiest rank, phase by phase, "
                          "from a machine profile (checkmpi calibrate) or point-to-point results; with --scale, "
                          "projects a weak scale-up. The strategies come from checkmpi-halo (docs/model.md).")
    inputs = pred.add_mutually_exclusive_group(required=True)
    inputs.add_argument("--machine", metavar="MACHINE.json", help="machine profile written by checkmpi calibrate")
    inputs.add_argument("--p2p", action="append", metavar="P2P.json",
                        help="ping-pong or LogGP results (repeat to add a datatype result)")
    grid = pred.add_mutually_exclusive_group(required=True)
    grid.add_argument("--procs", metavar="PXxPYxPZ", help="rank grid, e.g. 2x2x2")
    grid.add_argument("--scale", metavar="N,N,...", help="project a weak scale-up to these rank counts")
    pred.add_argument("--local", required=True, metavar="LxMxN", help="block size per rank, e.g. 128x128x128")
    pred.add_argument("--ranks-per-node", type=int, metavar="N", help="ranks per node, filled in rank order "
                      "(default: --procs all on one node; --scale the profile's cores per node)")
    _model_options(pred)
    pred.add_argument("--halo", metavar="RESULTS.json", help="--p2p: take the copy bandwidth from this run's probe")
    pred.add_argument("--plots", metavar="DIR", help="--scale: write the projection plot (PNG, SVG) here")
    pred.add_argument("-o", "--json", metavar="FILE", help="also write the predictions as JSON")
    pred.set_defaults(func=_predict)

    exp = sub.add_parser("export", allow_abbrev=False, help="CSV (halo or p2p results) or Extra-P JSON Lines (halo)")
    exp.add_argument("files", nargs="+", metavar="RESULTS.json", help="results of one tool: all halo or all p2p")
    exp.add_argument("--format", required=True, choices=("csv", "extrap"),
                     help="csv: one row per run x strategy x timer statistic (halo) or x size x statistic (p2p); "
                          "extrap: Extra-P's JSON Lines (halo)")
    exp.add_argument("-o", "--output", metavar="FILE", help="default: standard output")
    exp.set_defaults(func=_export)

    cal = sub.add_parser("calibrate", allow_abbrev=False, help="measure this machine's parameters for the model",
                         description="Runs checkmpi-p2p (pingpong, loggp, datatype, self, barrier) and short "
                         "checkmpi-halo runs (memcpy probe, kernel packing) and writes the machine profile that "
                         "'checkmpi predict --machine' reads (docs/model.md, 'Calibration').")
    cal.add_argument("-n", "--np", type=int, help="ranks: the barrier's largest count and the ranks per node that "
                     "copy memory at once (default one per core)")
    cal.add_argument("--local", metavar="LxMxN", help="block per rank of the pack and unpack measurement "
                     "(default 128x128x128; --quick 16x16x16)")
    cal.add_argument("--blocks", metavar="LxMxN,...", help="blocks per rank the rates that depend on the caches are "
                     "measured at, besides --local (default 32x32x32,64x64x64,128x128x128,256x256x256)")
    nodes = cal.add_mutually_exclusive_group()
    nodes.add_argument("--hosts", metavar="H1,H2,...", help="nodes to calibrate across: on-node measurements on the "
                       "first, the off-node link between the first two, barriers across 2, 4, ... of them (else "
                       "Slurm's allocation when it has several nodes; one node: links.inter is null)")
    nodes.add_argument("--hostfile", metavar="FILE", help="as --hosts, the nodes a hostfile names in order (e.g. "
                       "scripts/cluster-local.sh's)")
    cal.add_argument("--quick", action="store_true", help="tiny sweeps (seconds): for tests, not for predictions")
    cal.add_argument("-o", "--json", metavar="FILE", help="the profile (default results/machine-<time>.json); "
                     "the tools' results go to the folder of the same name without .json (or, when that "
                     "holds an earlier calibration's, a new one beside it: NAME-2, NAME-3, ...)")
    cal.add_argument("--force", action="store_true", help="run with more ranks per node than 4 per CPU")
    cal.add_argument("--output", dest="json", action=OldSpelling, new="--json")
    _launcher_options(cal, "the calibration (and fail)")
    cal.set_defaults(func=_calibrate)

    from checkmpi.campaign.cli import add_parser as add_campaign

    add_campaign(sub)
    return top


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.jobs import run_halo

    return run_halo(args, extra)


def _p2p(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.jobs import run_p2p

    return run_p2p(args, extra)


def _report(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.report import report_command

    return report_command(args)


def _predict(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.predict import predict_command

    return predict_command(args)


def _calibrate(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.calibrate import calibrate

    return calibrate(args)


def _export(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.export import export_command

    return export_command(args)


def _given_once(top: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str], extra: list[str]) -> None:
    """An option given twice is refused, its own or one passed on to the tool (argparse would keep the last)."""
    parser = top
    for dest in ("command", "verb"):
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or getattr(args, dest, None) is None:
            break
        parser = sub.choices[getattr(args, dest)]
    dests = {o: a.dest for a in parser._actions if not isinstance(a, (argparse._AppendAction, argparse._HelpAction))
             for o in a.option_strings}
    own: dict[str, str] = {}
    passed: set[str] = set()
    for token in argv[:argv.index("--")] if "--" in argv else argv:
        name = token.split("=", 1)[0] if token.startswith("--") else token
        if name in dests:
            first = own.get(dests[name])
            own[dests[name]] = name
            if first is not None:
                both = f"option {name} is given twice" if first == name else f"{first} and {name} are one option"
                raise CheckmpiError(f"{both}; give it once (see '{parser.prog} --help')")
    for token in extra:
        name = token.split("=", 1)[0]
        if name.startswith("-") and len(name) > 1 and not name[1:2].isdigit():
            if name in passed:
                raise CheckmpiError(f"option {name} (passed on to checkmpi-{'halo' if args.command == 'run' else 'p2p'}"
                                    ") is given twice; give it once")
            passed.add(name)


def main(argv: list[str] | None = None) -> int:
    try:
        argv = sys.argv[1:] if argv is None else argv
        top = build_parser()
        args, extra = top.parse_known_args(argv)
        if extra and args.command not in ("run", "p2p"):
            raise CheckmpiError(f"unrecognized arguments: {' '.join(extra)} (see 'checkmpi {args.command} --help')")
        _given_once(top, args, argv, extra)
        with stopping_on_signals():
            return args.func(args, extra)
    except CheckmpiError as e:
        print(f"checkmpi: error: {e.message}", file=sys.stderr)
        for line in e.detail:
            print(f"  | {line}", file=sys.stderr)
        return e.code
    except Stopped as e:
        print(f"checkmpi: stopped by {signal.Signals(e.signum).name}", file=sys.stderr)
        return 128 + e.signum
    except KeyboardInterrupt:
        print("checkmpi: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `checkmpi export ... | head`
        return 0
    except OSError as e:  # a file the code forgot to turn into a CheckmpiError: still named, exit 1
        if os.environ.get("CHECKMPI_DEBUG"):
            raise
        if e.filename is not None:
            print(f"checkmpi: error: cannot use '{e.filename}': {e.strerror or e}", file=sys.stderr)
            return 1
        print(f"checkmpi: internal error: {type(e).__name__}: {e} (set CHECKMPI_DEBUG=1 for details)",
              file=sys.stderr)
        return 1
    except Exception as e:  # a bug: one line, unless CHECKMPI_DEBUG asks for the traceback
        if os.environ.get("CHECKMPI_DEBUG"):
            raise
        print(f"checkmpi: internal error: {type(e).__name__}: {e} (set CHECKMPI_DEBUG=1 for details)",
              file=sys.stderr)
        return 1
