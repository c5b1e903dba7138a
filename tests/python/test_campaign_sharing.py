"""Runs of a campaign that shared a node at the same time (issue 30): the
detection from synthetic records (times, node lists, host names, attempts),
and the report's marks, notes, JSON and statistics from a campaign folder of
synthetic records and results (no MPI, no Slurm)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from campaign_helpers import flat, rendered_table, validate_report
from conftest import DATA, checkmpi

from checkmpi.campaign import report as CR
from checkmpi.campaign.plan import plan
from checkmpi.campaign.records import RUN_SCHEMA, CampaignDir
from checkmpi.campaign.sharing import expand_hostlist, shared_nodes, spans
from checkmpi.campaign.spec import parse_spec

T0 = 1_700_000_000.0  # epoch seconds; records hold UTC ISO times


def iso(offset: float) -> str:
    return datetime.fromtimestamp(T0 + offset, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rec(run: str, start: float | None, end: float | None, nodes: list[str] | None = None,
        hostnames: list[str] | None = None, status: str = "ok", previous: list[dict] | None = None) -> dict:
    """A record as execute/collect write it, times as offsets from T0."""
    return {"schema": RUN_SCHEMA, "run": run, "submission": int(run[1]), "status": status,
            "attempt": 1 + len(previous or []), "previous": previous or [], "started": None if start is None else iso(start),
            "ended": None if end is None else iso(end), "finished": None if end is None else iso(end + 0.01),
            "nodes": nodes or [], "hostnames": hostnames}


def test_expand_hostlist():
    assert expand_hostlist("node[1-2]") == ["node1", "node2"]
    assert expand_hostlist("n[1-2,05],gpu1") == ["n1", "n2", "n05", "gpu1"]
    assert expand_hostlist("c[01-03]") == ["c01", "c02", "c03"]
    assert expand_hostlist("a[1-2]b[3-4]") == ["a1b3", "a1b4", "a2b3", "a2b4"]
    assert expand_hostlist("node1") == ["node1"] and expand_hostlist("") == []
    assert expand_hostlist("x[a-b]") == ["x[a-b]"]  # not a host list: kept as it is


def test_overlapping_times_on_a_shared_node_are_flagged_both_ways():
    found = shared_nodes([rec("s1-a", 0, 10, ["n1", "n2"]), rec("s2-a", 5, 15, ["n2", "n3"])])
    assert found == {"s1-a": {"s2-a": ["n2"]}, "s2-a": {"s1-a": ["n2"]}}


def test_disjoint_nodes_or_times_are_not():
    assert shared_nodes([rec("s1-a", 0, 10, ["n1"]), rec("s2-a", 5, 15, ["n2"])]) == {}  # at once, apart
    assert shared_nodes([rec("s1-a", 0, 10, ["n1"]), rec("s2-a", 11, 15, ["n1"])]) == {}  # one after the other
    assert shared_nodes([rec("s1-a", 0, 10, ["n1"]), rec("s2-a", 10, 15, ["n1"])]) == {}  # touching only


def test_a_submissions_own_runs_one_after_another_never_share():
    """Local campaigns and a Slurm job's steps: the runs of a submission follow each other on the same node."""
    runs = [rec(f"s1-p{i}", 2.0 * i, 2.0 * i + 1.9, ["host"], ["host", "host"]) for i in range(5)]
    runs += [rec(f"s2-p{i}", 20 + 2.0 * i, 21.9 + 2.0 * i, ["host"], ["host"]) for i in range(5)]
    assert shared_nodes(runs) == {}


def test_a_run_never_shares_with_itself():
    first = {"attempt": 1, "status": "crashed", "started": iso(0), "ended": iso(10), "nodes": ["n1"],
             "hostnames": None}
    assert shared_nodes([rec("s1-a", 5, 15, ["n1"], previous=[first])]) == {}


