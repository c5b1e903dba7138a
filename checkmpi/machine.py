"""The machine profile `checkmpi calibrate` writes and `checkmpi predict --machine` reads.

Schema `checkmpi.machine/2` (schemas/checkmpi.machine-2.schema.json, docs/model.md,
"Calibration"): times in seconds, bandwidths in bytes per second, sizes in bytes.
`load_machine` refuses a file that does not validate with one line (exit 2).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from checkmpi.bounds import load_json
from checkmpi.errors import CheckmpiError
from checkmpi.results import describe, read_input, schema_validator

MACHINE_SCHEMA = "checkmpi.machine/2"
# The compute kernels calibrate times: in place, into a second buffer, and split around the messages in flight
# (the cells that need no halo first, or the inner block first), in place and one-pass; and the shared-memory
# window's, whose neighbours read its fields each step (on a small block nearly every line of them).
KERNELS = ("in-place", "one-pass", "interior", "masked", "interior-one-pass", "masked-one-pass", "window")
# The overlaps whose hiding calibrate measures.
OVERLAPS = ("interior", "masked")
# Oversubscribed turns are measured per kernel and schedule: by direction in place or one pass, all at once
# without overlap, and with each overlap; and for mock, whose exchange is untimed (optional: older profiles).
TURN_KINDS = ("in-place", "one-pass", "all-at-once", "interior", "masked", "mock")


@dataclass(frozen=True)
class Segment:
    """Hockney's t(s) = alpha + s / beta for min_size <= s <= max_size."""

    min_size: int
    max_size: int
    alpha: float
    beta: float


@dataclass(frozen=True)
class LogGP:
    L: float
    o_s: float
    o_r: float
    g: float
    G: float


@dataclass(frozen=True)
class Link:
    """Point-to-point between two ranks (on one node: intra; on two nodes: inter)."""

    hockney: tuple[Segment, ...]  # sorted by min_size, at least one
    loggp: LogGP | None
    source: str

    def segment(self, size: float) -> Segment:
        """The segment whose range holds `size`; beyond the last one, the last."""
        return next((s for s in self.hockney if size <= s.max_size), self.hockney[-1])

    def time(self, size: float) -> float:
        """One-way time of a `size`-byte message (Hockney, per regime)."""
        s = self.segment(size)
        return s.alpha + size / s.beta


@dataclass(frozen=True)
class SelfExchange:
    """A message a rank sends to itself through MPI: alpha + s / beta."""

    alpha: float
    beta: float
    source: str

    def time(self, size: float) -> float:
        return self.alpha + size / self.beta


@dataclass(frozen=True)
class BarrierPoint:
    ranks: int
    seconds: float


@dataclass(frozen=True)
class AcrossPoint:
    """MPI_Barrier with `ranks_per_node` ranks on each of `nodes` nodes."""

    nodes: int
    ranks_per_node: int
    seconds: float


@dataclass(frozen=True)
class WaitPoint:
    """With `ranks` ranks of a node exchanging at once, what one completion (a blocking receive by
    direction, the Waitall all at once) costs beyond the link, self and barrier terms: the wait for a
    partner that is late or descheduled."""

    ranks: int
    by_direction: float
    all_at_once: float


@dataclass(frozen=True)
class Exchange:
    """Per-completion waits measured by calibrate on a tiny block, every rank exchanging."""

    points: tuple[WaitPoint, ...]  # sorted by ranks; empty where calibrated with one rank per node
    source: str
    across: WaitPoint | None = None  # one rank on each of two nodes (ranks: 1 per node); None: one node

    def wait(self, ranks: int, by_direction: bool, nodes: int = 1) -> float:
        """Seconds per completion with `ranks` ranks on the node (of `nodes`): one rank per node across nodes
        as measured so where it was; else linear in log2(ranks) between measured points, the nearest point
        outside them (a node holds no more ranks than were measured); 0 without points."""
        value = (lambda p: p.by_direction) if by_direction else (lambda p: p.all_at_once)
        if ranks <= 1 and nodes > 1 and self.across is not None:
            return value(self.across)
        return _between(self.points, ranks, value, log=True) if self.points else 0.0


