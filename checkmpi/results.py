"""Loading the native tools' JSON results, checked against their JSON Schemas.

Two schemas are read: `checkmpi.halo/5` (docs/halo.md) and `checkmpi.p2p/2`
(docs/p2p.md); their JSON Schema files are in schemas/ (packaged as
checkmpi.schemas, so an installed checkmpi has them). A file that does not validate is refused with one line
naming the first offending key.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import referencing

from checkmpi.bounds import MAX_INPUT_BYTES, load_json
from checkmpi.errors import CheckmpiError

HALO_SCHEMA = "checkmpi.halo/5"
P2P_SCHEMA = "checkmpi.p2p/2"
KNOWN_SCHEMAS = {"checkmpi.halo": HALO_SCHEMA, "checkmpi.p2p": P2P_SCHEMA}

P2P_MODES = ("pingpong", "bw", "ring", "loggp", "datatype", "nbc", "self", "barrier", "bibw", "mbw-mr", "coll", "rma")


@dataclass(frozen=True)
class Stats:
    """A quantity over ranks (halo: min/mean/max) or iterations (p2p: also median)."""

    min: float
    mean: float
    max: float
    median: float | None = None

    def get(self, name: str) -> float:
        value = getattr(self, name)
        return self.mean if value is None else value


@dataclass(frozen=True)
class Distribution:
    """Order statistics of per-step (halo) or per-iteration (p2p) times, seconds; NaN where null."""

    n: int
    min: float
    p5: float
    median: float
    mean: float
    p95: float
    max: float
    ci: tuple[float, float] | None  # 95% confidence interval of the median

    @classmethod
    def of(cls, d: dict[str, Any]) -> Distribution:
        ci = d.get("median_ci")
        return cls(int(d["n"]), *(opt_float(d[k]) for k in ("min", "p5", "median", "mean", "p95", "max")),
                   (float(ci[0]), float(ci[1])) if ci else None)

    @property
    def tail(self) -> float:
        """p95 / median: how far the slow tail reaches."""
        return self.p95 / self.median if self.median > 0 else math.nan


@dataclass(frozen=True)
class VsFastest:
    """A ranked strategy against the fastest, as checkmpi-halo ranked it (the binary owns the ranking)."""

    ratio: float  # median over the fastest's median
    ci: tuple[float, float]  # its 95% CI: hierarchical bootstrap paired by run and round
    tied: bool  # CI includes 1, or ratio - 1 below config.tie_threshold: in the run's fastest_group

    @classmethod
    def of(cls, d: dict[str, Any] | None) -> VsFastest | None:
        return None if d is None else cls(float(d["ratio"]), (float(d["ci95"][0]), float(d["ci95"][1])),
                                          bool(d["tied"]))


@dataclass
class StrategyResult:
    id: str
    alias: str
    step: int
    valid: bool
    error: str | None
    steps: int
    timers: dict[str, Stats]
    bytes_per_step: int
    compute_bytes_per_step: int
    step_time: Distribution | None = None  # time per step over ranks, steps, rounds and runs, validation excluded
    runs: int = 1  # runs (--repeat) within the launch, each in rounds
    round_medians: list[list[float]] = field(default_factory=list)  # per run, each round's median time per step
    vs_fastest: VsFastest | None = None  # None: not ranked (invalid, or skipped)
    repeat_medians: list[float] = field(default_factory=list)
    repeat_spread: float = math.nan
    launch_medians: list[float] = field(default_factory=list)  # each launch's median, this one last (--samples)
    launch_spread: float = math.nan
    directions: dict[str, dict[str, Any]] = field(default_factory=dict)  # x, y, z: bandwidth
    noise: list[str] = field(default_factory=list)  # why the tool flagged it noisy
    skipped: str | None = None  # why the tool did not run it (the top-level "skipped" list)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.id} {self.alias}".strip()

    def per_step(self, timer: str, stat: str = "max") -> float:
        """A whole-loop timer divided by the steps (loop totals are what the JSON keeps)."""
        return self.timers[timer].get(stat) / self.steps if self.steps else 0.0

    def message_bytes(self, direction: str) -> int:
        """One message's payload in that direction, as the engine set it up (traits)."""
        return int(self.raw["traits"]["message_bytes"][direction])

    def bandwidth(self, direction: str) -> float:
        """Payload sent in that direction over its time, slowest rank (bytes/s); NaN if unknown."""
        return opt_float(self.directions.get(direction, {}).get("bandwidth", {}).get("min"))


