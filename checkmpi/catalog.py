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
    return [row(r) for r in doc["strategies"]]


def row(r: dict[str, Any]) -> Row:
    """A validated catalog row (a catalog's, a result's or a plan's `catalog`) as a Row."""
    return Row(r["id"], r["alias"], r["number"], r["description"], r["parts"], r["traits"], r["unavailable"])


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


def rows_of_run(run: HaloRun) -> dict[str, Row]:
    """The catalog rows of the strategies a halo run ran, by its strategy id, as the results carry them."""
    return {s.id: row(s.raw["catalog"]) for s in run.ran()}
