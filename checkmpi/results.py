"""Loading and checking the native tools' JSON results.

Two schemas are read: `checkmpi.halo/1` (docs/halo.md) and `checkmpi.p2p/1`.
Only the keys used here are required; unknown keys are kept and ignored, so
newer tools that add keys (skipped strategies, backends, ...) still load.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkmpi.errors import CheckmpiError

HALO_SCHEMA = "checkmpi.halo/1"
P2P_SCHEMA = "checkmpi.p2p/1"
KNOWN_SCHEMAS = {"checkmpi.halo": HALO_SCHEMA, "checkmpi.p2p": P2P_SCHEMA}

# Timers every checkmpi-halo result has, in the order of its JSON (docs/halo.md,
# "Timers"); newer tools add more (pack_x ... unpack_z), which are kept too.
HALO_TIMERS = ("loop", "compute", "diag", "comm", "x", "y", "z", "pack", "unpack", "mpi")
P2P_MODES = ("pingpong", "bw", "ring", "loggp", "datatype", "nbc")
# nbc's per-iteration times, each {"min", "median", "mean", "max"} over iterations and ranks.
NBC_TIMES = ("blocking", "pure_comm", "init", "compute", "test", "wait", "overall")


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
    skipped: str | None = None  # why the tool did not run it, when it says so
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.id} {self.alias}".strip()

    def per_step(self, timer: str, stat: str = "max") -> float:
        return self.timers[timer].get(stat) / self.steps if self.steps else 0.0


@dataclass
class HaloRun:
    path: Path
    context: dict[str, Any]
    config: dict[str, Any]
    strategies: list[StrategyResult]
    memcpy_bandwidth: Stats | None  # bytes read + written per second, per rank

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
        return str(self.config.get("precision", self.context.get("precision", "single")))

    @property
    def name(self) -> str:
        return self.path.stem

    def describe(self) -> str:
        """One line: ranks, grid, local block, precision, steps."""
        steps = sorted({s.steps for s in self.ran()})
        steps_text = "/".join(str(s) for s in steps) or str(self.config.get("itfin", "?"))
        return (f"{self.nprocs} ranks ({x_join(self.dims)}), local {x_join(self.local)}, "
                f"global {x_join(self.global_size)}, {self.precision}, {steps_text} steps")

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

    @property
    def name(self) -> str:
        return self.path.stem


def opt_float(value: Any) -> float:
    """A JSON number, or NaN where the tool wrote null (a fit it could not make)."""
    return math.nan if value is None else float(value)


def run_folder(results: Path) -> Path:
    """Where a results file's companions go (per-strategy output, log, plots,
    report): its path without .json, or with -files when it has no suffix."""
    return results.with_suffix("") if results.suffix else results.with_name(results.name + "-files")


def x_join(values: tuple[int, ...] | list[int]) -> str:
    return "x".join(str(v) for v in values)


def load(path: str | Path) -> HaloRun | P2PRun:
    """Reads one results file; CheckmpiError (one line) on any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CheckmpiError(f"results file '{p}' does not exist") from None
    except IsADirectoryError:
        raise CheckmpiError(f"results file '{p}' is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CheckmpiError(f"cannot read results file '{p}': {getattr(e, 'strerror', None) or e}") from None
    try:
        doc = json.loads(text)
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
                            f"(it reads {KNOWN_SCHEMAS[family]}); update checkmpi")
    reader = _Reader(p)
    return reader.halo(doc) if schema == HALO_SCHEMA else reader.p2p(doc)


def load_all(paths: list[str]) -> tuple[list[HaloRun], list[P2PRun]]:
    halos: list[HaloRun] = []
    p2ps: list[P2PRun] = []
    for path in paths:
        run = load(path)
        (halos if isinstance(run, HaloRun) else p2ps).append(run)
    return halos, p2ps


