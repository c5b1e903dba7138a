"""CSV and Extra-P export (checkmpi.export)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import DATA

from checkmpi import export
from checkmpi.errors import CheckmpiError
from checkmpi.results import HALO_TIMERS, load


def _halo_doc() -> dict:
    return json.loads((DATA / "halo_4ranks.json").read_text())


def test_csv_has_one_row_per_run_strategy_timer_statistic():
    runs = [load(DATA / "halo_4ranks.json"), load(DATA / "halo_all_steps.json")]
    rows = list(csv.DictReader(io.StringIO(export.to_csv(runs))))  # type: ignore[arg-type]
    strategies = sum(len(r.ran()) for r in runs)
    assert strategies == 3 + 20
    assert len(rows) == strategies * (len(HALO_TIMERS) * 3 + 6)
    doc = _halo_doc()
    row = next(r for r in rows if r["file"].endswith("halo_4ranks.json") and r["strategy"] == "step1"
               and r["timer"] == "x" and r["stat"] == "mean")
    assert float(row["seconds"]) == doc["results"][1]["timers"]["x"]["mean"]
    assert float(row["seconds_per_step"]) == pytest.approx(float(row["seconds"]) / 40)
    assert row["nprocs"] == "4" and row["proc_x"] == "2" and row["l"] == "16" and row["valid"] == "true"
    step = next(r for r in rows if r["file"].endswith("halo_4ranks.json") and r["strategy"] == "step1"
                and r["timer"] == "step" and r["stat"] == "p95")
    assert float(step["seconds_per_step"]) == doc["results"][1]["step_time"]["p95"]


def test_csv_carries_the_tables_figures_and_the_ranking(tmp_path):
    """Each row of a strategy also has what the table and the headline show of it: median, its CI, rounds and
    runs (--repeat), and checkmpi-halo's ranking (empty where it is not ranked)."""
    doc = json.loads((DATA / "halo_all_steps.json").read_text())
    doc["results"][1].update(valid=False, error="test", vs_fastest=None)  # step1: invalid, not ranked
    doc["fastest_group"] = [g for g in doc["fastest_group"] if g != "step1"]
    path = tmp_path / "ranked.json"
    path.write_text(json.dumps(doc))
    rows = list(csv.DictReader(io.StringIO(export.to_csv([load(path)]))))
    assert tuple(rows[0]) == export.CSV_COLUMNS and export.CSV_COLUMNS[:22] == (
        "file", "date", "mpi_library", "nprocs", "proc_x", "proc_y", "proc_z", "lx", "ly", "lz", "l", "m", "n",
        "precision", "strategy", "alias", "valid", "steps", "timer", "stat", "seconds", "seconds_per_step")
    for entry in doc["results"]:
        mine = [r for r in rows if r["strategy"] == entry["strategy"]]
        assert len(mine) == len(HALO_TIMERS) * 3 + 6
        first = mine[0]
        assert all({k: r[k] for k in export.CSV_COLUMNS[22:]} == {k: first[k] for k in export.CSV_COLUMNS[22:]}
                   for r in mine)
        d, vs = entry["step_time"], entry["vs_fastest"]
        assert float(first["median"]) == d["median"]
        assert (float(first["ci_low"]), float(first["ci_high"])) == tuple(d["median_ci"])
        assert first["rounds"] == str(doc["config"]["rounds"]) and first["runs"] == str(entry["runs"]) == "3"
        assert first["launches"] == str(doc["config"]["launches"])
        assert first["in_fastest_group"] == str(entry["strategy"] in doc["fastest_group"]).lower()
        assert first["oversubscribed"] == str(doc["context"]["oversubscribed"]).lower()
        if vs is None:
            assert [first[k] for k in ("vs_fastest", "vs_fastest_ci_low", "vs_fastest_ci_high", "tied")] == [""] * 4
        else:
            assert float(first["vs_fastest"]) == vs["ratio"] and first["tied"] == str(vs["tied"]).lower()
            assert (float(first["vs_fastest_ci_low"]), float(first["vs_fastest_ci_high"])) == tuple(vs["ci95"])
    assert next(r for r in rows if r["strategy"] == "step1")["vs_fastest"] == ""


