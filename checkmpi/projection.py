"""Weak scale-up projection: the same block per rank on grids of N ranks
(MPI_Dims_create's), ranks filling nodes in order, each strategy predicted
on the busiest rank; and the measured points to lay over it."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from checkmpi import placement
from checkmpi.catalog import Row
from checkmpi.errors import CheckmpiError
from checkmpi.grid import Triple, dims_create
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


def project(counts: list[int], case: Case, rows: list[Row], machine: Machine) -> list[Point]:
    """`case` gives the block, options and ranks per node; its grid is replaced for each count."""
    out = []
    for n in counts:
        procs = dims_create(n)
        at = dataclasses.replace(case, procs=procs)
        rank, kinds = placement.busiest(procs, at.rpn)
        out.append(Point(n, procs, math.ceil(n / at.rpn), rank, placement.counts(kinds), predict(rows, at, machine)))
    return out


def measured_points(runs: list[HaloRun]) -> dict[str, list[tuple[int, float]]]:
    """Strategy id -> (ranks, measured time per step) of each run, sorted by ranks."""
    out: dict[str, list[tuple[int, float]]] = {}
    for run in runs:
        for s in run.ran():
            out.setdefault(s.id, []).append((run.nprocs, measured_total(s)))
    return {k: sorted(v) for k, v in out.items()}
