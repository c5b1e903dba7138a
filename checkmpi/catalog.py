"""The strategy catalog, read from the native tool (`checkmpi-halo
--list-strategies --json`, schema checkmpi.catalog/2): the model keeps no copy.

The tool also resolves --strategy (ids, aliases, numbers, `all`,
compositions), so a selection means here what it means to checkmpi-halo.
"""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass
from typing import Any

from checkmpi.errors import EXIT_FAILED, CheckmpiError
from checkmpi.native import find_executable
from checkmpi.results import HaloRun, schema_validator

CATALOG_SCHEMA = "checkmpi.catalog/2"


@dataclass(frozen=True)
class Row:
    id: str
    alias: str
    number: int | None
    description: str
    parts: dict[str, str]
    traits: dict[str, Any]  # grid-independent: see schemas/checkmpi.catalog-2.schema.json
    unavailable: str | None


def parse(doc: dict[str, Any], origin: str) -> list[Row]:
    """The rows of a catalog document; CheckmpiError if it does not validate."""
    if doc.get("schema") != CATALOG_SCHEMA:
        raise CheckmpiError(f"{origin}: not a strategy catalog (schema {CATALOG_SCHEMA})", EXIT_FAILED)
    errors = list(schema_validator(CATALOG_SCHEMA).iter_errors(doc))
    if errors:
        raise CheckmpiError(f"{origin}: the catalog does not validate: {errors[0].message}", EXIT_FAILED)
    return [Row(r["id"], r["alias"], r["number"], r["description"], r["parts"], r["traits"], r["unavailable"])
            for r in doc["strategies"]]


def load(selection: str = "all", bin_dir: str | None = None) -> list[Row]:
    """The rows `selection` names, as checkmpi-halo --strategy resolves it."""
    exe = find_executable("checkmpi-halo", bin_dir)
    return list(_listing(str(exe.path), selection)[0])


def default_compute(backend: str, bin_dir: str | None = None) -> str:
    """What checkmpi-halo --compute auto (its default) runs on `backend` ("host" or "cuda")."""
    exe = find_executable("checkmpi-halo", bin_dir)
    return _listing(str(exe.path), "all")[1][backend]


@functools.lru_cache(maxsize=64)
def _listing(exe: str, selection: str) -> tuple[tuple[Row, ...], dict[str, str]]:
    """One run of the tool per binary and selection: starting it (MPI's init) takes a while."""
    cmd = [exe, "--list-strategies", "--strategy", selection, "--json", "-"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CheckmpiError(f"cannot list the strategies with {exe}: {e}", EXIT_FAILED) from None
    if done.returncode == 2:  # bad --strategy: the tool's own one-line reason
        line = next((ln for ln in done.stderr.splitlines() if "error:" in ln), done.stderr.strip())
        raise CheckmpiError(line.split("error:", 1)[-1].strip())
    if done.returncode != 0:
        raise CheckmpiError(f"{exe} --list-strategies failed (exit {done.returncode}): "
                            f"{done.stderr.strip()[:300]}", EXIT_FAILED)
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise CheckmpiError(f"{exe} --list-strategies --json printed no JSON: {e.msg}", EXIT_FAILED) from None
    return tuple(parse(doc, exe)), dict(doc["default_compute"])


def rows_of_run(run: HaloRun, bin_dir: str | None = None) -> dict[str, Row]:
    """The catalog rows of the strategies a halo run ran, by its strategy id: the
    results' parts (compute resolved as it ran) are handed to the tool as compositions."""
    ran = run.ran()
    if not ran:
        return {}
    rows = load(",".join(_composition(s.raw["parts"]) for s in ran), bin_dir)
    by_parts = {tuple(sorted(r.parts.items())): r for r in rows}
    out = {}
    for s in ran:
        row = by_parts.get(tuple(sorted(s.raw["parts"].items())))
        if row is not None:
            out[s.id] = row
    return out


def _composition(parts: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in parts.items())
