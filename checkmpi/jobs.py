"""`checkmpi run` and `checkmpi p2p`: plan a job, launch the native tool,
show its progress, then print and report its results."""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from checkmpi import bounds, halo_plan, hosts
from checkmpi import report as R
from checkmpi import tables as T
from checkmpi.atomic import earlier_files_kept, refuse_odd_target, write_text
from checkmpi.errors import EXIT_FAILED, EXIT_INVALID, CheckmpiError
from checkmpi.grid import parse_triple, physical_cores
from checkmpi.halo_plan import Plan
from checkmpi.native import (Executable, Job, Launcher, NativeRun, failure, find_executable, find_launcher,
                             remove_stale_folders, say)
from checkmpi.results import HaloRun, P2PRun, load, new_path, run_folder, x_join

CALIBRATION_STEPS = 10
DEFAULT_EDGE = 128  # local block edge of the main job, before memory limits


@dataclass
class HaloPlan:
    np: int
    sizing: list[str]  # checkmpi-halo's options that size the run: as given, or the main job's --local
    iters: int | None  # None: calibrate (or the input file's itfin)
    passthrough: list[str]
    strategies: tuple[str, ...] = ()  # the ids checkmpi-halo's plan runs (each writes OUTDIR/<id>/)

    @property
    def uses_input(self) -> bool:
        return has_option(self.passthrough, "--input")


INPUT_FILE = "file.input"  # CheckMPI's input, read from the working directory


def has_option(argv: list[str], name: str) -> bool:
    return any(a == name or a.startswith(name + "=") for a in argv)


def option_value(argv: list[str], name: str) -> str | None:
    """The last value given to a pass-through option (`--name V` or `--name=V`)."""
    value = None
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith(name + "="):
            value = a.split("=", 1)[1]
    return value


def without_option(argv: list[str], name: str) -> list[str]:
    """argv less a pass-through option and its value (`--name V` or `--name=V`)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == name:
            skip = True
        elif not a.startswith(name + "="):
            out.append(a)
    return out


# CheckMPI's names of what --size, --procs and --iters set: checkmpi run sets
# the settings itself, so the keys cannot reach checkmpi-halo beside them.
NAMELIST_KEYS = {"--lx": "--size LXxLYxLZ (or --local LxMxN)", "--ly": "--size LXxLYxLZ (or --local LxMxN)",
                 "--lz": "--size LXxLYxLZ (or --local LxMxN)", "--proc_x": "--procs PXxPYxPZ",
                 "--proc_y": "--procs PXxPYxPZ", "--proc_z": "--procs PXxPYxPZ"}


def plan_halo(args: argparse.Namespace, extra: list[str], bin_dir: str | None = None) -> HaloPlan:
    """Fills in what the options leave open: with none, the main job, unless
    a file.input in the working directory gives sizes, grid and steps. The
    grid, the ranks and the memory come from checkmpi-halo's own plan."""
    for key, instead in NAMELIST_KEYS.items():
        if has_option(extra, key):
            raise CheckmpiError(f"{key} is CheckMPI's key for checkmpi-halo and its input file; checkmpi run takes "
                                f"{instead}")
    procs = parse_triple(args.procs, "--procs") if args.procs else None
    if args.np is not None and args.np < 1:
        raise CheckmpiError(f"--np must be positive, got {args.np}")
    bounds.at_most(args.np, "--np", bounds.MAX_NP)
    _check_placeable(args, extra)
    if procs and args.np is not None and math.prod(procs) != args.np:
        raise CheckmpiError(f"--procs {x_join(procs)} needs {math.prod(procs)} ranks, but --np is {args.np}")
    if args.iters is not None and args.iters < 1:
        raise CheckmpiError(f"--iters must be positive, got {args.iters}")
    bounds.at_most(args.iters, "--iters", bounds.MAX_STEPS)
    if args.strategy is not None and not args.strategy.strip(" ,"):
        raise CheckmpiError(f"--strategy needs at least one name, got {args.strategy!r}")
    if has_option(extra, "--input") and has_option(extra, "--no-input"):
        raise CheckmpiError(f"--no-input and --input {option_value(extra, '--input')} contradict each other; give one")
    check_watchdog(extra)
    extra = list(extra)
    if not (args.size or args.local or has_option(extra, "--input") or has_option(extra, "--no-input")) \
            and Path(INPUT_FILE).is_file():
        say(f"reading ./{INPUT_FILE}, as CheckMPI does: sizes, grid and steps come from it unless given as options")
        extra = ["--input", INPUT_FILE] + extra
    if has_option(extra, "--input"):
        check_namelist(Path(option_value(extra, "--input") or ""))
    sizing = []
    if args.local:
        sizing += ["--local", x_join(parse_triple(args.local, "--local"))]
    elif args.size:
        sizing += ["--size", x_join(parse_triple(args.size, "--size"))]
    sizing += ["--procs", x_join(procs)] if procs else []
    rest = ["--np", str(args.np)] if args.np else ["--default-np", str(physical_cores())]
    rest += ([] if has_option(extra, "--input") or has_option(extra, "--no-input") else ["--no-input"]) + extra
    rest += ["--strategy", args.strategy] if args.strategy else []
    auto = not (args.local or args.size or has_option(extra, "--input"))
    edge = DEFAULT_EDGE
    while True:
        options = (["--local", x_join((edge,) * 3)] if auto else []) + sizing
        native = halo_plan.make(options + rest, bin_dir)
        if not auto or edge <= 16 or not _too_big(native):
            return HaloPlan(native.ranks, options, args.iters, extra, tuple(sp.row.id for sp in native.strategies))
        edge //= 2


