"""Grids and decompositions: `2x2x2` parsing, balanced factorisations, core counts."""

from __future__ import annotations

import os
from itertools import product
from pathlib import Path

from checkmpi.errors import CheckmpiError

Triple = tuple[int, int, int]


def parse_triple(text: str, option: str) -> Triple:
    """'2x2x2' (also 'X' or '*' as separators) -> (2, 2, 2); all positive."""
    parts = text.lower().replace("*", "x").split("x")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3 or min(values) <= 0:
        raise CheckmpiError(f"{option} expects three positive integers like 4x2x2, got '{text}'")
    return values  # type: ignore[return-value]


def factorisations(n: int) -> list[Triple]:
    """Every ordered (px, py, pz) with px*py*pz == n."""
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    return [(a, b, n // (a * b)) for a, b in product(divisors, divisors) if (n // a) % b == 0]


def dims_create(n: int) -> Triple:
    """The most balanced grid for n ranks, non-increasing like MPI_Dims_create."""
    best = min(factorisations(n), key=lambda t: (max(t) - min(t), [-v for v in t]))
    return tuple(sorted(best, reverse=True))  # type: ignore[return-value]


def dims_for_size(n: int, size: Triple) -> Triple | None:
    """The grid for n ranks that divides `size` evenly with the least halo surface per rank."""
    def surface(d: Triple) -> float:
        l, m, k = (s / p for s, p in zip(size, d))
        return l * m + m * k + l * k

    fits = [d for d in factorisations(n) if all(s % p == 0 for s, p in zip(size, d))]
    # Ties prefer more ranks along x, as MPI_Dims_create does.
    return min(fits, key=lambda d: (surface(d), [-v for v in d])) if fits else None


def physical_cores() -> int:
    """Cores this process may run on, counting hyper-threads of one core once.

    Open MPI's default slot count is the number of cores, and a memory-bound
    benchmark gains nothing from a second rank per core.
    """
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    cores = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add(((topo / "physical_package_id").read_text().strip(), (topo / "core_id").read_text().strip()))
        except OSError:
            cores.add(("cpu", str(cpu)))
    return max(1, len(cores))
