"""What a campaign runs: its points (one grid and global size each), and its
runs (submission x point x strategy), in the order they execute."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from checkmpi.campaign.spec import Spec, Sweep
from checkmpi.grid import Triple
from checkmpi.results import x_join

T = TypeVar("T")


@dataclass(frozen=True)
class Point:
    np: int
    procs: Triple
    size: Triple  # global

    @property
    def id(self) -> str:
        return f"{x_join(self.procs)}-{x_join(self.size)}"

    @property
    def local(self) -> Triple:
        return tuple(s // p for s, p in zip(self.size, self.procs))  # type: ignore[return-value]

    def as_json(self) -> dict:
        return {"id": self.id, "np": self.np, "procs": list(self.procs), "size": list(self.size),
                "local": list(self.local)}


@dataclass(frozen=True)
class Run:
    submission: int  # 1-based: one per repetition
    point: Point
    strategy: str

    @property
    def id(self) -> str:
        return f"s{self.submission}-{self.point.id}-{self.strategy}"

    def describe(self) -> str:
        return (f"submission {self.submission}, {self.point.np} ranks {x_join(self.point.procs)}, "
                f"size {x_join(self.point.size)}, {self.strategy}")


def sweep_points(sweep: Sweep) -> list[Point]:
    if sweep.kind == "size":
        assert sweep.procs is not None
        return [Point(math.prod(sweep.procs), sweep.procs, size) for size in sweep.sizes]
    assert sweep.local is not None
    return [Point(np, procs, tuple(a * b for a, b in zip(sweep.local, procs)))  # type: ignore[arg-type]
            for np, procs in zip(sweep.nps, sweep.grids)]


def points(spec: Spec) -> list[Point]:
    """Every point once, in spec order (a point two sweeps share runs once)."""
    return list(dict.fromkeys(p for sweep in spec.sweeps for p in sweep_points(sweep)))


def plan(spec: Spec) -> list[Run]:
    """All runs in execution order: submission, then point, then strategy."""
    return [Run(k, p, s) for k in range(1, spec.repetitions + 1) for p in points(spec) for s in spec.strategies]


def by_submission(items: Iterable[T], submission: Callable[[Any], int] = lambda r: r.submission
                  ) -> dict[int, list[T]]:
    """Items (runs, cells) grouped by their submission, in their order: one pass, however many submissions."""
    groups: dict[int, list[T]] = {}
    for item in items:
        groups.setdefault(submission(item), []).append(item)
    return groups


def max_ranks(spec: Spec) -> int:
    return max(p.np for p in points(spec))


def nodes_for(np: int, ranks_per_node: int | None) -> int:
    return 1 if ranks_per_node is None else math.ceil(np / ranks_per_node)
