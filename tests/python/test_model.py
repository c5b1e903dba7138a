"""The model (docs/model.md): its algebra on synthetic machine profiles (known
parameters in, known times out), the neighbours' placement, the catalog the
native tool lists, and the engine's traits it must agree with."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
from pathlib import Path

import pytest

from checkmpi import catalog, halo_plan, placement
from checkmpi import model as M
from checkmpi.errors import CheckmpiError
from checkmpi.machine import (KERNELS, TURN_KINDS, AcrossPoint, BarrierPoint, BlockPoint, BlockRates, Blocks, CopyPoint, Datatype, Direction,
                              Exchange, Kernels, Link, LogGP, Machine, Memory, Pack, Segment, SelfExchange, TurnPoint, Turns,
                              WaitPoint)
from checkmpi.results import load, schema_validator
from conftest import BUILD_BIN, DATA

INTRA = Link((Segment(0, 1 << 30, 1e-6, 1e9),), None, "intra")
INTER = Link((Segment(0, 1 << 30, 1e-5, 1e8),), None, "inter")
DT = Datatype(1e-6, 1e-9, "datatype")


def machine(cores: int = 2, datatype: Datatype | None = DT, inter: Link | None = INTER) -> Machine:
    """Round parameters: 1 us + 1 GB/s on the node, 10 us + 100 MB/s between nodes, ..."""
    pack = Pack(Direction(1e8, 1e8), Direction(1e9, 1e9), Direction(1e9, 1e9), (10, 10, 10), "pack")
    return Machine(Path("synthetic.json"), {"cores_per_node": cores, "ranks_per_node": cores}, INTRA, inter,
                   SelfExchange(5e-7, 2e9, "self"), (BarrierPoint(2, 1e-6), BarrierPoint(4, 2e-6)), datatype,
                   Memory((CopyPoint(1, 1e10), CopyPoint(2, 5e9)), "memory"), pack, None, {})


@pytest.fixture(scope="module")
def rows() -> dict[str, catalog.Row]:
    return {r.id: r for r in catalog.load("all", str(BUILD_BIN))}


def geometry(local=(10, 10, 10), precision: str = "single", stencil: tuple[str, ...] = ()) -> M.Geometry:
    """The block's geometry as checkmpi-halo works it out (its plan); `stencil`: its options, e.g. --neighbours."""
    plan = halo_plan.make(["--no-input", "--local", "x".join(map(str, local)), "--np", "1", "--precision", precision,
                           *stencil], str(BUILD_BIN))
    return M.Geometry.of(plan.raw)


def one(rows, sid: str, procs=(2, 1, 1), local=(10, 10, 10), m: Machine | None = None, stencil: tuple[str, ...] = (),
        **case) -> M.Prediction:
    case.setdefault("ranks_per_node", 2)
    shape = geometry(local, case.get("precision", "single"), stencil)
    return M.predict([rows[sid]], M.Case(procs, local, shape, **case), m or machine())[0]


# A 10^3 block, single precision: every plane is 12 x 12 = 144 cells; a packed
# message carries three fields: 1728 bytes. On a 2x1x1 grid, x goes to the
# other rank (same node), y and z to the rank itself.
PLANE = 144 * 4
MSG = 3 * PLANE
COMPUTE = 2 * 3 * 1000 * 4 / 5e9  # one pass, read + write, at the copy bandwidth of 2 ranks


def test_the_geometry_is_the_tools():
    g = geometry()
    assert (g.plane_elements, g.real_bytes, g.shift_bytes) == ((144, 144, 144), 4, 2 * 3 * 1000 * 4)
    assert g.field_bytes == 3 * 12 ** 3 * 4
    assert geometry(precision="double").real_bytes == 8


def test_packed_sendrecv_phase_by_phase(rows):
    p = one(rows, "step2")
    t = p.terms
    assert t["pack"] == pytest.approx(2 * MSG / 1e8 + 4 * MSG / 1e9)
    assert t["unpack"] == pytest.approx(t["pack"])
    assert t["mpi"] == pytest.approx(2 * (1e-6 + MSG / 1e9))  # x, both signs, one after the other
    assert t["self"] == pytest.approx(4 * (5e-7 + MSG / 2e9))  # y and z through MPI to itself
    assert t["barrier"] == pytest.approx(3 * 1e-6)  # one per direction, on 2 ranks
    assert t["compute"] == pytest.approx(COMPUTE)
    assert t["hidden"] == 0.0
    assert p.total == pytest.approx(sum(t[k] for k in ("pack", "mpi", "self", "unpack", "barrier", "compute")))
    assert (p.messages, p.bytes, p.links) == (6, 6 * MSG, {"self": 4, "intra": 2, "inter": 0})


def test_datatypes_pay_the_measured_overhead_except_contiguous_z(rows):
    t = one(rows, "step0").terms
    assert t["pack"] == t["unpack"] == 0.0
    # MPI gathers and scatters as packing would (x at 100 MB/s, y at 1 GB/s), plus the fit's o + O*s.
    over = 1e-6 + 1e-9 * PLANE
    assert t["mpi"] == pytest.approx(6 * (1e-6 + PLANE / 1e9) + 6 * (2 * PLANE / 1e8 + over))  # x: 3 fields, 2 signs
    assert t["self"] == pytest.approx(12 * (5e-7 + PLANE / 2e9) + 6 * (2 * PLANE / 1e9 + over))  # z contiguous
    t = one(rows, "step0", m=machine(datatype=None)).terms  # no fit: the gather and scatter only
    assert t["mpi"] == pytest.approx(6 * (1e-6 + PLANE / 1e9) + 6 * (2 * PLANE / 1e8))