class _Reader:
    """Typed access to a parsed document that names the offending key on error."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, what: str) -> CheckmpiError:
        return CheckmpiError(f"malformed results in '{self.path}': {where} {what}")

    def get(self, obj: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
        if key not in obj:
            raise self.fail(f"{where}.{key}" if where else key, "is missing")
        value = obj[key]
        if kind in (int, float, (int, float)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise self.fail(f"{where}.{key}" if where else key, f"is not a number: {value!r}")
            return value
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(f"{where}.{key}" if where else key, f"is not a {names}: {value!r}")
        return value

    def stats(self, obj: dict[str, Any], key: str, where: str) -> Stats:
        s = self.get(obj, key, where, dict)
        here = f"{where}.{key}"
        median = self.get(s, "median", here, (int, float)) if "median" in s else None
        return Stats(min=self.get(s, "min", here, (int, float)), mean=self.get(s, "mean", here, (int, float)),
                     max=self.get(s, "max", here, (int, float)), median=median)

    def halo(self, doc: dict[str, Any]) -> HaloRun:
        context = self.get(doc, "context", "", dict)
        config = self.get(doc, "config", "", dict)
        self.get(context, "nprocs", "context", int)
        for key in ("lx", "ly", "lz", "proc_x", "proc_y", "proc_z", "l", "m", "n"):
            self.get(config, key, "config", int)
        strategies = []
        for i, r in enumerate(self.get(doc, "results", "", list)):
            where = f"results[{i}]"
            if not isinstance(r, dict):
                raise self.fail(where, "is not an object")
            sid = self.get(r, "strategy", where, str)
            skipped = _skip_reason(r)
            timers: dict[str, Stats] = {}
            if skipped is None:
                t = self.get(r, "timers", where, dict)
                timers = {name: self.stats(t, name, f"{where}.timers") for name in t}
                for name in ("loop", "compute", "comm"):
                    if name not in timers:
                        raise self.fail(f"{where}.timers.{name}", "is missing")
            strategies.append(StrategyResult(
                id=sid, alias=str(r.get("alias", "")), step=_step_of(r, sid),
                valid=bool(r.get("valid", skipped is None)), error=r.get("error"),
                steps=int(self.get(r, "steps", where, int)) if skipped is None else int(r.get("steps", 0)),
                timers=timers, bytes_per_step=int(r.get("bytes_per_step", 0)),
                compute_bytes_per_step=int(r.get("compute_bytes_per_step", 0)), skipped=skipped, raw=r))
        probe = None
        probes = doc.get("probes")
        if isinstance(probes, dict) and "memcpy_bandwidth" in probes:
            probe = self.stats(probes, "memcpy_bandwidth", "probes")
        return HaloRun(self.path, context, config, strategies, probe)

    def p2p(self, doc: dict[str, Any]) -> P2PRun:
        context = self.get(doc, "context", "", dict)
        config = self.get(doc, "config", "", dict)
        mode = self.get(doc, "mode", "", str)
        if mode not in P2P_MODES:
            raise self.fail("mode", f"is '{mode}', not one of {', '.join(P2P_MODES)}")
        results = self.get(doc, "results", "", list)
        needs = {"pingpong": ("size", "latency"), "bw": ("size", "bandwidth"), "ring": ("nprocs", "size", "time"),
                 "loggp": ("size", "g_plus_Gs"), "datatype": ("count", "blocklen", "stride", "bytes"),
                 "nbc": ("size", "tests") + NBC_TIMES}[mode]
        for i, r in enumerate(results):
            where = f"results[{i}]"
            if not isinstance(r, dict):
                raise self.fail(where, "is not an object")
            if mode == "nbc":
                self.get(r, "op", where, str)
            for key in needs:
                if key in ("latency", "time") + NBC_TIMES:
                    self.stats(r, key, where)
                else:
                    self.get(r, key, where, (int, float))
        fits = doc.get("fits") or {}
        if not isinstance(fits, dict):
            raise self.fail("fits", "is not an object")
        return P2PRun(self.path, context, config, mode, results, fits)


def _skip_reason(r: dict[str, Any]) -> str | None:
    """Why a strategy did not run, when the tool reports it (available: false / skipped)."""
    if r.get("skipped"):
        return str(r["skipped"]) if not isinstance(r["skipped"], bool) else "skipped"
    if r.get("available") is False:
        return str(r.get("reason") or r.get("error") or "not available")
    return None


def _step_number(sid: str) -> int:
    digits = sid.removeprefix("step")
    return int(digits) if digits.isdigit() else 99


def _step_of(r: dict, sid: str) -> int:
    """CheckMPI's step number; checkmpi's own rows (step null) sort after them."""
    step = r.get("step", _step_number(sid))
    return 99 if step is None else int(step)