def test_host_names_of_the_results_win_over_the_allocation():
    """Where a run's results say where its ranks ran, that is its node set (short names), not the job's nodes."""
    one = rec("s1-a", 0, 10, ["node[1-2]"], ["node1.cluster", "node1.cluster"])
    assert spans(one)[0].nodes == {"node1"}
    assert shared_nodes([one, rec("s2-a", 5, 15, ["node2"])]) == {}
    assert shared_nodes([one, rec("s2-a", 5, 15, ["node[1-2]"])]) == {"s1-a": {"s2-a": ["node1"]},
                                                                       "s2-a": {"s1-a": ["node1"]}}


def test_runs_that_never_started_or_have_no_times_hold_no_node():
    assert shared_nodes([rec("s1-a", 0, 10, ["n1"]), rec("s2-a", 5, 15, ["n1"], status="not_started")]) == {}
    assert shared_nodes([rec("s1-a", 0, 10, ["n1"]), rec("s2-a", None, None, ["n1"], status="not_started")]) == {}


def test_an_earlier_attempt_counts_against_others_but_is_not_flagged():
    """s1-a's first attempt (crashed, then redone later) ran beside s2-a: s2-a's result is flagged, s1-a's own
    (later) attempt is not."""
    first = {"attempt": 1, "status": "crashed", "started": iso(0), "ended": iso(10), "finished": iso(10),
             "nodes": ["n1"], "hostnames": None}
    found = shared_nodes([rec("s1-a", 100, 110, ["n1"], previous=[first]), rec("s2-a", 5, 15, ["n1"])])
    assert found == {"s2-a": {"s1-a": ["n1"]}}


def test_records_without_an_end_use_finished():
    old = rec("s1-a", 0, 10, ["n1"])
    del old["ended"]  # a record from before `ended`
    assert spans(old)[0].end == pytest.approx(T0 + 10.01)
    assert shared_nodes([old, rec("s2-a", 10.005, 15, ["n1"])]) == {"s1-a": {"s2-a": ["n1"]},
                                                                    "s2-a": {"s1-a": ["n1"]}}


# ---- the report -----------------------------------------------------------------------------------------------

SPEC = '''[campaign]
name = "shared"
executor = "slurm"
repetitions = 3
[halo]
strategies = ["step2"]
itfin = 20
[[sweep]]
local = "12x12x12"
np = 2
'''
LOOPS = {1: 0.001, 2: 0.004, 3: 0.0012}  # s2 ran beside s1 on n1 and was slow


@pytest.fixture
def campaign(tmp_path) -> Path:
    """Three submissions of one run each: s1 and s2 at the same time on node n1, s3 later on n2."""
    spec = parse_spec(SPEC, tmp_path / "shared.toml", resolved=["step2"], grids={"2": [2, 1, 1]})
    cdir = CampaignDir(tmp_path / "camp")
    cdir.create_or_check(spec)
    cdir.runs_dir.mkdir()
    halo = json.loads((DATA / "halo_scale_np2.json").read_text())
    halo["results"] = [r for r in halo["results"] if r["strategy"] == "step2"]
    times = {1: (0, 10, "n1"), 2: (5, 15, "n1"), 3: (20, 30, "n2")}
    for run in plan(spec):
        k = run.submission
        halo["results"][0]["timers"]["loop"].update(min=LOOPS[k], mean=LOOPS[k], max=LOOPS[k])
        out = cdir.output_dir(run.id, 1)
        out.mkdir(parents=True)
        (out / "halo.json").write_text(json.dumps(halo))
        start, end, node = times[k]
        cdir.write_record({**rec(run.id, start, end, [node], [node, node]), "point": run.point.as_json(),
                           "strategy": run.strategy, "campaign": "shared", "note": None, "exit_code": 0,
                           "signal": None, "elapsed_s": end - start, "expected": None, "launch": None,
                           "command": None, "slurm": {"job_id": str(10 + k), "state": "RUNNING"},
                           "results": cdir.rel(out / "halo.json"), "log": None, "errors": {}})
    return cdir.root


