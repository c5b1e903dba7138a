"""Loading results files (checkmpi.results): fixtures, skipped strategies, schema refusals naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DATA

from checkmpi import tables
from checkmpi.errors import CheckmpiError
from checkmpi.results import HALO_TIMERS, HaloRun, P2PRun, load, load_all


def test_load_halo_fixture():
    run = load(DATA / "halo_4ranks.json")
    assert isinstance(run, HaloRun)
    assert run.nprocs == 4 and run.dims == (2, 2, 1) and run.local == (16, 16, 16)
    assert [s.id for s in run.strategies] == ["step0", "step1", "step2"]
    assert tuple(run.strategies[0].timers) == HALO_TIMERS
    assert run.memcpy_bandwidth is not None and run.memcpy_bandwidth.mean > 0
    s = run.strategies[2]
    d = s.step_time
    assert d.n == 4 * 40 and d.min <= d.p5 <= d.median <= d.p95 <= d.max
    assert d.ci is not None and d.ci[0] <= d.median <= d.ci[1]
    assert s.message_bytes("x") == 3 * 18 * 18 * 4  # step2: three fields per message
    assert run.strategies[0].message_bytes("x") == 18 * 18 * 4  # step0: one field


def test_load_repeated_run_of_every_strategy():
    run = load(DATA / "halo_all_steps.json")
    doc = json.loads((DATA / "halo_all_steps.json").read_text())
    ids = [s.id for s in run.ran()]
    assert ids == [r["strategy"] for r in doc["results"]] and len(ids) == 20
    assert ids[:11] == [f"step{i}" for i in range(11)]  # CheckMPI's steps first, then checkmpi's own rows
    assert [s.step for s in run.ran()] == list(range(11)) + [99] * 9  # "step" null sorts after step10
    # partitioned needs MPI 4; Open MPI 4.1 has 3.1: listed as skipped, with the reason
    assert [(s.id, s.step) for s in run.strategies if s.skipped] == [("partitioned", 99)]
    assert "needs MPI 4" in run.strategies[-1].skipped
    for s in run.ran():
        assert s.runs == 3 and s.steps == 3 * 40 and len(s.repeat_medians) == 3
        spread = (max(s.repeat_medians) - min(s.repeat_medians)) / sorted(s.repeat_medians)[1]
        assert s.repeat_spread == pytest.approx(spread, rel=1e-6)
        assert s.step_time.n == 3 * 4 * 40
        assert [len(r) for r in s.round_medians] == [run.rounds] * 3  # per run, each round's median


def test_load_the_binarys_ranking():
    """vs_fastest, fastest_group, rounds and oversubscribed as checkmpi-halo wrote them (checkmpi.halo/5)."""
    for name in ("halo_4ranks.json", "halo_all_steps.json"):
        run = load(DATA / name)
        doc = json.loads((DATA / name).read_text())
        assert run.fastest_group == doc["fastest_group"] and run.fastest_group
        assert run.rounds == doc["config"]["rounds"] >= 1
        assert run.oversubscribed is doc["context"]["oversubscribed"]
        for s, entry in zip(run.ran(), doc["results"]):
            vs = entry["vs_fastest"]
            # Not ranked: an invalid strategy, or mock (its exchange is untimed: the floor, not an answer).
            assert (s.vs_fastest is None) == (vs is None) == (not s.valid or s.raw["parts"]["transport"] == "mock")
            if vs is not None:
                assert (s.vs_fastest.ratio, s.vs_fastest.ci, s.vs_fastest.tied) == (vs["ratio"], tuple(vs["ci95"]),
                                                                                  vs["tied"])
                assert s.vs_fastest.tied == (s.id in run.fastest_group)
        fastest = next(s for s in run.ran() if s.id == run.fastest_group[0])
        assert fastest.vs_fastest.ratio == 1.0
        assert fastest.step_time.median == min(s.step_time.median for s in run.ran() if s.vs_fastest)


def test_skipped_strategies_come_from_the_top_level_list(tmp_path):
    """checkmpi-halo lists what the backend cannot run under "skipped" (cuda:
    step0-step2); the report shows them and the context says GPU-aware or not."""
    doc = _halo_doc()
    row = next(r["catalog"] for r in doc["results"] if r["strategy"] == "step2")
    doc["skipped"] = [{"strategy": "step3", "catalog": dict(row, id="step3", alias="kernel-pack", number=3),
                       "reason": "host only: test"}]
    doc["context"].update({"backend": "cuda", "gpu_aware_mpi": False,
                           "gpus": [{"node": 0, "device": r, "name": "GPU"} for r in range(4)]})
    run = load(_write(tmp_path, "cuda.json", json.dumps(doc)))
    assert [s.id for s in run.strategies] == ["step0", "step1", "step2", "step3"]
    assert run.strategies[3].skipped == "host only: test" and run.ran() == run.strategies[:3]
    table = tables.halo_table(run)
    assert table.rows[3][0] == "step3" and table.rows[3][-1] == "skipped"
    assert "step3: skipped: host only: test" in table.caption
    assert dict(tables.context_rows(run))["backend / GPU-aware MPI"] == "cuda; GPU-aware MPI: no"


@pytest.mark.parametrize("mode", ["pingpong", "bw", "ring", "loggp", "datatype"])
def test_load_p2p_fixtures(mode):
    run = load(DATA / f"p2p_{mode}.json")
    assert isinstance(run, P2PRun) and run.mode == mode and run.results


@pytest.mark.parametrize("name,ops", [("p2p_nbc", ["ialltoall", "ibcast"]), ("p2p_nbc_pencil", ["x_to_y", "y_to_z"])])
def test_load_nbc_fixtures(name, ops):
    """Recorded from real checkmpi-p2p nbc runs (record_fixtures.sh)."""
    run = load(DATA / f"{name}.json")
    assert isinstance(run, P2PRun) and run.mode == "nbc" and run.fits == {}
    assert list(dict.fromkeys(r["op"] for r in run.results)) == ops
    assert {r["tests"] for r in run.results} == {0, 4}
    assert run.context["progress_thread"]["requested"] is False


def test_load_names_a_missing_nbc_time(tmp_path):
    doc = json.loads((DATA / "p2p_nbc.json").read_text())
    del doc["results"][3]["pure_comm"]
    with pytest.raises(CheckmpiError, match=r"results\[3\]\.pure_comm is missing"):
        load(_write(tmp_path, "a.json", json.dumps(doc)))
    doc = json.loads((DATA / "p2p_nbc.json").read_text())
    doc["results"][0]["op"] = 7
    with pytest.raises(CheckmpiError, match=r"results\[0\]\.op is 7, not one of ialltoall, "):
        load(_write(tmp_path, "b.json", json.dumps(doc)))
    doc = json.loads((DATA / "p2p_nbc.json").read_text())
    del doc["context"]["progress_thread"]
    with pytest.raises(CheckmpiError, match=r"context\.progress_thread is missing"):
        load(_write(tmp_path, "c.json", json.dumps(doc)))


def test_load_all_splits_kinds():
    halos, p2ps = load_all([str(DATA / "halo_4ranks.json"), str(DATA / "p2p_pingpong.json")])
    assert len(halos) == 1 and len(p2ps) == 1


def _write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content)
    return path


def _halo_doc() -> dict:
    return json.loads((DATA / "halo_4ranks.json").read_text())


@pytest.mark.parametrize("content,message", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "not a checkmpi results file"),
    ('{"results": []}', "not a checkmpi results file"),
    ('{"schema": "other.tool/1"}', "not a checkmpi results schema"),
    ('{"schema": "checkmpi.halo/1"}', "schema version 'checkmpi.halo/1'"),
    ('{"schema": "checkmpi.p2p/7"}', "schema version 'checkmpi.p2p/7'"),
])
def test_load_rejects_bad_files(tmp_path, content, message):
    with pytest.raises(CheckmpiError, match=message):
        load(_write(tmp_path, "bad.json", content))


def test_load_missing_file(tmp_path):
    with pytest.raises(CheckmpiError, match="does not exist"):
        load(tmp_path / "nope.json")


def _broken(tmp_path: Path, change, fixture: str = "halo_4ranks.json") -> Path:
    doc = json.loads((DATA / fixture).read_text())
    change(doc)
    return _write(tmp_path, "broken.json", json.dumps(doc))


@pytest.mark.parametrize("change,message", [
    (lambda d: d["results"][1]["timers"].pop("loop"), r"results\[1\]\.timers\.loop is missing"),
    (lambda d: d["results"][0]["timers"]["comm"].update(max="fast"),
     r"results\[0\]\.timers\.comm\.max is not a number or null: 'fast'"),
    (lambda d: d["config"].pop("l"), r"config\.l is missing"),
    (lambda d: d["results"][0].update(valid="false"), r"results\[0\]\.valid is not a boolean: 'false'"),
    (lambda d: d["context"].update(gpu_aware_mpi="yes"), r"context\.gpu_aware_mpi is not a boolean or null"),
    (lambda d: d["results"][2]["step_time"].update(median_ci=[1.0]), r"results\[2\]\.step_time\.median_ci"),
    (lambda d: d["results"][0].update(mpi_buffers="gpu"), r"results\[0\]\.mpi_buffers is 'gpu', not one of"),
    (lambda d: d.pop("fastest_group"), r"^malformed results in '.*': fastest_group is missing$"),
    (lambda d: d["context"].pop("oversubscribed"), r"context\.oversubscribed is missing"),
    (lambda d: d["config"].update(rounds=0), r"config\.rounds: 0 is less than the minimum of 1"),
])
def test_load_names_the_offending_key(tmp_path, change, message):
    with pytest.raises(CheckmpiError, match=message) as e:
        load(_broken(tmp_path, change))
    assert "\n" not in e.value.message and e.value.code == 2


@pytest.mark.parametrize("fixture,change,message", [
    ("p2p_pingpong.json", lambda d: d.update(mode="teleport"), "mode is 'teleport'"),
    ("p2p_pingpong.json", lambda d: d["fits"]["hockney"].update(segments="none"),
     r"fits\.hockney\.segments is not a array"),
    ("p2p_loggp.json", lambda d: d["fits"]["loggp"].pop("G"), r"fits\.loggp\.G is missing"),
    ("p2p_datatype.json", lambda d: d["results"][3].update(contiguous=1), r"results\[3\]\.contiguous is not a boolean"),
    ("p2p_pingpong.json", lambda d: d["results"][0]["latency"].pop("p95"), r"results\[0\]\.latency\.p95 is missing"),
    ("p2p_bw.json", lambda d: d.update(valid="true"), r"valid is not a boolean: 'true'"),
])
def test_load_p2p_names_the_offending_key(tmp_path, fixture, change, message):
    with pytest.raises(CheckmpiError, match=message):
        load(_broken(tmp_path, change, fixture))