def measured_datatypes_and_window() -> Machine:
    """machine() with MPI_Pack/MPI_Unpack and window reads timed: x 50/25/20 MB/s, y 0.5/0.25/0.2 GB/s, and a
    node barrier of 7 us on 2 ranks (1 us alone)."""
    def d(scale: float) -> Direction:
        return Direction(1e9 * scale, 1e9 * scale, 5e8 * scale, 2.5e8 * scale, 2e8 * scale)

    base = machine()
    one_rank = dataclasses.replace(base.pack_host, x=d(1), y=d(1), z=d(1), window_wait=1e-6)
    two = dataclasses.replace(base.pack_host, x=d(0.1), y=d(1), z=d(1), window_wait=7e-6)
    return dataclasses.replace(base, pack_host=dataclasses.replace(two, by_ranks=((1, one_rank), (2, two))))


def test_measured_mpi_pack_and_window_rates_replace_the_kernels_and_the_fit(rows):
    m = measured_datatypes_and_window()
    t = one(rows, "mpi-pack", m=m).terms  # x to the other rank, y and z to itself
    assert t["pack"] == pytest.approx(2 * MSG / 5e7 + 4 * MSG / 5e8)
    assert t["unpack"] == pytest.approx(2 * MSG / 2.5e7 + 4 * MSG / 2.5e8)
    # Datatypes: MPI's gather and scatter at MPI_Pack's and MPI_Unpack's rates, no o + O*s; z contiguous.
    t = one(rows, "step0", m=m).terms
    assert t["mpi"] == pytest.approx(6 * (1e-6 + PLANE / 1e9) + 6 * (PLANE / 5e7 + PLANE / 2.5e7))
    assert t["self"] == pytest.approx(12 * (5e-7 + PLANE / 2e9) + 6 * (PLANE / 5e8 + PLANE / 2.5e8))
    # The window: reads at the window rate, each node barrier as measured with the node's ranks (1 alone): in
    # place two a step (the faces read before anyone shifts them), one-pass one.
    t = one(rows, "shm-window", m=m).terms
    assert t["mpi"] == pytest.approx(2 * MSG / 2e7 + 4 * MSG / 2e8)
    assert t["barrier"] == pytest.approx(2 * 7e-6 + 1e-6)  # the node's and --sync's
    assert one(rows, "shm-window", m=m, compute="one-pass").terms["barrier"] == pytest.approx(7e-6 + 1e-6)
    t = one(rows, "shm-window", procs=(1, 1, 1), ranks_per_node=1, m=m).terms
    assert t["mpi"] == pytest.approx(6 * MSG / 2e8) and t["barrier"] == pytest.approx(2 * 1e-6)


def test_all_at_once_pays_one_latency_and_one_barrier(rows):
    t = one(rows, "step7").terms
    assert t["mpi"] == pytest.approx(1e-6 + 2 * MSG / 1e9)
    assert t["barrier"] == pytest.approx(1e-6)
    assert t["compute"] == pytest.approx(COMPUTE)
    assert one(rows, "step7", sync="none").terms["barrier"] == 0.0


def test_all_at_once_posts_every_message_at_its_cpu_overheads(rows):
    """Each message in flight beyond the first costs the rank LogGP's o_s + o_r (measured by p2p loggp); by
    direction every message pays the whole link time already. 26 neighbours post 26 messages where 6 post 6."""
    lg = LogGP(0.0, 2e-7, 1e-7, 0.0, 0.0)
    m = dataclasses.replace(machine(), intra=dataclasses.replace(INTRA, loggp=lg))
    base = one(rows, "step7").terms["mpi"]
    assert one(rows, "step7", m=m).terms["mpi"] == pytest.approx(base + 5 * 3e-7)  # 2 to the other rank, 4 to itself
    assert one(rows, "step3", m=m).terms["mpi"] == pytest.approx(one(rows, "step3").terms["mpi"])
    p26, p26_bare = (one(rows, "step7", m=profile, stencil=("--neighbours", "26")) for profile in (m, None))
    assert p26.messages == 26
    assert p26.terms["mpi"] == pytest.approx(p26_bare.terms["mpi"] + 25 * 3e-7)


def test_edges_and_corners_pack_at_the_rate_of_their_first_axis_plane(rows):
    """An edge or corner is timed in its last direction but its cells lie as the plane of its first axis: one x
    each (strided, the x plane's rate) or whole rows along x (the y plane's rate)."""
    case = M.Case((2, 1, 1), (10, 10, 10), geometry(stencil=("--neighbours", "26")), ranks_per_node=2)
    rank, kinds = placement.busiest(case.procs, case.rpn)
    msgs = M.messages(rows["step7"], case, kinds, rank)
    diagonals = msgs[6:]
    assert len(diagonals) == 20
    pairs = [(m.dir, m.rate) for m in diagonals]
    # Edges along x (rows; timed in z), along y (timed in z) and z (timed in y), then corners (timed in z).
    assert (pairs.count((2, 1)), pairs.count((1, 0)), pairs.count((2, 0))) == (4, 4, 4 + 8)
    rate = {0: 1e8, 1: 1e9, 2: 1e9}  # the synthetic machine's pack rates
    p = one(rows, "step7", stencil=("--neighbours", "26"))
    assert p.terms["pack"] == pytest.approx(sum(m.count * m.size / rate[m.rate] for m in msgs))


