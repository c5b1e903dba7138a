"""A campaign spec: TOML (tomllib), checked key by key (docs/campaign.md, "Spec").

Every mistake is one line naming the file, the table and the key; unknown keys
are errors too, so a typo never silently changes a campaign.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkmpi.bounds import (MAX_NP, MAX_RUNS, MAX_SECONDS, MAX_STEPS, MAX_TOML_DEPTH, check_depth, control_character,
                             power)
from checkmpi.errors import CheckmpiError
from checkmpi.grid import Triple, parse_triple
from checkmpi.results import read_input
from checkmpi import catalog, halo_plan

EXECUTORS = ("local", "slurm")
MAX_FACTOR = 1e6  # too_slow, slow
MIN_POLL_S = 0.1
MAX_POINTS = 1000  # sizes or rank counts of one sweep
MAX_SPEC_STRING = 4096  # characters of any string of a spec (an argument of up to 128 KiB is all Linux takes)
# checkmpi-halo's options that set what a run's record names (strategy, sizes, grid, steps, output): [halo] args
# may not give them.
_SET_BY_CAMPAIGN = {"--strategy", "-s", "--iters", "--itfin", "--icheck", "--json", "--outdir", "-o", "--size",
                    "--local", "--procs", "--lx", "--ly", "--lz", "--proc_x", "--proc_y", "--proc_z", "--input",
                    "--no-input", "--samples", "--events", "--plan", "--np", "--default-np", "--list-strategies"}
LAUNCHERS = ("auto", "srun", "mpirun", "mpiexec")


@dataclass(frozen=True)
class Sweep:
    index: int  # 1-based, in spec order
    kind: str  # "size": one grid, growing global size; "scale": fixed size per rank, growing ranks
    procs: Triple | None  # kind "size"
    sizes: tuple[Triple, ...]  # kind "size"
    local: Triple | None  # kind "scale"
    nps: tuple[int, ...]  # kind "scale"
    name: str
    grids: tuple[Triple, ...] = ()  # kind "scale": the grid of each of nps, as checkmpi-halo decomposes it


@dataclass(frozen=True)
class SlurmOptions:
    partition: str | None = None
    account: str | None = None
    constraint: str | None = None
    gpus_per_node: int | None = None
    sbatch_args: tuple[str, ...] = ()
    srun_args: tuple[str, ...] = ()
    pending_limit_s: float = 86400.0  # a submission pending longer is cancelled: its runs did not start
    poll_s: float = 5.0
    exclusive: bool = True  # sbatch --exclusive: no other job (the campaign's own included) on a job's nodes


@dataclass(frozen=True)
class Spec:
    path: Path
    text: str  # the file as given, kept in DIR
    name: str
    executor: str
    repetitions: int
    ranks_per_node: int | None
    time_limits: tuple[float, ...]  # per submission, one per repetition
    too_slow: float
    too_slow_min_s: float  # a run is never stopped as too slow sooner than this
    launcher: str
    strategies: tuple[str, ...]
    itfin: int
    icheck: int
    halo_args: tuple[str, ...]
    sweeps: tuple[Sweep, ...]
    slurm: SlurmOptions = field(default_factory=SlurmOptions)
    slow: float = 1.5  # report: a run slower than this x its expected time counts as slower than expected

    def time_limit(self, submission: int) -> float:
        return self.time_limits[submission - 1]


# The keys each table may hold.
_TABLES: dict[str, set[str]] = {
    "campaign": {"name", "executor", "repetitions"},
    "launch": {"ranks_per_node", "time_limit_s", "too_slow", "too_slow_min_s", "launcher"},
    "halo": {"strategies", "iters", "itfin", "icheck", "args"},
    "slurm": {"partition", "account", "constraint", "gpus_per_node", "sbatch_args", "srun_args",
              "pending_limit_s", "poll_s", "exclusive"},
    "report": {"slow"},
    "sweep": {"name", "procs", "size", "local", "np"},
}


class _Checker:
    """Typed access to the parsed TOML that names file, table and key on error."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, what: str) -> CheckmpiError:
        return CheckmpiError(f"{self.path}: {where} {what}")

    def table(self, doc: dict[str, Any], name: str, required: bool = False) -> dict[str, Any]:
        value = doc.get(name, {} if not required else None)
        if value is None:
            raise self.fail(f"[{name}]", "is missing")
        if not isinstance(value, dict):
            raise self.fail(f"[{name}]", "must be a table")
        unknown = sorted(set(value) - _TABLES[name])
        if unknown:
            raise self.fail(f"[{name}]", f"has unknown key '{unknown[0]}' (known: {', '.join(sorted(_TABLES[name]))})")
        return value

    def string(self, t: dict[str, Any], key: str, where: str, default: str | None = None,
               choices: tuple[str, ...] = ()) -> str | None:
        value = t.get(key, default)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail(f"[{where}] {key}", f"must be a non-empty string, got {value!r}")
        if choices and value not in choices:
            raise self.fail(f"[{where}] {key}", f"must be one of {', '.join(choices)}, got '{value}'")
        return value

    def integer(self, t: dict[str, Any], key: str, where: str, default: int | None, minimum: int = 1,
                most: int = MAX_STEPS) -> int | None:
        value = t.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= most:
            raise self.fail(f"[{where}] {key}", f"must be an integer from {minimum} to {power(most)}, got {value!r}")
        return value

    def boolean(self, t: dict[str, Any], key: str, where: str, default: bool) -> bool:
        value = t.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(f"[{where}] {key}", f"must be true or false, got {value!r}")
        return value

    def number(self, value: Any, name: str, above: float, most: float, or_equal: bool = False) -> float:
        """A finite number > `above` (>= with or_equal), at most `most`."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or value < above or (value == above and not or_equal) or value > most:
            raise self.fail(name, f"must be a number {'>=' if or_equal else '>'} {above:g} and <= {power(most)}, "
                            f"got {value!r}")
        return float(value)

    def strings(self, t: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = t.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"[{where}] {key}", f"must be a list of strings, got {value!r}")
        return tuple(value)

    def triple(self, value: Any, name: str) -> Triple:
        if not isinstance(value, str):
            raise self.fail(name, f"must be a string like \"32x32x32\", got {value!r}")
        try:
            return parse_triple(value, name)
        except CheckmpiError as e:
            raise self.fail(name, e.message.removeprefix(name + " ")) from None


def load_spec(path: str | Path, bin_dir: str | None = None) -> Spec:
    p = Path(path)
    return parse_spec(read_input(p, "campaign spec"), p, bin_dir)


def parse_spec(text: str, path: Path, bin_dir: str | None = None, resolved: list[str] | None = None,
               grids: dict[str, list[int]] | None = None) -> Spec:
    """checkmpi-halo (in `bin_dir`, else where find_executable looks) resolves the strategy names and the grids
    of the scale sweeps' rank counts, unless `resolved` and `grids` (rank count -> grid) give them already (a
    campaign folder records them)."""
    check_depth(text, str(path), MAX_TOML_DEPTH)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CheckmpiError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:  # nesting check_depth could not see (in a multi-line string's quotes)
        raise CheckmpiError(f"{path} nests [ and {{ more than {MAX_TOML_DEPTH} deep (the limit)") from None
    c = _Checker(path)
    _no_control_characters(c, doc, "")
    unknown = sorted(set(doc) - set(_TABLES))
    if unknown:
        raise c.fail(f"[{unknown[0]}]", f"is not a known table (known: {', '.join(sorted(_TABLES))})")
    camp = c.table(doc, "campaign", required=True)
    name = c.string(camp, "name", "campaign")
    if name is None:
        raise c.fail("[campaign] name", "is missing")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise c.fail("[campaign] name", f"may hold letters, digits, '.', '_' and '-' only, got '{name}'")
    executor = c.string(camp, "executor", "campaign", "local", EXECUTORS)
    repetitions = c.integer(camp, "repetitions", "campaign", 1, most=MAX_RUNS)
    assert executor is not None and repetitions is not None

    launch = c.table(doc, "launch")
    limits = launch.get("time_limit_s", 3600.0)
    if isinstance(limits, list):
        if len(limits) != repetitions:
            raise c.fail("[launch] time_limit_s", f"lists {len(limits)} limits for {repetitions} repetitions")
        time_limits = tuple(c.number(v, "[launch] time_limit_s", 0.0, MAX_SECONDS) for v in limits)
    else:
        time_limits = (c.number(limits, "[launch] time_limit_s", 0.0, MAX_SECONDS),) * repetitions
    too_slow = c.number(launch.get("too_slow", 10.0), "[launch] too_slow", 1.0, MAX_FACTOR)
    too_slow_min_s = c.number(launch.get("too_slow_min_s", 60.0), "[launch] too_slow_min_s", 0.0, MAX_SECONDS,
                              or_equal=True)
    launcher = c.string(launch, "launcher", "launch", "auto", LAUNCHERS)
    if executor == "local" and launcher == "srun":
        raise c.fail("[launch] launcher", "'srun' needs executor = \"slurm\"")

    halo = c.table(doc, "halo")
    raw = halo.get("strategies", "all")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(s, str) for s in raw):
        raise c.fail("[halo] strategies", f"must be a list of strategy names, got {raw!r}")
    if any("=" in s for s in raw):
        raise c.fail("[halo] strategies", "are catalog rows (ids, aliases, numbers or all); compositions of parts "
                     "cannot name a campaign's runs")
    try:  # as checkmpi-halo resolves them
        strategies = tuple(resolved) if resolved else tuple(s.id for s in catalog.load(",".join(raw), bin_dir))
    except CheckmpiError as e:
        raise c.fail("[halo] strategies:", e.message) from None
    if "iters" in halo and "itfin" in halo:
        raise c.fail("[halo] iters", "and itfin (CheckMPI's name) both set the number of timed steps; give one of them")
    itfin = c.integer(halo, "iters" if "iters" in halo else "itfin", "halo", 100, most=MAX_STEPS)
    icheck = c.integer(halo, "icheck", "halo", None, most=MAX_STEPS) or itfin
    halo_args = c.strings(halo, "args", "halo")
    for a in halo_args:
        option = a.split("=", 1)[0] if a.startswith("--") else a[:2]
        if option in _SET_BY_CAMPAIGN:
            raise c.fail("[halo] args", f"may not set {option}; the campaign sets it (its records name the "
                         "strategy, sizes, steps and output)")
        if option in ("--help", "-h", "--version"):
            raise c.fail("[halo] args", f"may not hold {option}: checkmpi-halo would print it and run nothing")

    sweeps = doc.get("sweep")
    if not isinstance(sweeps, list) or not sweeps:
        raise c.fail("[[sweep]]", "is missing: give at least one sweep")
    parsed = tuple(_sweep(c, i + 1, s, bin_dir, grids) for i, s in enumerate(sweeps))
    if not resolved:  # a new spec: checkmpi-halo plans its largest grid of each kind and reads [halo] args
        _check_with_the_tool(c, parsed, halo_args, bin_dir)
    points = len({p for sw in parsed for p in _points(sw)})
    runs = repetitions * points * len(strategies)
    if runs > MAX_RUNS:
        raise c.fail("[campaign]", f"makes {runs} runs ({repetitions} repetitions x {points} points x "
                     f"{len(strategies)} strategies), more than the {MAX_RUNS} a campaign may have")

    sl = c.table(doc, "slurm")
    slurm = SlurmOptions(
        partition=c.string(sl, "partition", "slurm"), account=c.string(sl, "account", "slurm"),
        constraint=c.string(sl, "constraint", "slurm"),
        gpus_per_node=c.integer(sl, "gpus_per_node", "slurm", None, minimum=0, most=1024),
        sbatch_args=c.strings(sl, "sbatch_args", "slurm"), srun_args=c.strings(sl, "srun_args", "slurm"),
        pending_limit_s=c.number(sl.get("pending_limit_s", 86400.0), "[slurm] pending_limit_s", 0.0, MAX_SECONDS),
        poll_s=c.number(sl.get("poll_s", 5.0), "[slurm] poll_s", MIN_POLL_S, 3600.0, or_equal=True),
        exclusive=c.boolean(sl, "exclusive", "slurm", True))
    for arg in slurm.sbatch_args:  # the job's log is the campaign's to name: it reads it
        if arg == "--output" or arg.startswith(("--output=", "-o")):
            raise c.fail("[slurm] sbatch_args", f"may not set the job's output ('{arg}'): the campaign writes it to "
                         "slurm/s<submission>-a<attempt>.out and reads it there")
    report = c.table(doc, "report")
    slow = c.number(report.get("slow", 1.5), "[report] slow", 1.0, MAX_FACTOR)
    return Spec(path=path, text=text, name=name, executor=executor, repetitions=repetitions,
                ranks_per_node=c.integer(launch, "ranks_per_node", "launch", None, most=MAX_NP),
                time_limits=time_limits,
                too_slow=too_slow, too_slow_min_s=too_slow_min_s, launcher=launcher or "auto",
                strategies=strategies, itfin=itfin, icheck=icheck, halo_args=halo_args, sweeps=parsed, slurm=slurm,
                slow=slow)


def _sweep(c: _Checker, index: int, s: Any, bin_dir: str | None, grids: dict[str, list[int]] | None) -> Sweep:
    where = f"[[sweep]] {index}"
    if not isinstance(s, dict):
        raise c.fail(where, "must be a table")
    unknown = sorted(set(s) - _TABLES["sweep"])
    if unknown:
        raise c.fail(where, f"has unknown key '{unknown[0]}' (known: {', '.join(sorted(_TABLES['sweep']))})")
    name = s.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise c.fail(f"{where} name", f"must be a non-empty string, got {name!r}")
    if "procs" in s and "size" in s and not ({"local", "np"} & set(s)):
        procs = c.triple(s["procs"], f"{where} procs")
        if math.prod(procs) > MAX_NP:
            raise c.fail(f"{where} procs", f"{_x(procs)} is {math.prod(procs)} ranks, more than {power(MAX_NP)}")
        if len(_listed(s["size"])) > MAX_POINTS:
            raise c.fail(f"{where} size", f"lists {len(_listed(s['size']))} sizes, more than the {MAX_POINTS} a "
                         "sweep may have")
        sizes = tuple(c.triple(v, f"{where} size") for v in _listed(s["size"]))
        for size in sizes:
            if any(a % b for a, b in zip(size, procs)):
                raise c.fail(f"{where} size", f"{_x(size)} is not divisible by procs {_x(procs)}")
        if not sizes:
            raise c.fail(f"{where} size", "lists no size")
        return Sweep(index, "size", procs, sizes, None, (), name or f"grid {_x(procs)}")
    if "local" in s and "np" in s and not ({"procs", "size"} & set(s)):
        local = c.triple(s["local"], f"{where} local")
        nps = _listed(s["np"])
        if not nps or not all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_NP for n in nps):
            raise c.fail(f"{where} np", f"must be an integer from 1 to {MAX_NP} or a list of them, got {s['np']!r}")
        if len(nps) > MAX_POINTS:
            raise c.fail(f"{where} np", f"lists {len(nps)} rank counts, more than the {MAX_POINTS} a sweep may have")
        try:
            known = {str(n): tuple(grids[str(n)]) if grids and str(n) in grids else
                     halo_plan.make(["--no-input", "--local", _x(local), "--np", str(n)], bin_dir).procs
                     for n in dict.fromkeys(nps)}
            found = tuple(known[str(n)] for n in nps)
        except CheckmpiError as e:
            raise c.fail(f"{where} np", e.message) from None
        return Sweep(index, "scale", None, (), local, tuple(nps), name or f"{_x(local)} per rank",
                     found)  # type: ignore[arg-type]
    raise c.fail(where, "needs either procs and size (one grid, growing size) or local and np (fixed size per "
                 "rank, growing ranks)")


def _check_with_the_tool(c: _Checker, sweeps: tuple[Sweep, ...], halo_args: tuple[str, ...],
                         bin_dir: str | None) -> None:
    """What only checkmpi-halo knows, refused at planning rather than in every run: a size sweep's largest size
    on its grid (a block too large for a message), and [halo] args (an unknown option, a value it refuses)."""
    for sw in sweeps:
        if sw.kind == "size":
            assert sw.procs is not None
            largest = max(sw.sizes, key=math.prod)
            try:
                halo_plan.make(["--no-input", "--size", _x(largest), "--procs", _x(sw.procs)], bin_dir)
            except CheckmpiError as e:
                raise c.fail(f"[[sweep]] {sw.index} size", f"{_x(largest)} on {_x(sw.procs)}: {e.message}") from None
    if halo_args:
        first = sweeps[0]
        where = (["--size", _x(first.sizes[0]), "--procs", _x(first.procs)] if first.kind == "size" else
                 ["--local", _x(first.local), "--np", str(first.nps[0])])  # type: ignore[arg-type]
        try:
            halo_plan.make(["--no-input", *where, *halo_args], bin_dir)
        except CheckmpiError as e:
            raise c.fail("[halo] args", f"are refused by checkmpi-halo: {e.message}") from None


def _no_control_characters(c: _Checker, value: Any, where: str) -> None:
    """Every string of the spec, keys too, is one line of text: a newline in [slurm] partition once became a
    command of the batch script."""
    if isinstance(value, str):
        found = control_character(value.replace("\t", " "))
        if found is not None or "\n" in value:
            raise c.fail(where, f"holds a control character ({found or 'U+000A'}); spec strings are one line of "
                         "text")
        if len(value) > MAX_SPEC_STRING:  # a command line of them must still start (the kernel's limit)
            raise c.fail(where, f"is {len(value)} characters long; at most {MAX_SPEC_STRING}")
    elif isinstance(value, dict):
        for k, v in value.items():
            _no_control_characters(c, k, where or f"[{k}]")
            _no_control_characters(c, v, f"{where} {k}" if where else f"[{k}]")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _no_control_characters(c, v, f"[[sweep]] {i + 1}" if where == "[sweep]" else f"{where}[{i}]")


def _points(sw: Sweep) -> set[tuple[Triple, Triple]]:
    """A sweep's points as (grid, global size), as plan.points tells them apart."""
    if sw.kind == "size":
        return {(sw.procs, size) for size in sw.sizes}  # type: ignore[misc]
    assert sw.local is not None
    return {(g, tuple(a * b for a, b in zip(sw.local, g))) for g in sw.grids}  # type: ignore[misc]


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _x(t: Triple) -> str:
    return "x".join(map(str, t))