def check_watchdog(extra: list[str]) -> None:
    """--watchdog S passed on: a decimal number of seconds, as checkmpi-halo and checkmpi-p2p document it."""
    value = option_value(extra, "--watchdog")
    if value is not None and not (re.fullmatch(r"\d+(\.\d*)?", value) and
                                  (float(value) == 0 or 1 <= float(value) <= bounds.MAX_SECONDS)):
        raise CheckmpiError(f"--watchdog must be 0 (off) or 1 to 10^7 seconds in decimal digits, got '{value}'")


def check_namelist(path: Path) -> None:
    """The input file checkmpi-halo will read: no control characters (a NUL once ended a value unseen; the tool
    refuses them too, this says so before anything starts). Unreadable: the tool says why."""
    try:
        data = path.read_bytes()[:1 << 20]
    except OSError:
        return
    for number, line in enumerate(data.split(b"\n"), 1):
        found = bounds.control_character(line.decode("latin-1").rstrip("\r"))
        if found:
            raise CheckmpiError(f"{path}, line {number}: control character {found}; a namelist file holds text only")


def _too_big(plan: Plan) -> bool:
    """The main job takes more than a quarter of the available memory."""
    available = _mem_available()
    return bool(available) and plan.ranks * plan.memory_per_rank > available / 4


def _mem_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


CHECKS_PER_RUN = 10  # validations and profile dumps of a run whose steps checkmpi chose
LAUNCHES = 3  # launches of a run whose steps checkmpi chose (their spread is in the ranking's intervals)
ROUNDS = 10  # rounds of a run whose steps checkmpi chose (--rounds in the options passed on says otherwise)


def _rounds(plan: HaloPlan) -> tuple[int, list[str]]:
    """The rounds of the calibrated main job, and the option that sets them (none when passed on already)."""
    given = option_value(plan.passthrough, "--rounds")
    if given is not None:
        try:
            return max(1, int(given)), []
        except ValueError:
            return ROUNDS, []  # checkmpi-halo says what is wrong with it
    return ROUNDS, ["--rounds", str(ROUNDS)]