def test_overlap_hides_mpi_behind_the_cells_that_need_no_halo(rows):
    p7, p8 = one(rows, "step7"), one(rows, "step8")
    visible = p7.terms["mpi"] + p7.terms["self"]
    assert p8.terms["hidden"] == pytest.approx(min(visible, COMPUTE * 9 ** 3 / 1000))
    assert p8.total == pytest.approx(p7.total - p8.terms["hidden"])
    # Masked: the inner block (border 2: 6^3 of 10^3 cells), in place each field's extended to its downstream face
    # (8 x 6 x 6); border 5 leaves nothing inside.
    assert one(rows, "step10", border=2).terms["hidden"] == pytest.approx(min(visible, COMPUTE * 288 / 1000))
    assert one(rows, "step10", border=2, compute="one-pass").terms["hidden"] == pytest.approx(
        min(visible, COMPUTE * 216 / 1000))
    assert one(rows, "step10", border=5).terms["hidden"] == 0.0
    # Two-pass: the copy pass runs while messages fly.
    p = one(rows, "step8", compute="two-pass")
    assert p.terms["compute"] == pytest.approx(2 * COMPUTE)
    assert p.terms["hidden"] == pytest.approx(min(visible, COMPUTE))


def test_off_node_neighbours_use_the_inter_node_link(rows):
    # 4x1x1 with 2 ranks per node: rank 0's x+ neighbour (1) shares its node, x- (3) does not.
    p = one(rows, "step2", procs=(4, 1, 1))
    assert p.links == {"self": 4, "intra": 1, "inter": 1}
    assert p.terms["mpi"] == pytest.approx(1e-6 + MSG / 1e9 + 1e-5 + MSG / 1e8)
    assert p.terms["barrier"] == pytest.approx(3 * 2e-6)  # barrier on 4 ranks
    # All at once, the slower link decides.
    assert one(rows, "step7", procs=(4, 1, 1)).terms["mpi"] == pytest.approx(1e-5 + MSG / 1e8)
    # Not measured between nodes: the node's link stands in.
    q = one(rows, "step2", procs=(4, 1, 1), m=machine(inter=None))
    assert q.terms["mpi"] == pytest.approx(2 * (1e-6 + MSG / 1e9))


def test_oversubscribed_ranks_share_the_cores(rows):
    """4 ranks on a 2-core node: each phase at the rates of 4 ranks at once (the profile's last point, 2), and
    while a rank waits in MPI its core runs the other rank's work: share - 1 = 1 times its own."""
    p = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=4)
    base = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=4, m=machine(cores=4))
    assert p.terms["compute"] == pytest.approx(COMPUTE) == base.terms["compute"]
    assert p.terms["pack"] == pytest.approx(base.terms["pack"])
    links = 2 * (1e-6 + MSG / 1e9)
    assert base.terms["mpi"] == pytest.approx(links)
    work = sum(base.terms[k] for k in ("pack", "unpack", "mpi", "self", "compute"))
    assert p.terms["mpi"] == pytest.approx(links + work)
    assert p.total == pytest.approx(2 * base.total - base.terms["barrier"])  # the barriers measured as they are
    q7, b7 = (one(rows, "step7", procs=(4, 1, 1), ranks_per_node=4, m=m) for m in (machine(), machine(cores=4)))
    assert q7.terms["mpi"] == pytest.approx(b7.terms["mpi"] + sum(
        b7.terms[k] for k in ("pack", "unpack", "mpi", "self", "compute")))
    # mock: no MPI in its timers, so the others' turns fall outside them.
    assert one(rows, "mock", procs=(4, 1, 1), ranks_per_node=4).terms == one(
        rows, "mock", procs=(4, 1, 1), ranks_per_node=4, m=machine(cores=4)).terms


def test_emulated_nodes_sharing_a_machines_cpus(rows):
    """Emulated nodes of one CPU each, 4 of them on a 2-CPU machine (scripts/cluster-local.sh): one rank per node,
    yet 2 ranks per CPU (context.ranks_per_cpu), so each rank runs at the rates of 2 ranks of a node at once and
    waits through the other's turns as 2 ranks of one node do; the window's node barrier, its node's alone, is
    not the one that holds those turns."""
    factors = {2: {"in-place": 0.5, "one-pass": 0.7, "all-at-once": 0.4, "interior": 0.3, "masked": 0.2}}
    m = dataclasses.replace(machine(cores=1), turns=Turns(tuple(TurnPoint(k, f) for k, f in factors.items()), "t"))
    shared = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=1, ranks_per_cpu=2.0, m=m)
    alone = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=1, m=m)
    assert alone.turns == 0.0 and alone.terms["compute"] == pytest.approx(2 * 3 * 1000 * 4 / 1e10)  # 1 at once
    assert shared.terms["compute"] == pytest.approx(COMPUTE)  # the rate of 2 at once
    assert shared.turns == pytest.approx(0.5 * shared.work)
    assert shared.links == {"self": 4, "intra": 0, "inter": 2}  # placement by node, as before
    # Two ranks on each node of one CPU: the same load, from the node's own ranks.
    both = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=2, ranks_per_cpu=2.0, m=m)
    assert both.turns == pytest.approx(0.5 * both.work) and both.terms["compute"] == pytest.approx(COMPUTE)
    windowed = dataclasses.replace(m, pack_host=dataclasses.replace(m.pack_host, window_wait=3e-6))
    assert one(rows, "shm-window", procs=(4, 1, 1), ranks_per_node=1, ranks_per_cpu=2.0, m=windowed).turns > 0
    # Its node barrier timed with the node's 2 ranks holds their turns on one node; over two nodes its messages to
    # the other node wait for partners that wait for their own CPU, which that barrier does not hold.
    assert one(rows, "shm-window", procs=(2, 1, 1), ranks_per_node=2, ranks_per_cpu=2.0, m=windowed).turns == 0
    assert one(rows, "shm-window", procs=(4, 1, 1), ranks_per_node=2, ranks_per_cpu=2.0, m=windowed).turns > 0
    # A CPU per rank (ranks_per_cpu 1, or not known): nothing changes.
    assert one(rows, "step2", procs=(4, 1, 1), ranks_per_node=1, ranks_per_cpu=1.0, m=m).terms == alone.terms
    # One rank alone on a node of 2 cores (its CPU not shared): the rates of 1 at once, not of the node's 2 cores.
    single = one(rows, "step2", procs=(1, 1, 1), ranks_per_node=1, ranks_per_cpu=1.0, m=machine(cores=2))
    assert single.terms["compute"] == pytest.approx(2 * 3 * 1000 * 4 / 1e10) and single.turns == 0.0


