"""How a campaign starts MPI jobs: mpirun on this machine, or inside a Slurm
allocation srun with the PMI plugin the MPI library needs (else the
library's own launcher, which finds the allocation itself)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkmpi.campaign.spec import Spec
from checkmpi.errors import CheckmpiError
from checkmpi.native import Job, Launcher, find_launcher


@dataclass
class Launch:
    """How this process starts MPI jobs: the launcher, and where (local or inside a Slurm job)."""

    launcher: Launcher
    executor: str
    ranks_per_node: int | None
    srun_args: tuple[str, ...]
    note: str  # why this launcher

    def job(self, np: int, argv: list[str], name: str) -> Job:
        extra: tuple[str, ...] = ()
        if self.launcher.kind == "srun":
            # One rank failing ends the step at once instead of leaving the others waiting.
            extra = ("--kill-on-bad-exit=1", "-J", name, *self.srun_args)
        per_node = self.ranks_per_node if self.executor == "slurm" else None
        return Job(self.launcher, np, argv, extra, tag_output=True, per_node=per_node)

    def as_json(self) -> dict[str, Any]:
        return {"executor": self.executor, "launcher": self.launcher.describe(), "kind": self.launcher.kind,
                "mpi": self.launcher.flavor, "why": self.note}


def resolve_launch(spec: Spec, exe: Path) -> Launch:
    """local: mpirun (or the spec's mpiexec). slurm, inside the allocation:
    srun with the PMI plugin the MPI library needs where Slurm offers it,
    else the library's own launcher, which finds the allocation itself."""
    rpn, extra = spec.ranks_per_node, spec.slurm.srun_args
    if spec.executor == "local":
        name = "mpirun" if spec.launcher == "auto" else spec.launcher
        return Launch(find_launcher(name, exe), "local", rpn, (), "this machine")
    if spec.launcher != "auto":
        return Launch(find_launcher(spec.launcher, exe), "slurm", rpn, extra, "[launch] launcher")
    srun = shutil.which("srun")
    if srun is None:
        raise CheckmpiError("srun not found on PATH inside the Slurm job", 1)
    try:
        return Launch(find_launcher(srun, exe), "slurm", rpn, extra, "srun offers the PMI plugin this MPI needs")
    except CheckmpiError as e:
        return Launch(find_launcher("mpirun", exe), "slurm", rpn, extra, f"inside the allocation, because {e.message}")
