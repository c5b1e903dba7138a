"""`2x2x2` parsing and core counts (decompositions are checkmpi-halo's: checkmpi.halo_plan)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from checkmpi.errors import CheckmpiError

Triple = tuple[int, int, int]


def parse_triple(text: str, option: str) -> Triple:
    """'2x2x2' (also 'X' or '*' as separators) -> (2, 2, 2); all positive."""
    parts = text.lower().replace("*", "x").split("x")
    # Decimal digits only, as checkmpi-halo reads them (int() would also take "2_0", "+2" and other scripts' digits).
    values = tuple(int(p) for p in parts) if all(re.fullmatch(r"[0-9]+", p) for p in parts) else ()
    if len(values) != 3 or min(values) <= 0:
        raise CheckmpiError(f"{option} expects three positive integers like 4x2x2, got '{text}'")
    return values  # type: ignore[return-value]


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