def test_one_rank_per_node_waits_as_measured_across_nodes(rows):
    """One rank per node across nodes: each completion waits as calibrate measured with one rank on each of two
    nodes (exchange.across), not as two ranks of a node do (on an emulated node of one CPU they take turns);
    with two per node, the node's own; without an across point, the nearest of the node's."""
    across = dataclasses.replace(WAITS, across=WaitPoint(1, 0.5e-6, 0.7e-6))
    m = dataclasses.replace(machine(), exchange=across)
    bare = dataclasses.replace(machine(), exchange=dataclasses.replace(WAITS, points=()))
    apart = one(rows, "step2", procs=(2, 1, 1), ranks_per_node=1, m=m)
    assert apart.terms["mpi"] - one(rows, "step2", procs=(2, 1, 1), ranks_per_node=1, m=bare).terms["mpi"] == \
        pytest.approx(2 * 0.5e-6)  # two receives from the other node
    assert one(rows, "step7", procs=(2, 1, 1), ranks_per_node=1, m=m).terms["mpi"] - one(
        rows, "step7", procs=(2, 1, 1), ranks_per_node=1, m=bare).terms["mpi"] == pytest.approx(0.7e-6)
    together = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=2, m=m)
    assert together.terms["mpi"] - one(rows, "step2", procs=(4, 1, 1), ranks_per_node=2, m=bare).terms["mpi"] == \
        pytest.approx(2 * 1e-6)  # the node's 2-rank wait
    assert m.exchange_wait(1, True, 2) == 0.5e-6 and m.exchange_wait(1, True, 1) == 1e-6 and \
        bare.exchange_wait(2, True) == 0.0


def test_barriers_across_nodes_as_measured(rows):
    """--sync's barriers and rma-fence's fences across nodes cost what calibrate measured with ranks on several
    nodes (barrier_across), at the nearest measured ranks per node, log2-linear in the nodes, extrapolated past
    the last by its last step per doubling; on one node the node's own barrier."""
    across = (AcrossPoint(2, 1, 1e-5), AcrossPoint(2, 2, 2e-5), AcrossPoint(4, 1, 3e-5), AcrossPoint(4, 2, 5e-5))
    m = dataclasses.replace(machine(), barrier_across=across)
    assert m.barrier_seconds(4) == pytest.approx(2e-6)  # one node
    assert m.barrier_seconds(2, 2) == pytest.approx(1e-5) and m.barrier_seconds(8, 4) == pytest.approx(5e-5)
    assert m.barrier_seconds(16, 8) == pytest.approx(5e-5 + 3e-5)  # one more doubling of 2 ranks per node
    assert m.barrier_seconds(3, 3) == pytest.approx(1e-5 + math.log2(1.5) * 2e-5)
    # 4 per node: the 2-per-node points, plus what the node's own barrier adds from 2 to 4 ranks (1 us).
    assert m.barrier_seconds(8, 2) == pytest.approx(2e-5 + 1e-6)
    p = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=2, m=m)
    assert p.terms["barrier"] == pytest.approx(3 * 2e-5)  # 2 nodes of 2 ranks
    assert one(rows, "step2", procs=(4, 1, 1), ranks_per_node=4, m=m).terms["barrier"] == pytest.approx(3 * 2e-6)
    fence = one(rows, "rma-fence", procs=(4, 1, 1), ranks_per_node=1, m=m)
    bare = one(rows, "rma-fence", procs=(4, 1, 1), ranks_per_node=1, m=dataclasses.replace(m, barrier_across=()))
    assert fence.terms["barrier"] - bare.terms["barrier"] == pytest.approx(3e-5 - 2e-6)
    assert fence.terms["mpi"] - bare.terms["mpi"] == pytest.approx(2 * (3e-5 - 2e-6))  # its two fences a step