@dataclass(frozen=True)
class TurnPoint:
    ranks: int  # ranks of a node, more than its cores
    factors: dict[str, float]  # by TURN_KINDS (mock where measured)


@dataclass(frozen=True)
class Turns:
    """Oversubscribed nodes: the other ranks' turns on its core that a rank waits through in MPI per step, in units
    of its own work, per kernel and schedule (TURN_KINDS), as measured by calibrate (points or across, at least
    one)."""

    points: tuple[TurnPoint, ...]  # on one node, sorted by ranks
    source: str
    # Measured across nodes (calibrate over several): ranks is then the ranks per CPU, partners on other nodes too.
    across: tuple[TurnPoint, ...] = ()

    def factor(self, ranks: int, kind: str, across: bool = False) -> float | None:
        """Linear in log2(ranks) between measured points, the nearest point outside them; None where `kind`
        was not measured. `across`: a run over several nodes, by the points measured so where there are any."""
        points = self.across if across and self.across else self.points
        if not points or any(kind not in p.factors for p in points):
            return None
        return _between(points, ranks, lambda p: p.factors[kind], log=True)


@dataclass(frozen=True)
class Datatype:
    """Extra cost of a non-contiguous derived datatype over a contiguous message: o + O * s."""

    o: float
    O: float  # noqa: E741 (the LogGP-style name)
    source: str


@dataclass(frozen=True)
class CopyPoint:
    ranks: int  # ranks of a node copying at once
    bandwidth: float  # bytes read + written per second, per rank


@dataclass(frozen=True)
class Memory:
    copy: tuple[CopyPoint, ...]  # sorted by ranks, at least one
    source: str

    def bandwidth(self, ranks: int) -> float:
        """Per-rank copy bandwidth with `ranks` ranks copying at once: linear between measured points,
        the nearest point outside them."""
        return _between(self.copy, ranks, lambda p: p.bandwidth, log=False)


@dataclass(frozen=True)
class Kernels:
    """The compute kernels' streaming rate per kind (KERNELS), versus ranks of a node at once, at block `local`."""

    rates: dict[str, Memory]  # by kind: bytes read + written per second per rank versus ranks at once
    local: tuple[int, int, int]

    def bandwidth(self, kind: str, ranks: int) -> float:
        return self.rates[kind].bandwidth(ranks)


@dataclass(frozen=True)
class BlockRates:
    """What calibrate measured at one block with some ranks of a node at once: the copy bandwidth, each compute
    kernel's (KERNELS) and the pack bandwidths per direction (bytes per second per rank); the part of the MPI time
    each overlap hides (`overlap`: interior, masked; 0 to 1); and one of the window's node barriers (seconds, None
    where not measured)."""

    copy: float
    compute: dict[str, float]
    x: Direction
    y: Direction
    z: Direction
    overlap: dict[str, float] = dataclasses.field(default_factory=dict)
    window_wait: float | None = None
    waits: dict[str, float] = dataclasses.field(default_factory=dict)  # per completion, by schedule (Exchange's)


@dataclass(frozen=True)
class BlockPoint:
    local: tuple[int, int, int]
    bytes: int  # the working set: the three fields' arrays per rank, halos included
    by_ranks: tuple[tuple[int, BlockRates], ...]  # sorted by ranks, at least one


@dataclass(frozen=True)
class Blocks:
    """The rates that depend on the caches, measured at several blocks (sorted by bytes, at least one)."""

    points: tuple[BlockPoint, ...]
    source: str

    def at(self, working_set: float, ranks: int) -> BlockRates:
        """The rates for a `working_set` of bytes per rank with `ranks` ranks of a node at once: at each block
        linear in ranks between its measured rank counts (the nearest outside them), then between the two
        blocks around the working set linear in log(rate) over log(bytes) (the nearest block outside them)."""
        per_block = [(p.bytes, _rates_at(p.by_ranks, ranks)) for p in self.points]
        if working_set <= per_block[0][0] or len(per_block) == 1:
            return per_block[0][1]
        for (b0, r0), (b1, r1) in zip(per_block, per_block[1:]):
            if working_set <= b1:
                return _blend(r0, r1, math.log(working_set / b0) / math.log(b1 / b0))
        return per_block[-1][1]


def _linear(a: float, b: float, f: float) -> float:
    return a + f * (b - a)


