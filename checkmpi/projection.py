"""Weak scale-up projection: the same block per rank on grids of N ranks
(checkmpi-halo's, as it would decompose them), ranks filling nodes in order, each strategy predicted
on the busiest rank; and the measured points to lay over it."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from checkmpi import halo_plan, placement
from checkmpi.catalog import Row
from checkmpi.bounds import load_json
from checkmpi.errors import CheckmpiError
from checkmpi.grid import Triple
from checkmpi.machine import Machine
from checkmpi.model import Case, Prediction, predict
from checkmpi.results import HaloRun
from checkmpi.tables import measured_total

MAX_RANKS = 1 << 17  # the busiest rank is searched rank by rank


@dataclass
class Point:
    nprocs: int
    procs: Triple
    nodes: int
    rank: int  # the busiest rank
    links: dict[str, int]  # its six messages by link kind
    predictions: list[Prediction]


def parse_scale(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1 or max(values) > MAX_RANKS:
        raise CheckmpiError(f"--scale expects rank counts like 8,64,512,1000 (1 to {MAX_RANKS}), got '{text}'")
    return sorted(set(values))


def project(counts: list[int], case: Case, rows: list[Row], machine: Machine,
            bin_dir: str | None = None) -> list[Point]:
    """`case` gives the block, options and ranks per node; its grid is replaced for each count by the one
    checkmpi-halo chooses (its plan)."""
    out = []
    for n in counts:
        procs = halo_plan.make(["--no-input", "--local", "x".join(map(str, case.local)), "--np", str(n)],
                               bin_dir).procs
        at = dataclasses.replace(case, procs=procs)
        rank, kinds = placement.busiest(procs, at.rpn)
        out.append(Point(n, procs, math.ceil(n / at.rpn), rank, placement.counts(kinds), predict(rows, at, machine)))
    return out


@dataclass
class Campaign:
    """The first weak scale-up sweep of a campaign's report (checkmpi.campaign/1)."""

    local: Triple
    counts: list[int]
    ranks_per_node: int | None
    strategies: list[str]
    measured: dict[str, list[tuple[int, float]]]  # strategy -> (ranks, median loop per step)


def load_campaign(path: str) -> Campaign:
    from checkmpi.results import describe, read_input, schema_validator

    try:
        doc = load_json(read_input(Path(path), "campaign report"), path, f"malformed campaign report '{path}'")
    except json.JSONDecodeError as e:
        raise CheckmpiError(f"cannot read campaign report '{path}': {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != "checkmpi.campaign/1":
        raise CheckmpiError(f"'{path}' is not a campaign report (schema checkmpi.campaign/1: "
                            "'checkmpi campaign report DIR --json FILE')")
    error = jsonschema.exceptions.best_match(schema_validator("checkmpi.campaign/1").iter_errors(doc))
    if error is not None:
        raise CheckmpiError(f"malformed campaign report '{path}': {describe(error)}")
    if not doc["scaleup"]:
        raise CheckmpiError(f"campaign report '{path}' has no weak scale-up sweep ([[sweep]] local and np)")
    rows = doc["scaleup"][0]["rows"]
    points = {p["id"]: tuple(p["local"]) for p in doc["points"]}
    if not rows:
        raise CheckmpiError(f"campaign report '{path}': its weak scale-up sweep has no rows")
    unknown = next((row["point"] for row in rows if row["point"] not in points), None)
    if unknown is not None:
        raise CheckmpiError(f"malformed campaign report '{path}': scaleup[0] names point '{unknown}', "
                            "which its points do not hold")
    local = points[rows[0]["point"]]
    itfin = doc["campaign"]["itfin"]
    measured: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        for sid, cell in row["strategies"].items():
            if cell["median_s"] is not None:  # the loop's median over repetitions, whole loop
                measured.setdefault(sid, []).append((row["np"], cell["median_s"] / itfin))
    return Campaign(local, [row["np"] for row in rows], doc["campaign"]["ranks_per_node"],  # type: ignore[arg-type]
                    list(doc["campaign"]["strategies"]), measured)


def measured_points(runs: list[HaloRun]) -> dict[str, list[tuple[int, float]]]:
    """Strategy id -> (ranks, measured time per step) of each run, sorted by ranks."""
    out: dict[str, list[tuple[int, float]]] = {}
    for run in runs:
        for s in run.ran():
            out.setdefault(s.id, []).append((run.nprocs, measured_total(s)))
    return {k: sorted(v) for k, v in out.items()}