def test_measured_turns_replace_the_share_by_kernel_and_schedule(rows):
    """With turns calibrated (4 and 8 ranks on 2 cores), a rank waits through factor x its own work, the factor of
    its kernel and schedule at the node's rank count (log2-linear between points); a window's node barrier
    timed with those ranks already holds them; none on a node with no more ranks than cores."""
    factors = {4: {"in-place": 0.5, "one-pass": 0.7, "all-at-once": 0.4, "interior": 0.3, "masked": 0.2},
               8: {"in-place": 1.5, "one-pass": 1.7, "all-at-once": 1.4, "interior": 1.3, "masked": 1.2}}
    m = dataclasses.replace(machine(), turns=Turns(tuple(TurnPoint(k, f) for k, f in factors.items()), "turns"))
    assert m.turns.factor(2, "masked") == 0.2 and m.turns.factor(16, "masked") == 1.2  # outside: the nearest
    assert m.turns.factor(6, "one-pass") == pytest.approx(0.7 + math.log2(6 / 4))
    case = dict(procs=(4, 1, 1), ranks_per_node=4)
    for sid, kind in (("step2", "in-place"), ("step7", "all-at-once"), ("persistent", "all-at-once"),
                      ("step8", "interior"), ("step10", "masked"), ("ineighbor-overlap", "interior")):
        p, fallback = one(rows, sid, m=m, **case), one(rows, sid, **case)
        assert p.work == pytest.approx(fallback.work) and fallback.turns == pytest.approx(fallback.work)  # share - 1
        assert p.turns == pytest.approx(factors[4][kind] * p.work), sid
        assert p.terms["mpi"] - p.turns == pytest.approx(fallback.terms["mpi"] - fallback.turns), sid
    assert one(rows, "step2", m=m, compute="two-pass", **case).turns == pytest.approx(
        0.5 * one(rows, "step2", m=m, compute="two-pass", **case).work)  # step2 two-pass: in place
    assert one(rows, "step2", m=m, compute="one-pass", **case).turns == pytest.approx(
        0.7 * one(rows, "step2", m=m, compute="one-pass", **case).work)
    assert one(rows, "step10", m=m, compute="one-pass", **case).turns == pytest.approx(
        0.2 * one(rows, "step10", m=m, compute="one-pass", **case).work)  # the overlap's, whatever its compute
    assert one(rows, "step2", m=m).turns == 0.0  # 2 ranks, 2 cores
    windowed = dataclasses.replace(m, pack_host=dataclasses.replace(m.pack_host, window_wait=3e-6))
    shm = one(rows, "shm-window", m=windowed, **case)
    assert shm.turns == 0.0 and shm.terms["barrier"] == pytest.approx(2 * 3e-6 + 2e-6)  # node's as timed, --sync's
    assert one(rows, "shm-window", m=m, **case).turns > 0  # its barrier not timed: the turns as for the others
    # mock waits for the others outside its timers: without a factor of its own none; with one, the turns land in
    # its phases, each by its length.
    assert one(rows, "mock", m=m, **case).turns == 0.0
    with_mock = {k: {**f, "mock": 0.6} for k, f in factors.items()}
    mm = dataclasses.replace(m, turns=Turns(tuple(TurnPoint(k, f) for k, f in with_mock.items()), "turns"))
    mock, bare = one(rows, "mock", m=mm, **case), one(rows, "mock", m=m, **case)
    assert mock.turns == pytest.approx(0.6 * mock.work) and mock.work == pytest.approx(bare.work)
    for phase in ("pack", "unpack", "compute"):
        assert mock.terms[phase] == pytest.approx(1.6 * bare.terms[phase]), phase
    assert mock.terms["mpi"] == 0.0 and mock.total == pytest.approx(1.6 * bare.total)
    assert one(rows, "step7", m=mm, **case).terms == one(rows, "step7", m=m, **case).terms


def test_turns_measured_across_nodes_replace_the_nodes_for_runs_over_several(rows):
    """A profile calibrated over nodes has turns measured so too (partners that wait for their own CPU): a run
    over several nodes takes them at its load (its ranks per CPU: emulated nodes sharing the machine's CPUs), one
    on a node the node's own; without across points, the node's; with only across points, none on one node."""
    node = (TurnPoint(2, {k: 0.5 for k in TURN_KINDS}), TurnPoint(4, {k: 1.0 for k in TURN_KINDS}))
    across = (TurnPoint(2, {k: 2.0 for k in TURN_KINDS}), TurnPoint(4, {k: 3.0 for k in TURN_KINDS}))
    one_core = machine(cores=1)
    m = dataclasses.replace(one_core, turns=Turns(node, "turns", across))
    assert m.turns.factor(2, "all-at-once") == 0.5 and m.turns.factor(2, "all-at-once", across=True) == 2.0
    assert m.turns.factor(4, "in-place", across=True) == 3.0
    # 2 nodes of 2 ranks, each node's on its own CPU: load 2, over nodes.
    p = one(rows, "step7", procs=(4, 1, 1), ranks_per_node=2, ranks_per_cpu=2.0, m=m)
    assert p.turns == pytest.approx(2.0 * p.work)
    # 4 nodes of 1 rank on 2 CPUs: 2 ranks per CPU, load 2, over nodes.
    p = one(rows, "step2", procs=(4, 1, 1), ranks_per_node=1, ranks_per_cpu=2.0, m=m)
    assert p.turns == pytest.approx(2.0 * p.work)
    # 4 nodes of 2 ranks on 2 CPUs: load 4.
    p = one(rows, "step8", procs=(2, 2, 2), ranks_per_node=2, ranks_per_cpu=4.0, m=m)
    assert p.turns == pytest.approx(3.0 * p.work)
    # One node of 2 ranks on its one core: the node's own factor.
    p = one(rows, "step7", procs=(2, 1, 1), ranks_per_node=2, m=m)
    assert p.turns == pytest.approx(0.5 * p.work)
    node_only = dataclasses.replace(one_core, turns=Turns(node, "turns"))
    p = one(rows, "step7", procs=(4, 1, 1), ranks_per_node=2, ranks_per_cpu=2.0, m=node_only)
    assert p.turns == pytest.approx(0.5 * p.work)
    across_only = dataclasses.replace(one_core, turns=Turns((), "turns", across))
    assert across_only.turns.factor(2, "in-place") is None
    p = one(rows, "step7", procs=(2, 1, 1), ranks_per_node=2, m=across_only)
    assert p.turns == pytest.approx(p.work)  # not measured on a node: share - 1


WAITS = Exchange((WaitPoint(2, 1e-6, 3e-6), WaitPoint(8, 4e-6, 9e-6)), "exchange")