def _rates_at(by_ranks: tuple[tuple[int, BlockRates], ...], ranks: int) -> BlockRates:
    if ranks <= by_ranks[0][0]:
        return by_ranks[0][1]
    for (k0, r0), (k1, r1) in zip(by_ranks, by_ranks[1:]):
        if ranks <= k1:
            return _mix(r0, r1, (ranks - k0) / (k1 - k0), _linear)
    return by_ranks[-1][1]


def _blend(r0: BlockRates, r1: BlockRates, f: float) -> BlockRates:
    return _mix(r0, r1, f, lambda a, b, t: math.exp(_linear(math.log(a), math.log(b), t)))


def _mix(r0: BlockRates, r1: BlockRates, f: float, rate: Callable[[float, float, float], float]) -> BlockRates:
    """Each rate of r0 and r1 combined by rate(a, b, f), a direction's optional rates where both have them; the
    overlaps' parts hidden and the window's wait linearly."""
    def direction(a: Direction, b: Direction) -> Direction:
        return Direction(*(None if u is None or v is None else rate(u, v, f)
                           for u, v in zip(dataclasses.astuple(a), dataclasses.astuple(b))))

    wait = None if r0.window_wait is None or r1.window_wait is None else _linear(r0.window_wait, r1.window_wait, f)
    waits = {k: _linear(r0.waits[k], r1.waits[k], f) for k in r0.waits if k in r1.waits} or r0.waits or r1.waits
    return BlockRates(rate(r0.copy, r1.copy, f), {k: rate(r0.compute[k], r1.compute[k], f) for k in r0.compute},
                      direction(r0.x, r1.x), direction(r0.y, r1.y), direction(r0.z, r1.z),
                      {k: _linear(r0.overlap[k], r1.overlap[k], f) for k in r0.overlap}, wait, waits)


@dataclass(frozen=True)
class Direction:
    pack: float  # payload bytes per second, the pack kernels
    unpack: float
    # Optional (None: not measured): MPI_Pack and MPI_Unpack of the plane's datatype (what MPI's datatype engine
    # costs on that shape), and plane-to-plane reads from the neighbour's shared-memory window.
    mpi_pack: float | None = None
    mpi_unpack: float | None = None
    window: float | None = None


@dataclass(frozen=True)
class Pack:
    """Pack and unpack bandwidth of one backend's kernels, per direction, at block size `local`."""

    x: Direction
    y: Direction
    z: Direction
    local: tuple[int, int, int]
    source: str
    by_ranks: tuple[tuple[int, Pack], ...] = ()  # (ranks at once, the bandwidths then), sorted; may be empty
    window_wait: float | None = None  # seconds per step of the window's node barrier (None: not measured)

    def direction(self, name: str) -> Direction:
        return {"x": self.x, "y": self.y, "z": self.z}[name]

    def at(self, ranks: int) -> Pack | None:
        """The bandwidths measured with the most ranks at once up to `ranks` (the fewest measured below
        them); None without measurements per rank count."""
        if not self.by_ranks:
            return None
        return next((p for k, p in reversed(self.by_ranks) if k <= ranks), self.by_ranks[0][1])


STAND_IN_NOTE = "off-node link not measured: the on-node link times the messages between nodes"
STAND_IN_WARNING = ("the prediction crosses nodes, but the machine profile has no off-node link: its messages between "
                    "nodes are timed as on-node ones, which a network is slower than (calibrate across two nodes: "
                    "checkmpi calibrate --hostfile FILE or --hosts H1,H2, or in a Slurm allocation of two nodes)")