@dataclass
class HaloRun:
    path: Path
    context: dict[str, Any]
    config: dict[str, Any]
    strategies: list[StrategyResult]
    memcpy_bandwidth: Stats | None  # bytes read + written per second, per rank
    noise_thresholds: dict[str, float] = field(default_factory=dict)
    fastest_group: list[str] = field(default_factory=list)  # the fastest and those tied with it, fastest first
    oversubscribed: bool = False  # more threads than CPUs on some node: timings include time slices
    rounds: int = 1  # rounds each run's timed steps were split into
    launches: int = 1  # launches the ranking covers (checkmpi-halo --samples)
    separable: bool = True  # False: one oversubscribed launch, every ranked strategy tied by the binary
    label: str = ""  # the name in tables and plots where the file's stem is not unique (load_all)

    @property
    def nprocs(self) -> int:
        return int(self.context["nprocs"])

    @property
    def dims(self) -> tuple[int, int, int]:
        return int(self.config["proc_x"]), int(self.config["proc_y"]), int(self.config["proc_z"])

    @property
    def local(self) -> tuple[int, int, int]:
        return int(self.config["l"]), int(self.config["m"]), int(self.config["n"])

    @property
    def global_size(self) -> tuple[int, int, int]:
        return int(self.config["lx"]), int(self.config["ly"]), int(self.config["lz"])

    @property
    def precision(self) -> str:
        return str(self.config["precision"])

    @property
    def name(self) -> str:
        return self.label or self.path.stem

    def describe(self) -> str:
        """One line: ranks, grid, local block, precision, steps."""
        steps = sorted({s.steps for s in self.ran()})
        steps_text = "/".join(str(s) for s in steps) or str(self.config.get("itfin", "?"))
        return (f"{self.nprocs} ranks ({x_join(self.dims)}), local {x_join(self.local)}, "
                f"global {x_join(self.global_size)}, {self.precision}, {steps_text} steps"
                + (f" x {self.launches} launches" if self.launches > 1 else ""))

    def ran(self) -> list[StrategyResult]:
        """Strategies that ran (skipped ones carry no timers)."""
        return [s for s in self.strategies if s.skipped is None]


@dataclass
class P2PRun:
    path: Path
    context: dict[str, Any]
    config: dict[str, Any]
    mode: str
    results: list[dict[str, Any]]
    fits: dict[str, Any]
    noise: list[str] = field(default_factory=list)
    label: str = ""  # as HaloRun's

    @property
    def name(self) -> str:
        return self.label or self.path.stem


def opt_float(value: Any) -> float:
    """A JSON number, or NaN where the tool wrote null (a fit it could not make)."""
    return math.nan if value is None else float(value)


def run_folder(results: Path) -> Path:
    """Where a results file's companions go (per-strategy output, log, plots,
    report): its path without .json, or with -files when it has no suffix."""
    return results.with_suffix("") if results.suffix else results.with_name(results.name + "-files")


