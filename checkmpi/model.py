"""Predicted halo-exchange time per step, phase by phase, on the busiest rank.

Inputs: a catalog row (checkmpi/catalog.py: parts and grid-independent
traits from checkmpi-halo), a case (grid, block, its geometry in bytes as
checkmpi-halo works it out, options, ranks per node) and a machine profile
(checkmpi/machine.py). docs/model.md is the
specification; keep the two in step.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from checkmpi import placement
from checkmpi.catalog import Row
from checkmpi.grid import Triple
from checkmpi.machine import Direction, Link, Machine, Pack

PHASES = ("pack", "mpi", "self", "unpack", "barrier", "compute", "hidden")
XYZ = "xyz"


@dataclass(frozen=True)
class Geometry:
    """What the block is in bytes, as checkmpi-halo works it out (a plan, or a run's config): never computed here."""

    plane_elements: Triple  # one field's whole halo face per direction (its layers, halo rows included)
    real_bytes: int  # bytes of one number
    field_bytes: int  # the fields' arrays of a rank, halos included: a step's working set
    shift_bytes: int  # what a step's shift reads and writes (each interior cell of every field, each way)
    fields: int = 3  # the stencil (issue 34): CheckMPI's three fields, one-cell halo, six neighbours by default
    width: int = 1
    neighbours: int = 6
    face_elements: Triple | None = None  # 18 or 26: one field's face where edges and corners go direct
    diagonal_elements: dict[str, int] = field(default_factory=dict)  # 18 or 26: per edge and corner ('xy+-')

    @classmethod
    def of(cls, doc: dict) -> Geometry:
        """From a plan (checkmpi.plan/1) or a halo run's config (checkmpi.halo/5): the same keys (the
        stencil's absent in files from before issue 34: CheckMPI's)."""
        planes = doc["plane_elements"]
        faces = doc.get("face_elements")
        return cls((planes["x"], planes["y"], planes["z"]), doc["real_bytes"], doc["field_bytes"], doc["shift_bytes"],
                   int(doc.get("fields", 3)), int(doc.get("halo_width", 1)), int(doc.get("neighbours", 6)),
                   (faces["x"], faces["y"], faces["z"]) if faces else None,
                   {str(k): int(v) for k, v in (doc.get("diagonal_elements") or {}).items()})


@dataclass(frozen=True)
class Case:
    procs: Triple
    local: Triple
    geometry: Geometry
    precision: str = "single"
    sync: str = "barrier"
    border: int = 10
    ranks_per_node: int | None = None  # None: every rank on one node
    compute: str = "in-place"  # checkmpi-halo --compute, resolved (auto: the backend's default, in place on the host)
    self_copy: bool = False
    backend: str = "host"
    copy_bandwidth: float | None = None  # per rank, measured at this block (a halo run's memcpy probe)
    # The busiest CPU's share of ranks as checkmpi-halo found it (context.ranks_per_cpu; None: not known, as for a
    # projection): above rpn / cores where emulated nodes share one machine's CPUs.
    ranks_per_cpu: float | None = None

    @property
    def nprocs(self) -> int:
        return math.prod(self.procs)

    @property
    def rpn(self) -> int:
        return min(self.ranks_per_node or self.nprocs, self.nprocs)

    @property
    def nodes(self) -> int:
        return math.ceil(self.nprocs / self.rpn)


@dataclass(frozen=True)
class Message:
    """The messages to one neighbour on one rank: a face (direction and sign), or an edge or corner (timed in
    its last direction, packed at the rate of the plane of its first: strided as an x plane where it has cells
    of one x only, rows along x as a y plane otherwise)."""

    dir: int
    sign: int
    how: str  # 'intra', 'inter', 'self' (through MPI), 'copy' (--self-copy), 'shared-memory', 'none' (mock)
    count: int  # messages
    size: int  # bytes of one
    datatype: bool  # handed to MPI as derived datatypes
    packed: str | None  # 'hand', 'kernel', 'mpi-pack' or None
    rate: int  # the plane whose rates its copies run at: dir for a face

    @property
    def through_mpi(self) -> bool:
        return self.how in ("intra", "inter", "self")


def direct(row: Row, geometry: Geometry) -> bool:
    """Whether the row sends edges and corners to their neighbours (all at once with 18 or 26), rather than
    relaying them through whole faces (checkmpi-halo's direct_messages)."""
    return geometry.neighbours > 6 and row.traits.get("edges_and_corners", "direct") == "direct" and \
        row.parts["schedule"] == "all-at-once"


def messages(row: Row, case: Case, kinds: dict[tuple[int, int], str], rank: int = 0) -> list[Message]:
    """What rank `rank` sends per step, given its face neighbours' placement `kinds` (its edge and corner
    neighbours' from the same grid, where the row sends to them): the faces first."""
    t = row.traits
    g = case.geometry

    def how_for(kind: str) -> str:
        if not t["mpi"]:
            return "none"
        if kind == "self":
            return {"message": "copy" if case.self_copy else "self"}.get(t["self"], t["self"])
        if kind == "intra":
            return "intra" if t["on_node"] == "message" else t["on_node"]
        return "inter"

    def message(d: int, sign: int, kind: str, elements: int, rate: int | None = None) -> Message:
        dt = t["directions"][XYZ[d]]
        per_message = 1 if dt["fields_per_message"] == 1 else g.fields  # one field, or all of them
        return Message(d, sign, how_for(kind), g.fields // per_message, per_message * elements * g.real_bytes,
                       dt["datatype"], dt["packed"], d if rate is None else rate)

    sends_diagonals = direct(row, g)
    faces = g.face_elements if sends_diagonals and g.face_elements else g.plane_elements
    out = [message(d, sign, kind, faces[d]) for (d, sign), kind in kinds.items()]
    if sends_diagonals:
        for offset, kind in placement.offset_kinds(rank, case.procs, case.rpn, g.neighbours).items():
            last = max(a for a in range(3) if offset[a])
            first = min(a for a in range(3) if offset[a])
            out.append(message(last, offset[last], kind, g.diagonal_elements[placement.offset_name(offset)], first))
    return out


def engine_traits(row: Row, case: Case, rank: int = 0) -> dict:
    """What checkmpi-halo's results report as `traits` for `rank` (the engine's
    own count): the catalog traits applied to a grid and a placement."""
    kinds = placement.link_kinds(rank, case.procs, case.rpn)
    msgs = messages(row, case, kinds, rank)
    faces = msgs[:len(kinds)]
    mpi_bytes = {a: 0 for a in XYZ}
    diagonal_bytes = 0
    for i, m in enumerate(msgs):
        if m.through_mpi:
            mpi_bytes[XYZ[m.dir]] += m.count * m.size
            diagonal_bytes += m.count * m.size if i >= len(kinds) else 0
    passes = row.traits["kernel_passes"][case.compute]
    out = {"messages": sum(m.count for m in msgs if m.through_mpi), "mpi_bytes": mpi_bytes,
           "message_bytes": {XYZ[m.dir]: m.size for m in faces}, "kernel_passes": passes,
           "overlaps": row.traits["overlaps"]}
    if case.geometry.neighbours > 6 or case.geometry.fields != 3 or case.geometry.width != 1:
        out["diagonal_bytes"] = diagonal_bytes
    return out


@dataclass
class Prediction:
    row: Row
    rank: int  # the busiest rank, whose phases these are
    links: dict[str, int]  # its six messages by link kind
    messages: int  # MPI messages per step
    bytes: int  # bytes they carry
    terms: dict[str, float] = field(default_factory=dict)  # PHASES, seconds per step
    work: float = 0.0  # its own work per step: pack + unpack + mpi + self + compute, before waits
    turns: float = 0.0  # its core's other ranks' turns (oversubscribed): in terms["mpi"], mock's in its phases

    @property
    def total(self) -> float:
        t = self.terms
        return sum(t[p] for p in PHASES if p != "hidden") - t["hidden"]

    @property
    def visible_mpi(self) -> float:
        """What checkmpi-halo's `mpi` timer sees: MPI calls, self-exchanges and barriers, less the hidden part."""
        t = self.terms
        return t["mpi"] + t["self"] + t["barrier"] - t["hidden"]


def predict(rows: list[Row], case: Case, machine: Machine) -> list[Prediction]:
    rank, kinds = placement.busiest(case.procs, case.rpn)
    return [_predict(row, case, machine, rank, kinds) for row in rows]


def _predict(row: Row, case: Case, m: Machine, rank: int, kinds: dict[tuple[int, int], str]) -> Prediction:
    cores = int(m.context.get("cores_per_node") or case.rpn)
    # Oversubscribed: each core runs rpn/cores ranks in turn, or, where emulated nodes share a machine's CPUs, the
    # ranks of several nodes.
    share = max(1.0, case.rpn / cores, case.ranks_per_cpu or 0.0)
    # Rates as measured with the node's rpn ranks at once: their working sets share the caches and memory
    # (and, where they outnumber the cores, the cores in turn). Where other nodes' ranks share the cores, as many
    # ranks as take turns on them: `load` ranks of a node of the profile's cores.
    load = load_of(case, cores)
    kind = kernel_of(row, case.compute)
    pack_bw = _pack_for(m, case.backend, load)
    hides = 1.0  # the part of what an overlap could hide that it does
    waits: dict[str, float] = {}  # per completion, measured at the run's working set
    if m.blocks is not None and case.backend == "host":
        # Measured at blocks around the run's: the rates for its working set, where it sits in the caches.
        at = m.blocks.at(case.geometry.field_bytes, load)
        copy_bw, compute_bw = at.copy, at.compute[kind]
        # The window's node barrier waits for the node's own ranks: measured with rpn of them.
        wait = m.blocks.at(case.geometry.field_bytes, case.rpn).window_wait if load != case.rpn else at.window_wait
        wait = wait if wait is not None else pack_bw.window_wait
        pack_bw = dataclasses.replace(pack_bw, x=at.x, y=at.y, z=at.z, window_wait=wait)
        hides = at.overlap.get(row.parts["overlap"], 1.0)
        waits = at.waits
    else:
        copy_bw = m.memory.bandwidth(load)
        compute_bw = m.compute.bandwidth(kind, load) if m.compute is not None else copy_bw
    if m.blocks is None and case.copy_bandwidth and tuple(case.local) != pack_bw.local:
        # Copies at another block than the profile's run from where it fits: packing and compute speed up alike.
        factor = case.copy_bandwidth / copy_bw
        pack_bw = _scaled(pack_bw, factor)
        compute_bw *= factor
        copy_bw = case.copy_bandwidth
    msgs = messages(row, case, kinds, rank)
    t = dict.fromkeys(PHASES, 0.0)

    def dtype_extra(size: int, d: int) -> float:
        """A non-contiguous datatype's cost over a contiguous message: MPI
        gathers and scatters it as MPI_Pack and MPI_Unpack do on that plane
        where calibrate timed them, else as a pack and an unpack at the
        kernels' speed would, plus the fitted overhead over packing by hand, o + O*s."""
        if d == 2:  # z planes are contiguous
            return 0.0
        bw = pack_bw.direction(XYZ[d])
        if bw.mpi_pack is not None and bw.mpi_unpack is not None:
            return size / bw.mpi_pack + size / bw.mpi_unpack
        over = m.datatype.o + m.datatype.O * size if m.datatype is not None else 0.0
        return size / bw.pack + size / bw.unpack + over

    remote: dict[str, list[int]] = {"intra": [], "inter": []}
    for msg in msgs:
        bw = pack_bw.direction(XYZ[msg.rate])
        carried = msg.count * msg.size
        if msg.packed == "mpi-pack" and bw.mpi_pack is not None and bw.mpi_unpack is not None:
            t["pack"] += carried / bw.mpi_pack
            t["unpack"] += carried / bw.mpi_unpack
        elif msg.packed and msg.how != "shared-memory":
            t["pack"] += carried / bw.pack
            t["unpack"] += carried / bw.unpack
            if msg.packed == "mpi-pack" and m.datatype is not None:  # MPI_Pack walks three datatypes
                t["pack"] += 3 * msg.count * m.datatype.o
                t["unpack"] += 3 * msg.count * m.datatype.o
        if msg.how == "shared-memory":  # plane to plane from the neighbour's window, inside its MPI time
            t["mpi"] += carried / (bw.window or bw.unpack)
        elif msg.how == "copy":
            t["self"] += 2.0 * carried / copy_bw
        elif msg.how == "self":
            t["self"] += msg.count * (m.self_exchange.time(msg.size) + (dtype_extra(msg.size, msg.rate)
                                                                        if msg.datatype else 0.0))
        elif msg.how in remote:
            remote[msg.how] += [msg.size] * msg.count
            if msg.datatype:
                t["mpi"] += msg.count * dtype_extra(msg.size, msg.rate)
    by_direction = row.parts["schedule"] == "by-direction"
    if by_direction:  # one message after the other
        t["mpi"] += sum(m.link(kind == "intra").time(s) for kind, sizes in remote.items() for s in sizes)
    else:  # all in flight: one latency per link, the bytes share it
        t["mpi"] += max((_all_at_once(m.link(kind == "intra"), sizes) for kind, sizes in remote.items()),
                        default=0.0)
        # Each message in flight is posted and completed by the rank itself: its CPU overheads (LogGP's o_s + o_r),
        # beyond the one message whose latency the link's alpha holds.
        posted = sum(msg.count for msg in msgs if msg.how in ("self", "intra", "inter"))
        lg = m.link(True).loggp
        if posted > 1 and lg is not None:
            t["mpi"] += (posted - 1) * (lg.o_s + lg.o_r)
        transport = row.parts["transport"]
        if transport == "rma-pscw" and any(remote.values()):  # post/start, complete/wait
            t["mpi"] += 2 * max(m.link(k == "intra").segment(0).alpha for k, s in remote.items() if s)
    node_wait = pack_bw.window_wait if pack_bw.window_wait is not None else m.barrier_seconds(case.rpn)  # each
    t["barrier"] = row.traits["node_barriers"][case.compute] * node_wait
    if case.sync == "barrier":
        t["barrier"] += row.traits["barriers"] * m.barrier_seconds(case.nprocs, case.nodes)

    passes = row.traits["kernel_passes"][case.compute]
    t["compute"] = passes * case.geometry.shift_bytes / compute_bw  # read + write every field per pass
    work = sum(t[phase] for phase in ("pack", "unpack", "mpi", "self", "compute"))
    # Each completion waits for partners that are late or descheduled, as measured with rpn ranks exchanging;
    # a fence is a barrier of all ranks, measured as it is (a wait, not work: the others' turns are in it).
    schedule = "by_direction" if by_direction else "all_at_once"
    wait = waits[schedule] if schedule in waits else m.exchange_wait(load, by_direction, case.nodes)
    t["mpi"] += completions(row, msgs) * wait
    t["mpi"] += row.traits["fences"] * m.barrier_seconds(case.nprocs, case.nodes)
    if row.traits["overlaps"]:  # what share of the block's cells the compute can shift while messages fly
        cells = math.prod(case.local)
        if passes == 2:  # the copy into the temporaries runs while the messages fly
            overlappable = t["compute"] / 2
        elif row.parts["overlap"] == "masked":  # in place, each field's inner box reaches its downstream face
            b = case.border
            in_flight = [math.prod(k - (b if d == f and kind == "masked" else 2 * b) for d, k in enumerate(case.local))
                         for f in range(3)] if all(k > 2 * b for k in case.local) else [0]
            overlappable = t["compute"] * sum(in_flight) / 3 / cells
        else:  # the cells that need no halo (a halo's width from each face)
            overlappable = t["compute"] * math.prod(max(0, k - case.geometry.width) for k in case.local) / cells
        t["hidden"] = hides * min(t["mpi"] + t["self"], overlappable)
    turns = 0.0
    # While it waits in MPI, its core runs the other ranks' work; a node barrier timed with rpn ranks holds it.
    # (Not where the ranks sharing its core are other nodes': its node barrier does not wait for them; nor over
    # several nodes, where its messages to other nodes wait for partners that wait for their own CPU.)
    measured_wait = (row.traits["node_barriers"][case.compute] > 0 and pack_bw.window_wait is not None
                     and load == case.rpn and case.nodes == 1)
    if share > 1 and not measured_wait:
        f = m.turns.factor(load, _turn_kind(row, kind), case.nodes > 1) if m.turns is not None else None
        if row.traits["mpi"]:
            turns = (share - 1.0 if f is None else f) * work
            t["mpi"] += turns
        elif f:  # mock waits outside its timers; the turns that preempt its phases land in each by its length
            turns = f * work
            for phase in ("pack", "unpack", "compute"):
                t[phase] += turns * t[phase] / work
    through = [msg for msg in msgs if msg.through_mpi]
    return Prediction(row, rank, placement.counts(kinds), sum(msg.count for msg in through),
                      sum(msg.count * msg.size for msg in through), t, work, turns)


def load_of(case: Case, cores: int) -> int:
    """The ranks whose rates a rank's are, as measured on one node of `cores` cores: the node's rpn, or, where
    other nodes' ranks share the machine's CPUs (more than one rank on a CPU), as many as take turns on the cores
    (case.ranks_per_cpu each). A CPU with one rank is not shared: one rank of a 2-core node runs at 1 rank's
    rates, not 2."""
    per_cpu = case.ranks_per_cpu or 0.0
    return max(case.rpn, math.ceil(per_cpu * cores - 1e-9)) if per_cpu > 1 else case.rpn


def kernel_of(row: Row, mode: str) -> str:
    """The profile's compute kernel (machine.KERNELS) a row's compute and overlap parts run with --compute `mode`
    (two-pass with the one-pass kernels, twice; shm-window's its own)."""
    in_place = row.traits["compute"][mode] == "in-place"
    if row.parts["transport"] == "shm-window":  # its neighbours read its fields as it shifts them
        return "window"
    overlap = row.parts["overlap"]
    if overlap in ("interior", "masked"):
        return overlap if in_place else f"{overlap}-one-pass"
    return "in-place" if in_place else "one-pass"


def _turn_kind(row: Row, kernel: str) -> str:
    """The profile's turns factor (machine.TURN_KINDS) for a row running `kernel`: mock's own without MPI, by its
    overlap, else by direction its kernel, else all at once."""
    if not row.traits["mpi"]:
        return "mock"
    overlap = kernel.removesuffix("-one-pass")
    if overlap in ("interior", "masked"):
        return overlap
    if row.parts["schedule"] == "by-direction":
        return kernel
    return "all-at-once"


def completions(row: Row, msgs: list[Message]) -> int:
    """The calls per step that wait for another rank: by direction every receive from another rank
    (MPI_Sendrecv or MPI_Recv), all at once the one completion of the exchange; none without such a message."""
    remote = sum(msg.count for msg in msgs if msg.how in ("intra", "inter"))
    return remote if row.parts["schedule"] == "by-direction" else min(remote, 1)


def _pack_for(m: Machine, backend: str, ranks: int) -> Pack:
    """The pack bandwidths with `ranks` ranks of a node at once: as measured with that many (pack.<backend>.by_ranks),
    else those measured with pack.<backend>.ranks ranks scaled as the one-pass compute kernel (else the copy)
    scales between the two."""
    p = m.pack(backend) or m.pack_host
    if (there := p.at(ranks)) is not None:
        return there
    measured = int(((m.raw.get("pack") or {}).get(backend) or {}).get("ranks") or ranks)
    rate = (lambda k: m.compute.bandwidth("one-pass", k)) if m.compute is not None else m.memory.bandwidth
    return _scaled(p, rate(ranks) / rate(measured))


def _scaled(p: Pack, factor: float) -> Pack:
    def d(x: Direction) -> Direction:
        return Direction(*(None if v is None else v * factor for v in dataclasses.astuple(x)))

    return dataclasses.replace(p, x=d(p.x), y=d(p.y), z=d(p.z))


def _all_at_once(link: Link, sizes: list[int]) -> float:
    if not sizes:
        return 0.0
    return max(link.segment(s).alpha for s in sizes) + sum(s / link.segment(s).beta for s in sizes)