@dataclass(frozen=True)
class Machine:
    path: Path
    context: dict[str, Any]
    intra: Link
    inter: Link | None  # None: one node, not measured
    self_exchange: SelfExchange
    barrier: tuple[BarrierPoint, ...]  # sorted by ranks, at least one
    datatype: Datatype | None
    memory: Memory
    pack_host: Pack
    pack_cuda: Pack | None
    raw: dict[str, Any]
    exchange: Exchange | None = None  # None: not measured (older profiles, --p2p inputs): no wait term
    compute: Kernels | None = None  # None: not measured: compute streams at the copy bandwidth
    turns: Turns | None = None  # None: not measured: a rank waits through its core's other ranks' work once each
    blocks: Blocks | None = None  # None (a profile from p2p results): the rates of `memory`, `compute`, `pack`
    barrier_across: tuple[AcrossPoint, ...] = ()  # sorted by nodes, then ranks per node; () on one node

    @property
    def ranks_per_node(self) -> int:
        return int(self.context["ranks_per_node"])

    def link(self, same_node: bool) -> Link:
        """The link between two ranks; between nodes, the intra-node one where inter was not measured (whoever
        predicts across nodes says so: off_node_link, STAND_IN_WARNING)."""
        return self.intra if same_node or self.inter is None else self.inter

    def off_node_link(self, inter_messages: int) -> str:
        """How `inter_messages` messages between nodes were timed: "not used" (none), "measured", or "on-node
        stand-in" (the profile has no off-node link, and the on-node one's times stood in for it)."""
        if inter_messages == 0:
            return "not used"
        return "measured" if self.inter is not None else "on-node stand-in"

    def pack(self, backend: str) -> Pack | None:
        return self.pack_host if backend == "host" else self.pack_cuda if backend == "cuda" else None

    def exchange_wait(self, ranks: int, by_direction: bool, nodes: int = 1) -> float:
        """What one completion waits for its partners with `ranks` ranks on a node (of `nodes`); 0 where not
        measured."""
        return self.exchange.wait(ranks, by_direction, nodes) if self.exchange is not None else 0.0

    def barrier_seconds(self, ranks: int, nodes: int = 1) -> float:
        """MPI_Barrier on `ranks` ranks over `nodes` nodes. On one node (or a profile measured on one): linear in
        log2(ranks) between measured points, the first point below them, and past the last the last per-doubling
        step extrapolated. Across nodes, from `barrier_across`: at the measured ranks per node nearest the case's
        (in log2; the fewer on a tie), the same in log2(nodes), plus what the node's own barrier adds from those
        ranks per node to the case's (at least 0)."""
        if nodes > 1 and self.barrier_across:
            per = math.ceil(ranks / nodes)
            measured = sorted({p.ranks_per_node for p in self.barrier_across})
            near = min(measured, key=lambda k: (abs(math.log2(per / k)), k))
            pts = [p for p in self.barrier_across if p.ranks_per_node == near]
            across = _extrapolated([(p.nodes, p.seconds) for p in pts], nodes)
            return across + max(0.0, self.barrier_seconds(per) - self.barrier_seconds(near))
        pts = self.barrier
        if ranks <= 1 and pts[0].ranks > 1:
            return 0.0
        if ranks <= pts[-1].ranks or len(pts) == 1:
            return _between(pts, ranks, lambda p: p.seconds, log=True)
        lo, hi = pts[-2], pts[-1]
        step = (hi.seconds - lo.seconds) / math.log2(hi.ranks / lo.ranks)
        return hi.seconds + max(step, 0.0) * math.log2(ranks / hi.ranks)


def _extrapolated(pts: list[tuple[int, float]], n: int) -> float:
    """(count, seconds) points sorted by count, at `n`: linear in log2(n) between them, the first below them, past
    the last the last per-doubling step extrapolated (at least flat)."""
    if n <= pts[0][0] or len(pts) == 1 and n <= pts[-1][0]:
        return pts[0][1]
    for (k0, v0), (k1, v1) in zip(pts, pts[1:]):
        if n <= k1:
            return v0 + math.log2(n / k0) / math.log2(k1 / k0) * (v1 - v0)
    if len(pts) == 1:
        return pts[0][1]
    (k0, v0), (k1, v1) = pts[-2], pts[-1]
    return v1 + max(0.0, (v1 - v0) / math.log2(k1 / k0)) * math.log2(n / k1)


def _between(pts: Sequence[Any], ranks: int, value: Callable[[Any], float], log: bool) -> float:
    """value(point) at `ranks` from points sorted by `.ranks`: linear (in log2(ranks) with `log`) between
    the measured points around it, the nearest point outside them."""
    if ranks <= pts[0].ranks:
        return value(pts[0])
    for lo, hi in zip(pts, pts[1:]):
        if ranks <= hi.ranks:
            if log:
                f = math.log2(ranks / lo.ranks) / math.log2(hi.ranks / lo.ranks)
            else:
                f = (ranks - lo.ranks) / (hi.ranks - lo.ranks)
            return value(lo) + f * (value(hi) - value(lo))
    return value(pts[-1])