def new_path(prefix: str, suffix: str) -> Path:
    """results/PREFIX-<date>-<time>SUFFIX, neither it nor its folder existing yet."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = Path("results") / f"{prefix}-{stamp}{suffix}"
    k = 2
    while path.exists() or run_folder(path).exists():
        path = Path("results") / f"{prefix}-{stamp}-{k}{suffix}"
        k += 1
    return path


def x_join(values: tuple[int, ...] | list[int]) -> str:
    return "x".join(str(v) for v in values)


@lru_cache(maxsize=None)
def schema_validator(schema: str) -> jsonschema.protocols.Validator:
    """The validator of `checkmpi.halo/5` and the like, from its schema file; a schema may refer to another's
    definitions by file name (the plan and the results carry catalog rows)."""
    family, version = schema.split("/", 1)
    schemas = _schema_texts()
    return jsonschema.Draft202012Validator(schemas[f"{family}-{version}.schema.json"], registry=_registry())


@lru_cache(maxsize=1)
def _schema_texts() -> dict[str, Any]:
    try:  # installed: schemas/ is packaged as checkmpi.schemas
        folder: Any = resources.files("checkmpi.schemas")
        files = [f for f in folder.iterdir() if f.name.endswith(".schema.json")]
    except ModuleNotFoundError:  # imported from the source tree: schemas/ beside the package
        files = sorted((Path(__file__).resolve().parent.parent / "schemas").glob("*.schema.json"))
    return {f.name: json.loads(f.read_text("utf-8")) for f in files}


@lru_cache(maxsize=1)
def _registry() -> referencing.Registry:
    return referencing.Registry().with_resources(
        (name, referencing.Resource.from_contents(doc)) for name, doc in _schema_texts().items())


# Timers every checkmpi-halo result has, in the order of its JSON (docs/halo.md, "Timers"): the schema's list,
# which the tool's output is checked against.
_HALO_RESULT = _schema_texts()[f"{HALO_SCHEMA.replace('/', '-')}.schema.json"]["$defs"]["result"]
HALO_TIMERS: tuple[str, ...] = tuple(_HALO_RESULT["properties"]["timers"]["required"])


def read_input(p: Path, what: str) -> str:
    """The text of an input file (`what`: "results file", ...); CheckmpiError (one line, exit 2) if it is not a
    regular file of at most MAX_INPUT_BYTES or cannot be read. A pipe is opened without waiting for a writer."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise CheckmpiError(f"{what} '{p}' does not exist") from None
    except OSError as e:
        raise CheckmpiError(f"cannot read {what} '{p}': {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):  # open() takes a folder for reading; fstat tells
            raise CheckmpiError(f"{what} '{p}' is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise CheckmpiError(f"{what} '{p}' is not a regular file (a device, pipe or socket)")
        if info.st_size > MAX_INPUT_BYTES:
            raise CheckmpiError(f"{what} '{p}' has {info.st_size} bytes; at most {MAX_INPUT_BYTES}")
        with os.fdopen(os.dup(fd), "rb") as f:  # fdopen refuses a folder's descriptor: after the checks
            return f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CheckmpiError(f"cannot read {what} '{p}': {getattr(e, 'strerror', None) or e}") from None
    finally:
        os.close(fd)


def load(path: str | Path) -> HaloRun | P2PRun:
    """Reads one results file; CheckmpiError (one line, exit 2) on any problem."""
    p = Path(path)
    text = read_input(p, "results file")
    try:
        doc = load_json(text, str(p), f"malformed results in '{p}'")
    except json.JSONDecodeError as e:
        raise CheckmpiError(f"'{p}' is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str):
        raise CheckmpiError(f"'{p}' is not a checkmpi results file (no \"schema\" key)")
    schema = doc["schema"]
    family = schema.split("/", 1)[0]
    if family not in KNOWN_SCHEMAS:
        raise CheckmpiError(f"'{p}' has schema '{schema}', which is not a checkmpi results schema")
    if schema != KNOWN_SCHEMAS[family]:
        raise CheckmpiError(f"'{p}' has schema version '{schema}', which this checkmpi does not know "
                            f"(it reads {KNOWN_SCHEMAS[family]})")
    error = jsonschema.exceptions.best_match(schema_validator(schema).iter_errors(doc))
    if error is not None:
        raise CheckmpiError(f"malformed results in '{p}': {describe(error)}")
    if schema == HALO_SCHEMA:
        for i, r in enumerate(doc["results"]):
            for name, t in r["timers"].items():
                for stat in ("min", "mean", "max"):
                    if t[stat] is not None and t[stat] < 0:
                        raise CheckmpiError(f"malformed results in '{p}': results[{i}].timers.{name}.{stat} is "
                                            f"negative: {t[stat]!r}")
    return _halo(p, doc) if schema == HALO_SCHEMA else _p2p(p, doc)


def describe(error: jsonschema.ValidationError) -> str:
    """One line: where (results[1].timers.loop) and what is wrong with it."""
    where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in error.absolute_path).lstrip(".")
    if error.validator == "required":
        missing = next((k for k in error.validator_value if k not in error.instance), "?")
        return f"{where + '.' if where else ''}{missing} is missing"
    if error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, str) else " or ".join(error.validator_value)
        return f"{where or 'the document'} is not a {wanted}: {error.instance!r}"
    if error.validator in ("enum", "const"):
        allowed = error.validator_value if error.validator == "enum" else [error.validator_value]
        return f"{where} is {error.instance!r}, not one of {', '.join(map(str, allowed))}"
    return f"{where or 'the document'}: {error.message}"


def load_all(paths: list[str]) -> tuple[list[HaloRun], list[P2PRun]]:
    """The results files, each once; runs whose files share a stem are named by as many of their folders as tell
    them apart (a/halo.json, b/halo.json: a-halo, b-halo), so that no table or plot stands for two."""
    runs = []
    for path in paths:
        run = load(path)
        twice = next((r for r in runs if os.path.samefile(r.path, run.path)), None)
        if twice is not None:
            raise CheckmpiError(f"results file '{path}' is given twice (as '{twice.path}' before)")
        runs.append(run)
    parts = [run.path.resolve().with_suffix("").parts for run in runs]
    for i, run in enumerate(runs):
        clash = [other for j, other in enumerate(parts) if j != i and other[-1] == parts[i][-1]]
        depth = 1
        while depth < len(parts[i]) and any(other[-depth:] == parts[i][-depth:] for other in clash):
            depth += 1
        if any(other[-depth:] == parts[i][-depth:] for other in clash):  # one folder, r.json and r.JSON
            run.label = run.path.name.replace(".", "-")
        elif depth > 1:
            run.label = "-".join(parts[i][-depth:])
    halos = [r for r in runs if isinstance(r, HaloRun)]
    return halos, [r for r in runs if isinstance(r, P2PRun)]


def _stats(d: dict[str, Any]) -> Stats:
    return Stats(min=opt_float(d["min"]), mean=opt_float(d["mean"]), max=opt_float(d["max"]))


def _halo(path: Path, doc: dict[str, Any]) -> HaloRun:
    """A validated checkmpi.halo/5 document as objects."""
    strategies = []
    for r in doc["results"]:
        strategies.append(StrategyResult(
            id=r["strategy"], alias=r["catalog"]["alias"], step=_step_of(r), valid=r["valid"], error=r["error"],
            steps=r["steps"], timers={name: _stats(t) for name, t in r["timers"].items()},
            bytes_per_step=sum(r["traits"]["mpi_bytes"].values()),
            compute_bytes_per_step=doc["config"]["shift_bytes"],
            step_time=Distribution.of(r["step_time"]), runs=r["runs"],
            repeat_medians=[opt_float(m) for m in r["repeat_medians"]], repeat_spread=opt_float(r["repeat_spread"]),
            round_medians=[[opt_float(m) for m in medians] for medians in r["round_medians"]],
            launch_medians=[opt_float(m) for m in r["launch_medians"]], launch_spread=opt_float(r["launch_spread"]),
            vs_fastest=VsFastest.of(r["vs_fastest"]), directions=r["directions"], noise=list(r["noise"]), raw=r))
    for k in doc["skipped"]:  # chosen by "all" but not runnable on this backend
        strategies.append(StrategyResult(id=k["strategy"], alias=k["catalog"]["alias"], step=_step_of(k), valid=True,
                                         error=None, steps=0, timers={}, bytes_per_step=0, compute_bytes_per_step=0,
                                         skipped=k["reason"], raw=k))
    if doc["skipped"]:
        strategies.sort(key=lambda s: s.step)
    probes = doc.get("probes", {})
    probe = _stats(probes["memcpy_bandwidth"]) if "memcpy_bandwidth" in probes else None
    return HaloRun(path, doc["context"], doc["config"], strategies, probe, doc["config"]["noise_thresholds"],
                   list(doc["fastest_group"]), doc["context"]["oversubscribed"], doc["config"]["rounds"],
                   doc["config"]["launches"], doc["separable"])


def _p2p(path: Path, doc: dict[str, Any]) -> P2PRun:
    mode = doc["mode"]
    if mode not in P2P_MODES:
        raise CheckmpiError(f"malformed results in '{path}': mode is '{mode}', not one of {', '.join(P2P_MODES)}")
    return P2PRun(path, doc["context"], doc["config"], mode, doc["results"], doc["fits"], list(doc["noise"]))


def _step_of(r: dict[str, Any]) -> int:
    """CheckMPI's step number from the catalog row; checkmpi's own rows (number null) sort after them."""
    step = r["catalog"]["number"]
    return 99 if step is None else int(step)