def test_each_completion_waits_as_measured_with_the_nodes_ranks(rows):
    """One wait per receive from another rank by direction, one per step all at once, at the node's rank count
    (linear in log2 of it between the measured 2 and 8: halfway at 4), added as measured (not scaled)."""
    m = dataclasses.replace(machine(), exchange=WAITS)
    assert m.exchange_wait(4, True) == pytest.approx(2.5e-6) and m.exchange_wait(4, False) == pytest.approx(6e-6)
    assert m.exchange_wait(1, True) == 1e-6 and m.exchange_wait(64, False) == 9e-6  # outside: the nearest
    assert machine().exchange_wait(4, True) == 0.0  # not measured: no wait
    without = dict(procs=(4, 1, 1), ranks_per_node=4)
    for sid, waits in (("step2", 2), ("step0", 6), ("step6", 2)):  # x: 2 signs, 1 or 3 messages each
        p, q = one(rows, sid, m=m, **without), one(rows, sid, **without)
        assert p.terms["mpi"] - q.terms["mpi"] == pytest.approx(waits * 2.5e-6), sid
        assert p.total - q.total == pytest.approx(waits * 2.5e-6), sid
    for sid in ("step7", "neighbor-alltoallv", "rma-pscw"):
        assert one(rows, sid, m=m, **without).terms["mpi"] - one(rows, sid, **without).terms["mpi"] == \
            pytest.approx(6e-6), sid
    # 2x2x2 on 8 ranks: every direction goes to other ranks; on 1 rank none does; mock sends nothing through MPI.
    p8 = one(rows, "step2", procs=(2, 2, 2), ranks_per_node=8, m=m)
    assert p8.terms["mpi"] - one(rows, "step2", procs=(2, 2, 2), ranks_per_node=8).terms["mpi"] == \
        pytest.approx(6 * 4e-6)
    assert one(rows, "step2", procs=(1, 1, 1), ranks_per_node=1, m=m).terms == \
        one(rows, "step2", procs=(1, 1, 1), ranks_per_node=1).terms
    assert one(rows, "mock", m=m, **without).terms == one(rows, "mock", **without).terms
    # Overlap hides the waits as it hides the rest of the MPI time (4 cores: no share of them in the MPI time).
    p = one(rows, "step8", m=dataclasses.replace(machine(cores=4), exchange=WAITS), **without)
    assert p.terms["hidden"] == pytest.approx(min(p.terms["mpi"] + p.terms["self"], COMPUTE * 9 ** 3 / 1000))