def load_machine(path: str | Path) -> Machine:
    """Reads and validates a machine profile; CheckmpiError (one line, exit 2) on any problem."""
    p = Path(path)
    text = read_input(p, "machine profile")
    try:
        doc = load_json(text, str(p), f"malformed machine profile '{p}'")
    except json.JSONDecodeError as e:
        raise CheckmpiError(f"'{p}' is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    return machine_of(doc, p)


def machine_of(doc: Any, p: Path) -> Machine:
    """Validates a parsed profile (read from, or to be written to, `p`); CheckmpiError (exit 2) if it is not one."""
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str):
        raise CheckmpiError(f"'{p}' is not a checkmpi machine profile (no \"schema\" key)")
    if doc["schema"] != MACHINE_SCHEMA:
        raise CheckmpiError(f"'{p}' has schema '{doc['schema']}', not {MACHINE_SCHEMA} "
                            f"(write one with 'checkmpi calibrate -o FILE')")
    error = jsonschema.exceptions.best_match(schema_validator(MACHINE_SCHEMA).iter_errors(doc))
    if error is not None:
        raise CheckmpiError(f"malformed machine profile '{p}': {describe(error)}")
    for where, items, key in (("links.intra.hockney", doc["links"]["intra"]["hockney"], "min_size"),
                              ("links.inter.hockney", (doc["links"]["inter"] or {}).get("hockney", []), "min_size"),
                              ("barrier", doc["barrier"], "ranks"), ("memory.copy", doc["memory"]["copy"], "ranks"),
                              ("barrier_across.points", [{"(nodes, ranks_per_node)": (p["nodes"], p["ranks_per_node"])}
                                                         for p in (doc.get("barrier_across") or {}).get("points", [])],
                               "(nodes, ranks_per_node)"),
                              ("exchange.points", (doc.get("exchange") or {}).get("points", []), "ranks"),
                              ("turns.points", (doc.get("turns") or {}).get("points", []), "ranks"),
                              ("turns.across.points", ((doc.get("turns") or {}).get("across") or {}).get("points", []),
                               "ranks"),
                              *((f"compute.{k}", (doc.get("compute") or {}).get(k, []), "ranks") for k in KERNELS),
                              ("blocks.points", doc["blocks"]["points"], "bytes"),
                              *((f"blocks.points[{i}].by_ranks", p["by_ranks"], "ranks")
                                for i, p in enumerate(doc["blocks"]["points"])),
                              *((f"pack.{b}.by_ranks", (doc["pack"][b] or {}).get("by_ranks", []), "ranks")
                                for b in ("host", "cuda"))):
        keys = [item[key] for item in items]
        if any(a >= b for a, b in zip(keys, keys[1:])):
            raise CheckmpiError(f"malformed machine profile '{p}': {where} is not sorted by {key} "
                                f"(strictly increasing): {keys}")
    for where, items in (("links.intra.hockney", doc["links"]["intra"]["hockney"]),
                         ("links.inter.hockney", (doc["links"]["inter"] or {}).get("hockney", []))):
        for i, s in enumerate(items):
            if s["max_size"] < s["min_size"]:
                raise CheckmpiError(f"malformed machine profile '{p}': {where}[{i}].max_size {s['max_size']} is "
                                    f"below its min_size {s['min_size']}")
    return _machine(p, doc)


def _link(d: dict[str, Any] | None) -> Link | None:
    if d is None:
        return None
    segments = tuple(Segment(int(s["min_size"]), int(s["max_size"]), float(s["alpha"]), float(s["beta"]))
                     for s in d["hockney"])
    lg = d["loggp"]
    loggp = None if lg is None else LogGP(*(float(lg[k]) for k in ("L", "o_s", "o_r", "g", "G")))
    return Link(segments, loggp, d["source"])