def test_p2p_csv_has_every_number():
    run = load(DATA / "p2p_pingpong.json")
    rows = list(csv.DictReader(io.StringIO(export.p2p_csv([run]))))
    assert len(rows) == len(run.results) * (6 + 1)  # latency statistics, bandwidth
    median = next(r for r in rows if r["size"] == "64" and r["quantity"] == "latency" and r["stat"] == "median")
    assert float(median["value"]) == next(r for r in run.results if r["size"] == 64)["latency"]["median"]
    bw = next(r for r in rows if r["size"] == "64" and r["quantity"] == "bandwidth")
    assert bw["unit"] == "B/s" and bw["mode"] == "pingpong"
    dt = list(csv.DictReader(io.StringIO(export.p2p_csv([load(DATA / "p2p_datatype.json")]))))
    assert {r["quantity"] for r in dt} == {"datatype", "packed", "overhead"} and dt[0]["count"] == "1"
    nbc = load(DATA / "p2p_nbc_pencil.json")
    rows = list(csv.DictReader(io.StringIO(export.p2p_csv([nbc]))))
    # per result: 8 distributions of 6 statistics, and the overlap
    assert len(rows) == len(nbc.results) * (8 * 6 + 1)
    first = nbc.results[1]
    overlap = next(r for r in rows if r["op"] == first["op"] and r["grid"] == "9x7x5" and r["tests"] == "4"
                   and r["quantity"] == "overlap")
    assert overlap["unit"] == "%" and float(overlap["value"]) == first["overlap"] and first["tests"] == 4
    assert {r["quantity"] for r in rows} == {"blocking", "pure_comm", "compute_target", "init", "compute", "test",
                                             "wait", "overall", "overlap"}


def test_p2p_csv_of_the_osu_counterparts():
    """issue 33's modes flow through the same export: message rate in 1/s, coll's over-rank figures in s,
    rma's operation with its synchronisation, no row for pairs or per-thread lists."""
    mbw = list(csv.DictReader(io.StringIO(export.p2p_csv([load(DATA / "p2p_mbw-mr.json")]))))
    assert {r["quantity"] for r in mbw} == {"time", "bandwidth", "message_rate"}
    assert {r["unit"] for r in mbw if r["quantity"] == "message_rate"} == {"1/s"}
    coll = load(DATA / "p2p_coll.json")
    rows = list(csv.DictReader(io.StringIO(export.p2p_csv([coll]))))
    assert {r["quantity"] for r in rows} == {"latency", "avg_latency", "min_latency", "max_latency"}
    avg = next(r for r in rows if r["op"] == "bcast" and r["quantity"] == "avg_latency")
    assert float(avg["value"]) == next(r for r in coll.results if r["op"] == "bcast")["avg_latency"]
    rma = list(csv.DictReader(io.StringIO(export.p2p_csv([load(DATA / "p2p_rma.json")]))))
    assert {r["op"] for r in rma} == {"put/lock", "get/lock", "acc/lock"}
    threads = list(csv.DictReader(io.StringIO(export.p2p_csv([load(DATA / "p2p_pingpong_threads.json")]))))
    assert {r["quantity"] for r in threads} == {"latency", "bandwidth"}


def test_extrap_json_lines():
    a = load(DATA / "halo_4ranks.json")
    lines = [json.loads(x) for x in export.to_extrap([a]).splitlines()]
    assert len(lines) == 3 * len(HALO_TIMERS)
    first = lines[0]
    assert first["params"] == {"p": 4} and first["callpath"] == "step0" and first["metric"] == "time_loop"
    assert first["value"] == pytest.approx(_halo_doc()["results"][0]["timers"]["loop"]["max"] / 40)
    # A parameter that varies across runs becomes a modelling parameter.
    b = load(DATA / "halo_4ranks.json")
    b.config.update({"l": 32})
    assert export.extrap_parameters([a, b]) == ["n"]
    assert json.loads(export.to_extrap([a, b]).splitlines()[-1])["params"] == {"n": 32 * 16 * 16}


def test_extrap_keeps_to_what_it_can_model(tmp_path, capsys):
    """Runs that differ in more than ranks and cells are refused (Extra-P would take them for repetitions); a
    strategy that failed validation and a timer without a value (null in the JSON) are left out, and said so."""
    a = load(DATA / "halo_4ranks.json")
    b = load(DATA / "halo_4ranks.json")
    b.config["precision"] = "double"
    with pytest.raises(CheckmpiError, match=r"--format extrap models ranks \(p\) and cells per rank \(n\) only: "
                       r".* has precision 'double', .* 'single'; export them apart"):
        export.to_extrap([a, b])
    doc = _halo_doc()
    doc["results"][1]["valid"] = False
    for stat in ("min", "mean", "max"):
        doc["results"][0]["timers"]["x"][stat] = None
    (tmp_path / "h.json").write_text(json.dumps(doc))
    lines = [json.loads(x) for x in export.to_extrap([load(tmp_path / "h.json")]).splitlines()]
    assert {x["callpath"] for x in lines} == {"step0", "step2"}
    assert ("step0", "time_x") not in {(x["callpath"], x["metric"]) for x in lines}
    assert len(lines) == 2 * len(HALO_TIMERS) - 1
    err = capsys.readouterr().err
    assert "step1 of '" in err and "failed validation: left out" in err
    assert "step0 of '" in err and "has no value for x: left out" in err
    rows = list(csv.reader(io.StringIO(export.to_csv([load(tmp_path / "h.json")]))))
    x = [row for row in rows[1:] if row[14] == "step0" and row[18] == "x"]
    assert x and all(row[20] == "" and row[21] == "" for row in x)  # empty, not 'nan'
