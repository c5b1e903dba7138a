"""The prediction model (docs/model.md) against hand-computed values.

The parameters come from the fits in the fixtures that checkmpi-p2p recorded
(tests/python/data/record_fixtures.sh): the ping-pong's Hockney segments,
the LogGP parameters and the datatype overhead, read here from the files.
"""

from __future__ import annotations

import json

import pytest
from conftest import DATA

from checkmpi import model as M
from checkmpi.errors import CheckmpiError
from checkmpi.results import load

BW = 10e9  # copy bandwidth used below
PLANE = 18 * 18 * 4  # one 16x16 plane with halo rows, single precision
SEGMENTS = json.loads((DATA / "p2p_pingpong.json").read_text())["fits"]["hockney"]["segments"]
LOGGP = json.loads((DATA / "p2p_loggp.json").read_text())["fits"]["loggp"]
DATATYPE = json.loads((DATA / "p2p_datatype.json").read_text())["fits"]["datatype"]
ALPHA, BETA = SEGMENTS[0]["alpha"], SEGMENTS[0]["beta"]  # a zero-byte message (barriers)


def hockney():
    return M.message_model([load(DATA / "p2p_pingpong.json")])


def one(number, procs=(2, 2, 2), local=(16, 16, 16), model=None, **case):
    strategy = M.select_strategies(str(number))
    return M.predict(M.Case(procs, local, **case), strategy, model or hockney(), BW)[0]


def segment(size):
    """The last segment starting at or below `size` (the first below all), as docs/model.md says."""
    return [s for s in SEGMENTS if s["min_size"] <= size][-1] if size >= SEGMENTS[0]["min_size"] else SEGMENTS[0]


def t(size):
    s = segment(size)
    return s["alpha"] + size / s["beta"]


def test_hockney_segments_by_size():
    m = hockney()
    assert m.time(0) == pytest.approx(ALPHA)
    for first, second in zip(SEGMENTS, SEGMENTS[1:]):
        top = first["max_size"]
        assert m.time(top) == pytest.approx(first["alpha"] + top / first["beta"])
        between = (top + second["min_size"]) / 2  # between segments: the lower one
        assert m.time(between) == pytest.approx(first["alpha"] + between / first["beta"])
    last = SEGMENTS[-1]
    assert m.time(last["max_size"]) == pytest.approx(last["alpha"] + last["max_size"] / last["beta"])


def test_loggp_message_time():
    m = M.message_model([load(DATA / "p2p_loggp.json")])
    assert m.kind == "loggp"
    assert m.time(1000) == pytest.approx(LOGGP["L"] + LOGGP["o_s"] + LOGGP["o_r"] + LOGGP["G"] * 1000)


def test_step2_packed_sendrecv():
    p = one(2)
    msg = 3 * PLANE
    assert p.messages == 6 and p.bytes == 6 * msg
    barrier = 3 * ALPHA  # ceil(log2 8) latencies
    assert p.mpi == pytest.approx(3 * 2 * t(msg) + 3 * barrier)
    assert p.pack == pytest.approx(3 * 2 * 2 * msg / BW) and p.unpack == p.pack
    assert p.compute == pytest.approx(2 * 3 * 16 ** 3 * 4 / BW)
    assert p.hidden == 0 and p.total == pytest.approx(p.pack + p.mpi + p.unpack + p.compute)


def test_step0_datatypes_without_and_with_overhead_fit():
    p = one(0)
    assert p.messages == 18 and p.bytes == 18 * PLANE and p.pack == 0
    gather_scatter = 2 * 2 * PLANE / BW  # x and y planes are strided: the datatype engine copies them
    assert p.mpi == pytest.approx(3 * 6 * t(PLANE) + 2 * 6 * gather_scatter + 3 * 3 * ALPHA)
    with_dt = one(0, model=M.message_model([load(DATA / "p2p_pingpong.json"), load(DATA / "p2p_datatype.json")]))
    assert with_dt.mpi - p.mpi == pytest.approx(2 * 6 * (DATATYPE["o"] + DATATYPE["O"] * PLANE))


def test_step1_packs_x_only():
    p = one(1)
    assert p.messages == 18
    assert p.pack == pytest.approx(2 * 3 * 2 * PLANE / BW)  # x: two signs, three fields


def test_all_in_flight_and_overlap():
    msg = 3 * PLANE
    p7 = one(7)
    mpi = segment(msg)["alpha"] + 2 * 3 * msg / segment(msg)["beta"] + 3 * ALPHA  # one latency, all bytes, one barrier
    assert p7.mpi == pytest.approx(mpi)
    one_pass = 2 * 3 * 16 ** 3 * 4 / BW
    assert p7.compute == pytest.approx(2 * one_pass) and p7.hidden == 0
    p8 = one(8)
    assert p8.hidden == pytest.approx(min(mpi, one_pass))
    assert p8.total == pytest.approx(p7.total - p8.hidden)


def test_masked_overlap_depends_on_border():
    one_pass = 2 * 3 * 16 ** 3 * 4 / BW
    assert one(10).hidden == 0  # border 10 leaves no inner cells in 16^3
    p = one(10, border=2)
    assert p.compute == pytest.approx(one_pass)
    assert p.hidden == pytest.approx(min(p.mpi, one_pass * 12 ** 3 / 16 ** 3))


def test_self_exchange_is_a_copy_and_no_barrier():
    p = one(2, procs=(1, 1, 1))
    assert p.mpi == pytest.approx(3 * 2 * 2 * 3 * PLANE / BW)


def test_sync_none_and_double_precision():
    assert one(2, sync="none").mpi == pytest.approx(3 * 2 * t(3 * PLANE))
    assert one(2, precision="double").bytes == 2 * one(2).bytes


def test_strategy_selection():
    assert [s.id for s in M.select_strategies("all")] == [f"step{i}" for i in range(11)]
    assert [s.id for s in M.select_strategies("sendrecv-pack,0,step10")] == ["step2", "step0", "step10"]
    with pytest.raises(CheckmpiError, match="unknown strategy 'step11'"):
        M.select_strategies("step11")


def test_model_needs_pingpong_or_loggp():
    with pytest.raises(CheckmpiError, match="needs a ping-pong result"):
        M.message_model([load(DATA / "p2p_ring.json")])


def test_copy_bandwidth_precedence():
    run = load(DATA / "halo_4ranks.json")
    assert M.copy_bandwidth_for(run, 5e9) == (5e9, "--copy-bandwidth")
    assert M.copy_bandwidth_for(run, None)[0] == run.memcpy_bandwidth.mean
    assert M.copy_bandwidth_for(None, None) == (M.DEFAULT_COPY_BANDWIDTH, "default")