def _pack(d: dict[str, Any] | None) -> Pack | None:
    if d is None:
        return None
    local = tuple(int(v) for v in d["local"])

    def pack(e: dict[str, Any]) -> Pack:
        x, y, z = (_direction(e[k]) for k in ("x", "y", "z"))
        wait = float(e["window_wait"]) if "window_wait" in e else None
        return Pack(x, y, z, local, d["source"], window_wait=wait)  # type: ignore[arg-type]

    by_ranks = tuple((int(e["ranks"]), pack(e)) for e in d.get("by_ranks", []))
    return dataclasses.replace(pack(d), by_ranks=by_ranks)


def _machine(p: Path, doc: dict[str, Any]) -> Machine:
    intra = _link(doc["links"]["intra"])
    host = _pack(doc["pack"]["host"])
    assert intra is not None and host is not None  # required by the schema
    s = doc["self"]
    dt = doc["datatype"]
    return Machine(
        path=p, context=doc["context"], intra=intra, inter=_link(doc["links"]["inter"]),
        self_exchange=SelfExchange(float(s["alpha"]), float(s["beta"]), s["source"]),
        barrier=tuple(BarrierPoint(int(b["ranks"]), float(b["seconds"])) for b in doc["barrier"]),
        datatype=None if dt is None else Datatype(float(dt["o"]), float(dt["O"]), dt["source"]),
        memory=Memory(tuple(CopyPoint(int(c["ranks"]), float(c["bandwidth"])) for c in doc["memory"]["copy"]),
                      doc["memory"]["source"]),
        pack_host=host, pack_cuda=_pack(doc["pack"]["cuda"]), raw=doc, exchange=_exchange(doc.get("exchange")),
        compute=_kernels(doc.get("compute")), turns=_turns(doc.get("turns")), blocks=_blocks(doc["blocks"]),
        barrier_across=tuple(AcrossPoint(int(b["nodes"]), int(b["ranks_per_node"]), float(b["seconds"]))
                             for b in (doc.get("barrier_across") or {}).get("points", [])))


def _direction(e: dict[str, Any]) -> Direction:
    extra = {k: float(e[k]) for k in ("mpi_pack", "mpi_unpack", "window") if k in e}
    return Direction(float(e["pack"]), float(e["unpack"]), **extra)


def _blocks(d: dict[str, Any]) -> Blocks:
    def rates(e: dict[str, Any]) -> BlockRates:
        return BlockRates(float(e["copy"]), {k: float(e["compute"][k]) for k in KERNELS},
                          *(_direction(e[a]) for a in "xyz"), {k: float(e["overlap"][k]) for k in OVERLAPS},
                          float(e["window_wait"]) if "window_wait" in e else None,
                          {k: float(v) for k, v in e.get("waits", {}).items()})

    return Blocks(tuple(BlockPoint(tuple(int(v) for v in p["local"]), int(p["bytes"]),  # type: ignore[arg-type]
                                   tuple((int(e["ranks"]), rates(e)) for e in p["by_ranks"]))
                        for p in d["points"]), d["source"])


def _kernels(d: dict[str, Any] | None) -> Kernels | None:
    if d is None:
        return None
    rates = {kind: Memory(tuple(CopyPoint(int(c["ranks"]), float(c["bandwidth"])) for c in d[kind]), d["source"])
             for kind in KERNELS}
    return Kernels(rates, tuple(int(v) for v in d["local"]))  # type: ignore[arg-type]


def _exchange(d: dict[str, Any] | None) -> Exchange | None:
    if d is None:
        return None
    a = d.get("across")
    across = None if a is None else WaitPoint(1, float(a["by_direction"]["wait"]), float(a["all_at_once"]["wait"]))
    return Exchange(tuple(WaitPoint(int(p["ranks"]), float(p["by_direction"]["wait"]),
                                    float(p["all_at_once"]["wait"])) for p in d["points"]), d["source"], across)


def _turns(d: dict[str, Any] | None) -> Turns | None:
    across = (d or {}).get("across") or {}
    if d is None or not (d["points"] or across.get("points")):
        return None

    def points(items: list[dict[str, Any]]) -> tuple[TurnPoint, ...]:
        return tuple(TurnPoint(int(p["ranks"]), {k: float(p[k]) for k in TURN_KINDS if k in p}) for p in items)

    return Turns(points(d["points"]), d["source"], points(across.get("points", [])))