def test_report_flags_shared_runs_and_leaves_them_out(campaign):
    cdir = CampaignDir(campaign)
    spec = cdir.load_spec()
    rep = CR.build(cdir, spec, plan(spec))
    ids = [r.id for r in plan(spec)]
    assert [rep.cells[i].shared_with for i in ids] == [{ids[1]: ["n1"]}, {ids[0]: ["n1"]}, {}]
    doc = rep.doc
    validate_report(doc)
    assert doc["campaign"]["include_shared"] is False and doc["counts"]["shared"] == 2
    runs = {r["run"]: r for r in doc["runs"]}
    assert runs[ids[0]]["shared_node_with"] == [ids[1]] and runs[ids[0]]["shared_nodes"] == ["n1"]
    assert runs[ids[2]]["shared_node_with"] == [] and runs[ids[2]]["in_stats"]
    assert not runs[ids[0]]["in_stats"] and runs[ids[0]]["loop_s"] == LOOPS[1]  # still reported, not counted
    (stat,) = doc["stats"]
    assert (stat["n"], stat["median_s"], stat["ratio"]) == (1, LOOPS[3], 1.0)  # s3 alone
    assert doc["scaleup"][0]["rows"][0]["strategies"]["step2"]["median_s"] == LOOPS[3]
    assert ("runs that shared a node with another of the campaign's runs at the same time: 2 (marked *; left out "
            "of the statistics, report --include-shared keeps them)") in doc["summary"]

    loop = next(t for t in rep.tables if t.title.startswith("Loop time"))
    assert [row[1] for row in loop.rows[:3]] == ["1 *", "4 *", "1.2"]  # ms
    assert dict((row[0], row[1]) for row in loop.rows[3:])["ok runs"] == "1"
    notes = loop.caption.splitlines()[1:]
    assert notes == [f"* {ids[0]}: on n1 at the same time as {ids[1]}",
                     f"* {ids[1]}: on n1 at the same time as {ids[0]}"]
    assert "left out of the statistics (report --include-shared keeps it)" in loop.caption
    mpi = next(t for t in rep.tables if t.title.startswith("MPI %"))
    assert mpi.rows[0][1].endswith(" *") and mpi.caption.splitlines()[1:] == notes
    assert "are left out" in next(t for t in rep.tables if t.title.startswith("Scale-up")).caption


def test_report_include_shared_keeps_them(campaign):
    cdir = CampaignDir(campaign)
    spec = cdir.load_spec()
    doc = CR.build(cdir, spec, plan(spec), include_shared=True).doc
    validate_report(doc)
    (stat,) = doc["stats"]
    assert stat["n"] == 3 and stat["median_s"] == LOOPS[3] and stat["max_s"] == LOOPS[2]
    assert doc["campaign"]["include_shared"] is True and all(r["in_stats"] for r in doc["runs"])
    assert doc["counts"]["shared"] == 2 and "(marked *; kept in the statistics: --include-shared)" in doc["summary"][-1]


def test_report_command_and_its_option(campaign, tmp_path):
    r = checkmpi("campaign", "report", str(campaign), "--json", str(tmp_path / "r.json"), timeout=120)
    assert r.returncode == 0, r.stderr
    rows = rendered_table(r.stdout, "Loop time")
    assert [row[:2] for row in rows] == [["s1 (job 11)", "1 *"], ["s2 (job 12)", "4 *"], ["s3 (job 13)", "1.2"]]
    assert "* s1-2x1x1-24x12x12-step2: on n1 at the same time as s2-2x1x1-24x12x12-step2" in flat(r.stdout)
    assert json.loads((tmp_path / "r.json").read_text())["stats"][0]["n"] == 1
    r = checkmpi("campaign", "report", str(campaign), "--include-shared", "--json", str(tmp_path / "r.json"),
                 timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "r.json").read_text())["stats"][0]["n"] == 3
