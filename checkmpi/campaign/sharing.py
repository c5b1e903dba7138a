"""Runs of a campaign that shared a node at the same time (docs/campaign.md,
"Shared nodes"): each attempt of a run holds its nodes from its start to its
end; two runs whose attempts overlap in time on a common node may have slowed
each other, so the report flags them and leaves them out of its statistics.
Pure functions of the records: no tool, no clock."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from checkmpi.campaign.records import epoch_of


@dataclass(frozen=True)
class Span:
    """One attempt of a run: its nodes from start to end (epoch seconds)."""

    run: str
    start: float
    end: float
    nodes: frozenset[str]
    current: bool  # the record's own attempt, not one of its `previous`


def expand_hostlist(text: str) -> list[str]:
    """Slurm's compressed host list as `scontrol show hostnames` expands it: "n[1-2,05],gpu1" -> n1, n2, n05, gpu1."""
    names: list[str] = []
    for part in re.split(r",(?![^\[]*\])", text.strip()):  # commas outside brackets
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", part)
        if not m:
            names += [part] if part else []
            continue
        head, ranges, tail = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            if not lo.isdigit() or not (hi or lo).isdigit():
                return [text]  # not a host list after all: the text as it is
            for i in range(int(lo), int(hi or lo) + 1):
                names += expand_hostlist(f"{head}{i:0{len(lo)}d}{tail}")
    return names


def _host(name: str) -> str:
    """A node as both sources name it: Slurm's short name, a host name without its domain."""
    return name if re.fullmatch(r"[\d.]+", name) else name.split(".")[0]


def spans(record: dict[str, Any]) -> list[Span]:
    """The attempts of a record that ran: its own and the earlier ones it keeps, each with a start, an end
    (`ended`, else `finished` in records older than it) and nodes: the host names of its results where it has
    them (where its ranks ran), else the nodes it was given (its Slurm job's, or this machine)."""
    out = []
    for attempt, current in [*((a, False) for a in record.get("previous") or []), (record, True)]:
        if attempt.get("status") == "not_started":  # checkmpi-halo never ran: it held no node
            continue
        start, end = epoch_of(attempt.get("started")), epoch_of(attempt.get("ended") or attempt.get("finished"))
        names = attempt.get("hostnames") or [n for x in attempt.get("nodes") or [] for n in expand_hostlist(x)]
        if start is not None and end is not None and names:
            out.append(Span(record["run"], start, end, frozenset(map(_host, names)), current))
    return out


def shared_nodes(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """Per run whose latest attempt shared a node with an attempt of another run at an overlapping time, those
    runs and the nodes shared. Spans that only touch (one ends as the next starts) do not overlap, and a run
    never shares with itself."""
    found: dict[str, dict[str, set[str]]] = {}
    ordered = sorted((s for rec in records for s in spans(rec)), key=lambda s: s.start)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            if b.start >= a.end:
                break
            common = a.nodes & b.nodes
            if a.run == b.run or b.end <= a.start or not common:
                continue
            for one, other in ((a, b), (b, a)):
                if one.current:
                    found.setdefault(one.run, {}).setdefault(other.run, set()).update(common)
    return {run: {other: sorted(nodes) for other, nodes in sorted(others.items())} for run, others in found.items()}