def halo_argv(exe: Path, plan: HaloPlan, json_path: Path, outdir: Path, iters: int | None,
              strategy: str | None, checks: int = CHECKS_PER_RUN) -> list[str]:
    argv = [str(exe)]
    if not plan.uses_input:
        argv.append("--no-input")
    argv += plan.sizing
    if iters is not None:
        argv += ["--iters", str(iters)]
        if not has_option(plan.passthrough, "--icheck"):
            argv += ["--icheck", str(max(1, iters // checks))]
    if strategy:
        argv += ["--strategy", strategy]
    return argv + ["--outdir", str(outdir), "--json", str(json_path)] + plan.passthrough


class ProgressLine:
    """Which strategy is running: a bar on a terminal, plain lines otherwise."""

    def __init__(self, what: str):
        self.what = what
        self.bar: Progress | None = None
        self.task = None
        if sys.stderr.isatty():
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=Console(stderr=True), transient=True)

    def __enter__(self) -> ProgressLine:
        if self.bar:
            self.bar.start()
            self.task = self.bar.add_task(self.what, total=None)
        else:
            say(self.what)
        return self

    def update(self, index: int, count: int, what: str) -> None:
        text = f"{self.what}: {what}"
        if self.bar and self.task is not None:
            self.bar.update(self.task, description=text, total=count, completed=index - 1)
        else:
            say(f"[{index}/{count}] {text}")

    def __exit__(self, *exc: object) -> None:
        if self.bar:
            self.bar.stop()


RANKS_PER_CPU = 4  # the most ranks per CPU of a node --np may start without --force (run, p2p, calibrate)


def _check_placeable(args: argparse.Namespace, extra: list[str], np: int | None = None, what: str = "") -> None:
    """--np (or `np` ranks, `what` they are) on this node alone (no Slurm allocation, no --hostfile or --hosts, no
    hosts in --mpi-args): at most RANKS_PER_CPU per CPU, unless --force (passed on to the tool too): ranks beyond
    them only wait for the scheduler, and very many of them can bring the node down."""
    mpi_args = _mpi_args(args)
    hosts.check(args, mpi_args)
    np = args.np if np is None else np
    if np is None or has_option(extra, "--force") or os.environ.get("SLURM_JOB_ID") or hosts.given(args):
        return
    if any(word.split("=", 1)[0] in hosts.HOST_OPTIONS for word in mpi_args):
        return
    cpus = os.cpu_count() or 1
    if np > RANKS_PER_CPU * cpus:
        what = what or f"--np {np}"
        raise CheckmpiError(f"{what} is more ranks than this node places: at most {RANKS_PER_CPU * cpus} "
                            f"({RANKS_PER_CPU} per CPU of its {cpus}; give --hostfile or --hosts, run in a Slurm "
                            "allocation, or --force)")


def _mpi_args(args: argparse.Namespace) -> list[str]:
    try:
        return shlex.split(args.mpi_args)
    except ValueError as e:
        raise CheckmpiError(f"--mpi-args: {e}") from None


def _launcher_args(args: argparse.Namespace, launcher: Launcher) -> list[str]:
    """--hostfile or --hosts in the launcher's spelling, then --mpi-args."""
    return hosts.launcher_args(args, launcher) + _mpi_args(args)


def _scratch(args: argparse.Namespace, json_path: Path) -> Path | None:
    """With --hostfile or --hosts, the results' folder takes the job's temporary files (a rank 0 on another node
    cannot write this one's /tmp); else the system's temporary folder."""
    return json_path.parent if hosts.given(args) else None


def _warnings(tool: str, done: NativeRun) -> None:
    """The tool's own warning lines (old spellings, icheck above itfin, ...), which would otherwise stay in its log."""
    for line in done.stderr_tail:
        if line.startswith(f"{tool}: warning:"):
            print(line, file=sys.stderr)


def _launch(tool: str, args: argparse.Namespace) -> tuple[Executable, Launcher]:
    exe = find_executable(tool, args.bin)
    launcher = find_launcher(args.launcher, exe.path)
    say(f"{tool}: {exe.path} (found via {exe.source}); launcher {' '.join([launcher.path, *launcher.args])}"
        + (f" ({launcher.note})" if launcher.note else ""))
    return exe, launcher


def _results_path(args: argparse.Namespace, prefix: str) -> Path:
    """--json, or a new timestamped file under results/."""
    return Path(args.json) if args.json else new_path(prefix, ".json")


def _prepare(path: Path) -> None:
    refuse_odd_target(path)  # before the job, not after it
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckmpiError(f"cannot create folder '{path.parent}': {e.strerror}") from None


def calibrate(exe: Path, launcher: Launcher, plan: HaloPlan, strategy: str | None, budget: float,
              timeout: float | None, launcher_args: list[str], launches: int = 1, scratch: Path | None = None) -> int:
    """Steps per launch that make the whole job (`launches` launches) take about `budget` seconds, from a short
    run of every chosen strategy in as many rounds as the job's, one step or
    more each (its launch and every round's set-up count as well). The short
    run validates at each round's end only, so its step time is the step's
    alone and the cost of one check is known apart: the real run checks ten
    times and at each round's end."""
    rounds, rounds_option = _rounds(plan)
    cal_steps = max(CALIBRATION_STEPS, rounds)
    remove_stale_folders("calibrate", scratch)
    with tempfile.TemporaryDirectory(prefix=f".checkmpi-calibrate-{os.getpid()}-", dir=scratch) as tmp:
        json_path = Path(tmp) / "calibration.json"
        argv = halo_argv(exe, plan, json_path, Path(tmp) / "out", cal_steps, strategy, checks=1) + rounds_option
        # One repeat, whatever the run's (checkmpi-halo refuses an option given twice).
        job = Job(launcher, plan.np, without_option(argv, "--repeat") + ["--repeat", "1"], tuple(launcher_args),
                  scratch=scratch)
        with ProgressLine(f"calibrating ({cal_steps} steps per strategy in {rounds} rounds)") as progress:
            done = job.run(timeout, progress.update)
        if done.returncode != 0:
            raise failure("checkmpi-halo", done)
        run = _load_written(json_path, "checkmpi-halo")
    assert isinstance(run, HaloRun)
    repeat = int(option_value(plan.passthrough, "--repeat") or 1)
    per_step = repeat * sum((s.timers["loop"].max - s.timers["diag"].max) / s.steps for s in run.ran() if s.steps)
    checks = repeat * (CHECKS_PER_RUN + rounds) / rounds * sum(s.timers["diag"].max for s in run.ran())
    overhead = max(0.0, done.seconds - sum(s.timers["loop"].max for s in run.ran()))
    left = budget - done.seconds - launches * (overhead + checks)
    steps = int(left / (launches * per_step)) if per_step > 0 else 1000
    steps = max(cal_steps, _round_down(max(CALIBRATION_STEPS, min(steps, 1_000_000))))
    say(f"calibration: {per_step * 1e3:.3f} ms per step over all strategies, "
        f"{overhead:.1f} s start-up; {steps} steps" + (f" in each of {launches} launches" if launches > 1 else "")
        + f" for about {budget:g} s")
    return steps


def _round_down(n: int) -> int:
    """Two significant digits: 12345 -> 12000."""
    scale = 10 ** max(0, len(str(n)) - 2)
    return n // scale * scale


def _load_written(path: Path, tool: str) -> HaloRun | P2PRun:
    if not path.exists():
        raise CheckmpiError(f"{tool} finished but wrote no results to '{path}'", EXIT_FAILED)
    return load(path)


def run_halo(args: argparse.Namespace, extra: list[str]) -> int:
    if args.launches is not None and not 1 <= args.launches <= 100:
        raise CheckmpiError(f"--launches must be 1 to 100, got {args.launches}")
    plan = plan_halo(args, extra, args.bin)
    json_path = _results_path(args, "halo")
    outdir = Path(args.outdir) if args.outdir else run_folder(json_path)
    _prepare(json_path)
    exe, launcher = _launch("checkmpi-halo", args)
    launcher_args = _launcher_args(args, launcher)
    iters = plan.iters
    argv_rounds: list[str] = []
    calibrated = iters is None and not plan.uses_input
    launches = args.launches or (LAUNCHES if calibrated else 1)
    if calibrated:
        iters = calibrate(exe.path, launcher, plan, args.strategy, args.budget, args.timeout, launcher_args, launches,
                          _scratch(args, json_path))
        argv_rounds = _rounds(plan)[1]
    argv = halo_argv(exe.path, plan, json_path, outdir, iters, args.strategy) + argv_rounds
    samples = None
    if launches > 1 and not has_option(plan.passthrough, "--samples"):
        samples = outdir / "samples.json"  # this run's own: a stale one from an earlier run would be refused
        if samples.resolve() == json_path.resolve():
            raise CheckmpiError(f"--json '{json_path}' is where the launches keep their samples "
                                f"({outdir}/samples.json); give another --json or --outdir")
        _prepare(samples)
        argv += ["--samples", str(samples)]
    log = outdir / "checkmpi-halo.log"
    for path in (log, *([] if args.no_report else [outdir / "report.html"])):
        refuse_odd_target(path)  # before the job, not after it
    # Each launch replaces the results; until the last one has, the earlier run's stay aside.
    folders = [outdir / sid for sid in plan.strategies]
    with earlier_files_kept([json_path, log, *([samples] if samples else [])], folders, json_path.parent):
        if samples is not None:
            samples.unlink(missing_ok=True)
        logs = []
        for k in range(1, launches + 1):
            job = Job(launcher, plan.np, argv, tuple(launcher_args), scratch=_scratch(args, json_path))
            if k == 1:
                say("running: " + " ".join(job.command()[0]))
            what = f"checkmpi-halo on {plan.np} ranks" + (f", launch {k} of {launches}" if launches > 1 else "")
            with ProgressLine(what) as progress:
                done = job.run(args.timeout, progress.update)
            logs.append(done.stdout)
            if done.returncode not in (0, EXIT_INVALID):
                raise failure("checkmpi-halo", done)
            _warnings("checkmpi-halo", done)
            write_text(log, "".join(logs))
            if done.returncode == EXIT_INVALID:
                break
    run = _load_written(json_path, "checkmpi-halo")
    assert isinstance(run, HaloRun)
    _show(run, args, outdir)
    bad = [s.id for s in run.ran() if not s.valid]
    if bad or done.returncode == EXIT_INVALID:
        raise CheckmpiError(f"validation failed for {', '.join(bad) or 'a strategy'} (see the table and "
                            f"{outdir}/<strategy>/task.*.log)", EXIT_INVALID)
    return 0


def run_p2p(args: argparse.Namespace, extra: list[str]) -> int:
    if args.np is not None and args.np < 1:
        raise CheckmpiError(f"--np must be positive, got {args.np}")
    bounds.at_most(args.np, "--np", bounds.MAX_NP)
    _check_placeable(args, extra)
    check_watchdog(extra)
    np = args.np or _p2p_ranks(args.mode, extra)
    if args.np is None and args.mode == "nbc" and has_option(extra, "--pencil"):  # the pencil sets the ranks
        if np < 1:
            raise CheckmpiError(f"--pencil {option_value(extra, '--pencil')} gives no ranks")
        _check_placeable(args, extra, np, f"--pencil {option_value(extra, '--pencil')} ({np} ranks)")
    json_path = _results_path(args, f"p2p-{args.mode}")
    outdir = Path(args.outdir) if args.outdir else run_folder(json_path)
    _prepare(json_path)
    for path in (outdir / "checkmpi-p2p.log", *([] if args.no_report else [outdir / "report.html"])):
        refuse_odd_target(path)  # before the job, not after it
    exe, launcher = _launch("checkmpi-p2p", args)
    job = Job(launcher, np, [str(exe.path), args.mode, "--json", str(json_path)] + extra,
              tuple(_launcher_args(args, launcher)), scratch=_scratch(args, json_path))
    say("running: " + " ".join(job.command()[0]))
    with ProgressLine(f"checkmpi-p2p {args.mode} on {np} ranks") as progress:
        done = job.run(args.timeout, progress.update)
    if done.returncode not in (0, EXIT_INVALID):
        raise failure("checkmpi-p2p", done)
    _warnings("checkmpi-p2p", done)
    write_text(outdir / "checkmpi-p2p.log", done.stdout)
    run = _load_written(json_path, "checkmpi-p2p")
    _show(run, args, outdir)
    if done.returncode == EXIT_INVALID:
        raise CheckmpiError("checkmpi-p2p found corrupted data (exit code 3); see its output in "
                            f"{outdir}/checkmpi-p2p.log", EXIT_INVALID)
    return 0


def _p2p_ranks(mode: str, extra: list[str]) -> int:
    """Default ranks: two; self one; ring, barrier and coll one per core (at least two); mbw-mr one per core
    rounded down to even (at least two); nbc P*Q of --pencil PxQ, else one per core (at least two)."""
    if mode == "self":
        return 1
    if mode in ("ring", "barrier", "coll"):
        return max(2, physical_cores())
    if mode == "mbw-mr":
        return max(2, physical_cores() // 2 * 2)
    if mode != "nbc":
        return 2
    for i, arg in enumerate(extra):
        value = arg.split("=", 1)[1] if arg.startswith("--pencil=") else (
            extra[i + 1] if arg == "--pencil" and i + 1 < len(extra) else None)
        dims = (value or "").split("x")
        if len(dims) == 2 and all(d.isdigit() for d in dims):
            return int(dims[0]) * int(dims[1])
    return max(2, physical_cores())


def _show(run: HaloRun | P2PRun, args: argparse.Namespace, outdir: Path) -> None:
    """Prints the tables and, unless --no-report, writes plots and the HTML report."""
    halos = [run] if isinstance(run, HaloRun) else []
    p2ps = [run] if isinstance(run, P2PRun) else []
    plots = None if args.no_report else outdir / "plots"
    rep = R.build(halos, p2ps, plots, wide=args.wide)
    R.print_report(rep, T.console(args.wide))
    say(f"results: {run.path}")
    if not args.no_report:
        html = outdir / "report.html"
        R.write_html(rep, html)
        say(f"report: {html} (plots in {plots})")
