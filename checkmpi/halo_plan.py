"""What a halo run would be, from the native tool (`checkmpi-halo --plan`,
schema checkmpi.plan/1): the grid, the block, memory and each strategy's
messages, worked out by the functions the run itself uses. Python keeps no
copy of that arithmetic: it asks.
"""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass
from typing import Any

from checkmpi.catalog import Row, row
from checkmpi.errors import EXIT_FAILED, CheckmpiError
from checkmpi.grid import Triple
from checkmpi.native import find_executable
from checkmpi.results import schema_validator

PLAN_SCHEMA = "checkmpi.plan/1"


@dataclass(frozen=True)
class StrategyPlan:
    row: Row
    compute: str  # its compute part with the run's --compute, resolved
    kernel_passes: int
    directions: dict[str, dict[str, int]]  # x, y, z: messages_per_sign, message_bytes, halo_bytes


@dataclass(frozen=True)
class Plan:
    ranks: int
    procs: Triple
    size: Triple
    local: Triple
    precision: str
    backend: str
    compute: str
    field_bytes: int
    memory_per_rank: int
    strategies: tuple[StrategyPlan, ...]
    raw: dict[str, Any]

    def largest_message(self) -> int:
        """The largest message payload of any planned strategy, in bytes."""
        return max((d["message_bytes"] for s in self.strategies for d in s.directions.values()), default=0)


def make(options: list[str], bin_dir: str | None = None) -> Plan:
    """The plan checkmpi-halo makes of `options` (its own: --local, --size, --procs, --np, --default-np,
    --strategy, --precision, --input ...). A usage error (exit 2) comes back as the tool's one line."""
    exe = find_executable("checkmpi-halo", bin_dir)
    return _plan(str(exe.path), tuple(options))


@functools.lru_cache(maxsize=256)
def _plan(exe: str, options: tuple[str, ...]) -> Plan:
    cmd = [exe, "--plan", "-", *options]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CheckmpiError(f"cannot plan the run with {exe}: {e}", EXIT_FAILED) from None
    if done.returncode == 2:  # the options are wrong: the tool's own one-line reason
        line = next((ln for ln in done.stderr.splitlines() if "error:" in ln), done.stderr.strip())
        raise CheckmpiError(line.split("error:", 1)[-1].strip())
    if done.returncode != 0:
        raise CheckmpiError(f"{exe} --plan failed (exit {done.returncode}): {done.stderr.strip()[:300]}", EXIT_FAILED)
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise CheckmpiError(f"{exe} --plan printed no JSON: {e.msg}", EXIT_FAILED) from None
    return parse(doc, exe)


def parse(doc: dict[str, Any], origin: str) -> Plan:
    errors = list(schema_validator(PLAN_SCHEMA).iter_errors(doc)) if doc.get("schema") == PLAN_SCHEMA else []
    if doc.get("schema") != PLAN_SCHEMA or errors:
        why = errors[0].message if errors else f"not a plan (schema {PLAN_SCHEMA})"
        raise CheckmpiError(f"{origin}: {why}", EXIT_FAILED)
    strategies = tuple(StrategyPlan(row(s["catalog"]), s["run"]["compute"], s["run"]["kernel_passes"],
                                    s["run"]["directions"]) for s in doc["strategies"])
    return Plan(doc["ranks"], tuple(doc["procs"]), tuple(doc["size"]), tuple(doc["local"]),  # type: ignore[arg-type]
                doc["precision"], doc["backend"], doc["compute"], doc["field_bytes"], doc["memory_per_rank"],
                strategies, doc)
