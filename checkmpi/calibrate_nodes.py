"""Where `checkmpi calibrate`'s jobs run when it has several nodes (issue 31): named by `--hosts` or `--hostfile`, or
a Slurm allocation's. Everything measured on one node runs on the first; the off-node link between the first two;
the barrier across 2, 4, ... of them (docs/model.md, "Calibration")."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from checkmpi import hosts as H
from checkmpi.errors import EXIT_FAILED, CheckmpiError
from checkmpi.native import Launcher


@dataclass(frozen=True)
class Nodes:
    names: tuple[str, ...]  # the nodes --hosts or --hostfile named, in order; () without them
    slurm: int = 1  # nodes of the Slurm allocation this runs in (1: none, or one node)

    @property
    def count(self) -> int:
        return len(self.names) or self.slurm

    @property
    def named(self) -> bool:
        return bool(self.names)

    def on_one(self, launcher: Launcher, ranks: int) -> tuple[list[str], int | None]:
        """(launcher options, ranks per node) putting `ranks` ranks on the first node."""
        if self.named:
            return _place(launcher, [(self.names[0], ranks)]), None
        return [], (ranks if self.count > 1 else None)

    def across(self, launcher: Launcher, nodes: int, per_node: int) -> tuple[list[str], int | None]:
        """(launcher options, ranks per node) putting `per_node` ranks on each of the first `nodes` nodes."""
        if self.named:
            return _place(launcher, [(name, per_node) for name in self.names[:nodes]]), None
        return [], per_node


def _place(launcher: Launcher, where: list[tuple[str, int]]) -> list[str]:
    if launcher.kind == "srun":
        return ["--nodelist", ",".join(name for name, _ in where)] + (["-N", str(len(where))] if len(where) > 1
                                                                      else [])
    spelled = ",".join(f"{name}:{k}" for name, k in where)
    return ["--host" if launcher.flavor == "openmpi" else "-hosts", spelled]


def nodes_of(hosts: str | None, hostfile: str | None) -> Nodes:
    """--hosts H1,H2,... or --hostfile FILE (at most one: the parser says so), else the Slurm allocation's count."""
    if hosts is not None and hostfile is not None:
        raise CheckmpiError(f"--hostfile {hostfile} and --hosts {hosts} both name the nodes; give one of them")
    if hosts is not None:
        names = [n.split(":", 1)[0] for n in H.check_hosts(hosts)]
        what = f"--hosts '{hosts}'"
    elif hostfile is not None:
        names = hostfile_names(hostfile)
        what = f"--hostfile '{hostfile}'"
    else:
        value = os.environ.get("SLURM_JOB_NUM_NODES", "")
        return Nodes((), int(value) if value.isdigit() and int(value) > 0 else 1)
    if len(names) < 2 or len(set(names)) != len(names):
        raise CheckmpiError(f"{what} names {', '.join(names)}: calibrating across nodes needs at least two different "
                            "nodes, each once")
    return Nodes(tuple(names))


def hostfile_names(path: str) -> list[str]:
    """The nodes a hostfile names, in order: each line's first word (Open MPI's `NAME slots=N`, MPICH's `NAME:N`),
    without comments and slot counts; checked as --hosts' names are."""
    text = H.check_hostfile(path).read_text(errors="replace")
    names = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            names.append(words[0].split(":", 1)[0])
    for name in names:
        if len(name) > 253 or not H.HOST_NAME.fullmatch(name):
            raise CheckmpiError(f"--hostfile '{path}': {name!r} is not a host name (letters, digits, '-' and '.', "
                                "at most 253 characters)")
    return names


def doubling(n: int) -> list[int]:
    """1, 2, 4, ... below n, then n."""
    ks, k = [], 1
    while k < n:
        ks.append(k)
        k *= 2
    return ks + [n]


def barriers_across(runner: Any, where: Nodes, np: int, options: list[str]) -> dict[str, Any]:
    """MPI_Barrier with ranks on several nodes: on 2, 4, ... of them (up to all), 1, 2, 4, ... up to `np` ranks on
    each, a job of its own each; per point the median (checkmpi-p2p barrier), sorted by nodes, then ranks per node.
    `runner` is calibrate's Runner; the ranks must land on as many nodes as asked."""
    points, source = [], []
    for n in doubling(where.count)[1:]:
        for per in doubling(np):
            at, per_node = where.across(runner.launcher, n, per)
            k = n * per
            run, src, _ = runner.run("checkmpi-p2p", k, ["barrier", *options], f"barrier-{n}n-{per}",
                                     f"barrier across {n} nodes, {per} rank{'s' if per > 1 else ''} each", per_node, at)
            if int(run.context["nodes"]) != n:
                raise CheckmpiError(f"the barrier of '{run.path}' was meant to span {n} nodes but ran on "
                                    f"{run.context['nodes']} (see its hostnames); check the nodes given",
                                    EXIT_FAILED)
            r = next(r for r in run.results if int(r["nprocs"]) == k)
            points.append({"nodes": n, "ranks_per_node": per, "ranks": k, "seconds": float(r["latency"]["median"])})
            source.append(src)
    return {"points": points, "source": "; ".join(source)}