def test_compute_streams_at_its_kernels_measured_rate(rows):
    """With the kernels measured, each strategy's compute runs at its kernel's rate (in place, one pass, split
    for interior or masked overlap) with the node's ranks at once; a probe at another block scales them."""
    def rates(one: float) -> Memory:  # 1 rank: `one`; 2 and 4 ranks at once: half of it
        return Memory((CopyPoint(1, one), CopyPoint(2, one / 2), CopyPoint(4, one / 4)), "k")

    kernels = Kernels({"in-place": rates(4e10), "one-pass": rates(2e10), "interior": rates(1e10),
                       "masked": rates(8e9), "interior-one-pass": rates(6e9), "masked-one-pass": rates(4e9),
                       "window": rates(3e9)},
                      (10, 10, 10))
    m = dataclasses.replace(machine(), compute=kernels)
    bytes_ = 2 * 3 * 1000 * 4
    for sid, rate in (("step2", 2e10), ("step3", 2e10), ("step8", 5e9), ("step10", 4e9)):  # in place, 2 ranks
        assert one(rows, sid, m=m).terms["compute"] == pytest.approx(bytes_ / rate), sid
    for sid, rate in (("step2", 1e10), ("step3", 1e10), ("step8", 3e9), ("step10", 2e9)):
        assert one(rows, sid, m=m, compute="one-pass").terms["compute"] == pytest.approx(bytes_ / rate), sid
    # shm-window runs its own kernel: its neighbours read its fields as it shifts them.
    assert one(rows, "shm-window", m=m).terms["compute"] == pytest.approx(bytes_ / 1.5e9)
    # CheckMPI's compute (--compute two-pass): step2 shifts in place, step3 copies, then shifts.
    assert one(rows, "step2", compute="two-pass", m=m).terms["compute"] == pytest.approx(bytes_ / 2e10)
    assert one(rows, "step3", procs=(1, 1, 1), ranks_per_node=1, m=m).terms["compute"] == pytest.approx(bytes_ / 4e10)
    # 4 ranks on 2 cores: the rate measured with 4 at once (the others' turns besides are waits in MPI).
    p = one(rows, "step3", procs=(4, 1, 1), ranks_per_node=4, m=m, compute="one-pass")
    assert p.terms["compute"] == pytest.approx(bytes_ / 5e9)
    assert one(rows, "step3", compute="two-pass", m=m).terms["compute"] == pytest.approx(2 * bytes_ / 1e10)
    # Packing scales as the one-pass kernel between the profile's ranks (pack.host.ranks absent: the case's) and
    # the case's.
    assert p.terms["pack"] == pytest.approx(one(rows, "step3", procs=(4, 1, 1), ranks_per_node=4).terms["pack"])
    # With blocks measured, the rates for the run's working set: between two blocks log-linear in the bytes, and
    # neither the profile's own rates nor a memcpy probe at the run's block.
    def block(bytes_: int, rate: float) -> BlockPoint:
        d = Direction(rate / 10, rate / 20)
        return BlockPoint((8, 8, 8), bytes_, ((1, BlockRates(rate, {k: rate / 2 for k in KERNELS}, d, d, d,
                                                             {"interior": 0.5, "masked": 0.5})),))

    ws = geometry().field_bytes
    blocked = dataclasses.replace(m, blocks=Blocks((block(ws // 4, 4e10), block(ws * 4, 1e10)), "blocks"))
    q = one(rows, "step3", procs=(1, 1, 1), ranks_per_node=1, m=blocked, copy_bandwidth=1e12)
    assert q.terms["compute"] == pytest.approx(bytes_ / 1e10)  # halfway in log(bytes): sqrt(2e10 * 5e9)
    assert q.terms["pack"] == pytest.approx(6 * MSG / 2e9)
    # Waits per completion measured at the blocks replace the tiny block's exchange waits.
    def waited(point: BlockPoint, waits: dict) -> BlockPoint:
        k, r = point.by_ranks[0]
        return dataclasses.replace(point, by_ranks=((k, dataclasses.replace(r, waits=waits)),))

    timed = dataclasses.replace(blocked, exchange=WAITS, blocks=Blocks(tuple(
        waited(p, {"by_direction": 2e-6, "all_at_once": 5e-6}) for p in blocked.blocks.points), "blocks"))
    for sid, extra in (("step7", 5e-6), ("step3", 2 * 2e-6)):  # one completion all at once, x's two by direction
        assert one(rows, sid, m=timed).terms["mpi"] - one(rows, sid, m=blocked).terms["mpi"] == pytest.approx(extra)
    # A memcpy probe at another block, twice the profile's copy bandwidth (5 GB/s for 2 ranks): twice as fast;
    # at the profile's own block the profile's rates stand.
    assert one(rows, "step2", local=(12, 10, 10), copy_bandwidth=1e10, m=m).terms["compute"] == pytest.approx(
        1.2 * bytes_ / 4e10)
    assert one(rows, "step2", copy_bandwidth=1e10, m=m).terms["compute"] == pytest.approx(bytes_ / 2e10)


def test_pack_bandwidths_measured_per_rank_count(rows):
    """pack.host.by_ranks: the bandwidths of the most ranks at once up to the node's ranks, unscaled."""
    slow = Pack(Direction(1e7, 1e7), Direction(1e8, 1e8), Direction(1e8, 1e8), (10, 10, 10), "pack")
    base = machine().pack_host
    m = dataclasses.replace(machine(), pack_host=dataclasses.replace(base, by_ranks=((1, base), (2, slow))))
    assert one(rows, "step2", procs=(1, 1, 1), ranks_per_node=1, m=m).terms["pack"] == pytest.approx(
        2 * MSG / 1e8 + 4 * MSG / 1e9)
    for procs in ((2, 1, 1), (4, 1, 1)):  # 2 and 4 ranks: the last point, 2
        assert one(rows, "step2", procs=procs, ranks_per_node=procs[0], m=m).terms["pack"] == pytest.approx(
            2 * MSG / 1e7 + 4 * MSG / 1e8)


def test_copy_bandwidth_measured_at_the_block(rows):
    # A memcpy probe at another block 4x the profile's: compute and packing 4x faster, messages as they were.
    base, fast = one(rows, "step2", local=(12, 10, 10)), one(rows, "step2", local=(12, 10, 10), copy_bandwidth=2e10)
    for phase in ("pack", "unpack", "compute"):
        assert fast.terms[phase] == pytest.approx(base.terms[phase] / 4)
    assert fast.terms["mpi"] == base.terms["mpi"]
    assert one(rows, "step2", copy_bandwidth=2e10).terms == one(rows, "step2").terms  # the profile's block


def test_self_copy_shared_memory_and_mock(rows):
    t = one(rows, "step2", self_copy=True).terms
    assert t["self"] == pytest.approx(4 * 2 * MSG / 5e9)  # a local copy at the copy bandwidth
    shm = one(rows, "shm-window")
    assert shm.messages == 0 and shm.terms["unpack"] == shm.terms["self"] == shm.terms["pack"] == 0.0
    # Halos read from the window inside the MPI time: at the unpack bandwidths where no window rate was measured.
    assert shm.terms["mpi"] == pytest.approx(2 * MSG / 1e8 + 4 * MSG / 1e9)
    assert shm.terms["barrier"] == pytest.approx(2 * 1e-6 + 1e-6)  # the node's two barriers in place and --sync's
    mock = one(rows, "mock")
    assert mock.messages == 0 and mock.terms["mpi"] == mock.terms["barrier"] == mock.terms["self"] == 0.0
    assert mock.terms["pack"] == pytest.approx(one(rows, "step7").terms["pack"])


def test_rma_synchronisation(rows):
    base = one(rows, "step7").terms["mpi"]
    assert one(rows, "rma-fence").terms["mpi"] == pytest.approx(base + 2 * 1e-6)  # two fences ~ barriers
    assert one(rows, "rma-pscw").terms["mpi"] == pytest.approx(base + 2 * 1e-6)  # post/start, complete/wait
    # 4 ranks on 2 cores: a fence is a barrier measured as it is, with the others' turns in it: a wait, not work.
    fence, step7 = (one(rows, sid, procs=(4, 1, 1), ranks_per_node=4) for sid in ("rma-fence", "step7"))
    assert fence.work == pytest.approx(step7.work) and fence.turns == pytest.approx(step7.turns) and fence.turns > 0
    assert fence.terms["mpi"] == pytest.approx(step7.terms["mpi"] + 2 * 2e-6)  # barrier(4)


def test_placement_follows_the_cartesian_rank_order():
    assert placement.coords(5, (2, 2, 2)) == (1, 0, 1)  # last dimension fastest
    assert placement.rank_of((1, 0, 1), (2, 2, 2)) == 5
    kinds = placement.link_kinds(0, (2, 2, 2), 4)  # ranks 0-3 on node 0
    assert kinds == {(0, 1): "inter", (0, -1): "inter", (1, 1): "intra", (1, -1): "intra",
                     (2, 1): "intra", (2, -1): "intra"}
    assert placement.link_kinds(0, (1, 1, 2), 2) == {(0, 1): "self", (0, -1): "self", (1, 1): "self",
                                                     (1, -1): "self", (2, 1): "intra", (2, -1): "intra"}
    # 4x4x4 on nodes of 4: z stays on the node, x and y leave it: 4 off-node neighbours.
    rank, kinds = placement.busiest((4, 4, 4), 4)
    assert placement.counts(kinds) == {"self": 0, "intra": 2, "inter": 4}
    # 2x2x3 on nodes of 4 (ranks 0-3, 4-7, 8-11): rank 4 = (0,1,1) has x neighbour 10, y neighbour 1,
    # z neighbours 5 (its node) and 3: five off-node messages, more than any other rank.
    rank, kinds = placement.busiest((2, 2, 3), 4)
    assert rank == 4 and placement.counts(kinds) == {"self": 0, "intra": 1, "inter": 5}
    assert placement.counts(placement.busiest((8, 8, 8), 512)[1]) == {"self": 0, "intra": 6, "inter": 0}


def test_catalog_lists_every_row_schema_valid():
    exe = BUILD_BIN / "checkmpi-halo"
    doc = json.loads(subprocess.run([str(exe), "--list-strategies", "--json", "-"], capture_output=True, text=True,
                                    check=True, timeout=60).stdout)
    assert not list(schema_validator("checkmpi.catalog/2").iter_errors(doc))
    text = subprocess.run([str(exe), "--list-strategies"], capture_output=True, text=True, check=True,
                          timeout=60).stdout
    listed = [line.split()[0] for line in text.split("\n\n")[0].splitlines()[1:] if line and not line[0].isspace()]
    assert [r["id"] for r in doc["strategies"]] == listed
    assert [r["number"] for r in doc["strategies"][:11]] == list(range(11))
    step1 = doc["strategies"][1]["traits"]["directions"]
    assert step1["x"] == {"messages_per_sign": 3, "fields_per_message": 1, "datatype": False, "packed": "hand"}
    assert step1["y"]["datatype"] and step1["y"]["packed"] is None


def test_catalog_selection_is_the_tools():
    assert [r.id for r in catalog.load("sendrecv-pack,0,step10", str(BUILD_BIN))] == ["step2", "step0", "step10"]
    composed = catalog.load("pack=kernel,transport=persistent,overlap=interior", str(BUILD_BIN))
    assert composed[0].id == "custom1" and composed[0].traits["overlaps"]
    with pytest.raises(CheckmpiError, match="unknown strategy 'step11'"):
        catalog.load("step11", str(BUILD_BIN))


def test_engine_traits_agree_with_the_catalog():
    """The engine's own traits (a real 2x2x1 run on one node) follow from the catalog's."""
    run = load(DATA / "halo_all_steps.json")
    rows = catalog.rows_of_run(run)
    case = M.Case(run.dims, run.local, M.Geometry.of(run.config), run.precision, ranks_per_node=run.nprocs)
    assert len(rows) == len(run.ran())
    for s in run.ran():
        want = M.engine_traits(rows[s.id], case)
        got = {k: s.raw["traits"][k] for k in want}
        assert got == want, s.id


def test_scale_projection(rows):
    from checkmpi.projection import parse_scale, project

    counts = parse_scale("8,64,1000")
    points = project(counts, M.Case((1, 1, 1), (10, 10, 10), geometry(), ranks_per_node=4), [rows["step7"]],
                     machine(cores=4), str(BUILD_BIN))
    assert [(p.procs, p.nodes) for p in points] == [((2, 2, 2), 2), ((4, 4, 4), 16), ((10, 10, 10), 250)]
    assert [p.links for p in points][1] == {"self": 0, "intra": 2, "inter": 4}
    # Weak scaling: the same block, so more off-node neighbours and a larger barrier only.
    totals = [p.predictions[0].total for p in points]
    assert totals == sorted(totals)
    with pytest.raises(CheckmpiError, match="--scale expects"):
        parse_scale("8,x")


def test_p2p_profile_equivalent():
    from checkmpi.p2p_profile import machine_from_p2p

    m = machine_from_p2p([load(DATA / "p2p_pingpong.json"), load(DATA / "p2p_datatype.json")], (10e9, "test"), 4)
    assert m.intra.source.endswith("p2p_pingpong.json") and m.datatype is not None
    assert m.pack_host.y.pack == 5e9 and m.pack_host.x.pack == pytest.approx(10e9 * 4 / 68)
    double = machine_from_p2p([load(DATA / "p2p_pingpong.json")], (10e9, "test"), 8)  # a line per number of 8 bytes
    assert double.pack_host.x.pack == pytest.approx(10e9 * 8 / 72)
    assert m.barrier_seconds(4) == pytest.approx(2 * m.intra.segment(0).alpha)
    loggp = machine_from_p2p([load(DATA / "p2p_loggp.json")], (10e9, "test"), 4)
    fit = load(DATA / "p2p_loggp.json").fits["loggp"]
    assert loggp.intra.time(1000) == pytest.approx(fit["L"] + fit["o_s"] + fit["o_r"] + 1000 * fit["G"])
    with pytest.raises(CheckmpiError, match="ping-pong result with a Hockney fit or a LogGP"):
        machine_from_p2p([load(DATA / "p2p_ring.json")], (10e9, "test"), 4)
    case = M.Case((2, 1, 1), (8, 8, 8), geometry((8, 8, 8)))
    assert math.isfinite(M.predict(catalog.load("step0", str(BUILD_BIN)), case, m)[0].total)


def test_case_defaults():
    c = M.Case((2, 2, 2), (4, 4, 4), geometry((4, 4, 4)))
    assert (c.nprocs, c.rpn, c.geometry.real_bytes) == (8, 8, 4)
    assert dataclasses.replace(c, ranks_per_node=16).rpn == 8
