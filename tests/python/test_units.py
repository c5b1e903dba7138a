"""Unit tests: parsing, results loading, tables, export, launcher logic. No MPI."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from conftest import DATA

from checkmpi import export, native, tables
from checkmpi.errors import CheckmpiError
from checkmpi.grid import dims_create, dims_for_size, factorisations, parse_triple
from checkmpi.results import HALO_TIMERS, HaloRun, P2PRun, load, load_all

# ---- grids --------------------------------------------------------------------------------------------


def test_parse_triple_accepts_separators():
    assert parse_triple("2x3x4", "--procs") == (2, 3, 4)
    assert parse_triple("2X3*4", "--procs") == (2, 3, 4)


@pytest.mark.parametrize("text", ["2x2", "2x2x2x2", "axbxc", "2x0x2", "-1x2x2", ""])
def test_parse_triple_rejects(text):
    with pytest.raises(CheckmpiError, match="three positive integers"):
        parse_triple(text, "--procs")


def test_dims_create_is_balanced_and_non_increasing():
    assert dims_create(1) == (1, 1, 1)
    assert dims_create(2) == (2, 1, 1)
    assert dims_create(8) == (2, 2, 2)
    assert dims_create(12) == (3, 2, 2)
    assert dims_create(7) == (7, 1, 1)
    for n in range(1, 65):
        d = dims_create(n)
        assert d[0] * d[1] * d[2] == n and d[0] >= d[1] >= d[2]


def test_factorisations_cover_every_ordering():
    assert sorted(factorisations(4)) == sorted([(1, 1, 4), (1, 4, 1), (4, 1, 1), (1, 2, 2), (2, 1, 2),
                                                (2, 2, 1)])


def test_dims_for_size_divides_and_minimises_surface():
    assert dims_for_size(4, (64, 64, 8)) == (2, 2, 1)  # cutting the thin z would add surface
    assert dims_for_size(2, (30, 31, 31)) == (2, 1, 1)  # only x divides
    assert dims_for_size(4, (3, 5, 7)) is None


# ---- results ------------------------------------------------------------------------------------------


def test_load_halo_fixture():
    run = load(DATA / "halo_4ranks.json")
    assert isinstance(run, HaloRun)
    assert run.nprocs == 4 and run.dims == (2, 2, 1) and run.local == (16, 16, 16)
    assert [s.id for s in run.strategies] == ["step0", "step1", "step2"]
    assert set(run.strategies[0].timers) == set(HALO_TIMERS)
    assert run.memcpy_bandwidth is not None and run.memcpy_bandwidth.mean > 0


def test_load_tolerates_new_keys_and_skipped_strategies():
    run = load(DATA / "halo_all_steps.json")
    assert isinstance(run, HaloRun)
    assert len(run.strategies) == 11
    step4 = next(s for s in run.strategies if s.id == "step4")
    assert step4.skipped == "same work as step3 on the host backend" and not step4.timers
    assert [s.id for s in run.ran()] == [f"step{i}" for i in range(11) if i != 4]


@pytest.mark.parametrize("mode", ["pingpong", "bw", "ring", "loggp", "datatype"])
def test_load_p2p_fixtures(mode):
    run = load(DATA / f"p2p_{mode}.json")
    assert isinstance(run, P2PRun) and run.mode == mode and run.results


@pytest.mark.parametrize("name,ops", [("p2p_nbc", ["ialltoall", "ibcast"]), ("p2p_nbc_pencil", ["x_to_y", "y_to_z"])])
def test_load_nbc_fixtures(name, ops):
    """Recorded from real checkmpi-p2p nbc runs (make_fixtures.py nbc)."""
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
    with pytest.raises(CheckmpiError, match=r"results\[0\]\.op is not a str"):
        load(_write(tmp_path, "b.json", json.dumps(doc)))


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
    ('{"schema": "checkmpi.halo/2"}', "schema version 'checkmpi.halo/2'"),
    ('{"schema": "checkmpi.p2p/7"}', "schema version 'checkmpi.p2p/7'"),
])
def test_load_rejects_bad_files(tmp_path, content, message):
    with pytest.raises(CheckmpiError, match=message):
        load(_write(tmp_path, "bad.json", content))


def test_load_missing_file(tmp_path):
    with pytest.raises(CheckmpiError, match="does not exist"):
        load(tmp_path / "nope.json")


def test_load_names_missing_and_wrong_keys(tmp_path):
    doc = _halo_doc()
    del doc["results"][1]["timers"]["loop"]
    with pytest.raises(CheckmpiError, match=r"results\[1\]\.timers\.loop is missing"):
        load(_write(tmp_path, "a.json", json.dumps(doc)))
    doc = _halo_doc()
    doc["results"][0]["timers"]["comm"]["max"] = "fast"
    with pytest.raises(CheckmpiError, match=r"results\[0\]\.timers\.comm\.max is not a number"):
        load(_write(tmp_path, "b.json", json.dumps(doc)))
    doc = _halo_doc()
    del doc["config"]["l"]
    with pytest.raises(CheckmpiError, match=r"config\.l is missing"):
        load(_write(tmp_path, "c.json", json.dumps(doc)))
    doc = json.loads((DATA / "p2p_pingpong.json").read_text())
    doc["mode"] = "teleport"
    with pytest.raises(CheckmpiError, match="mode is 'teleport'"):
        load(_write(tmp_path, "d.json", json.dumps(doc)))


# ---- tables -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["halo_4ranks.json", "halo_11_strategies.json"])
def test_halo_table_numbers_match_json(name):
    run = load(DATA / name)
    table = tables.halo_table(run)
    units = {h.split(" (")[0]: h.split("(")[1].rstrip(")") for h in table.headers if "(" in h}
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}
    doc = json.loads((DATA / name).read_text())
    assert len(table.rows) == 3 * len(doc["results"])
    for i, entry in enumerate(doc["results"]):
        for k, stat in enumerate(("max", "mean", "min")):
            row = table.rows[3 * i + k]
            assert row[1] == stat
            t = entry["timers"]
            for col, timer in ((2, "loop"), (5, "x"), (6, "y"), (7, "z"), (8, "pack"), (9, "unpack")):
                assert float(row[col]) == pytest.approx(t[timer][stat] * scale[units[timer]], abs=6e-4)
            assert float(row[3]) == pytest.approx(100 * t["compute"][stat] / t["loop"][stat], abs=0.06)
            assert float(row[4]) == pytest.approx(100 * t["comm"][stat] / t["loop"][stat], abs=0.06)
        assert table.rows[3 * i][0] == f"{entry['strategy']} {entry['alias']}"
        assert table.rows[3 * i][-1] == "valid"


def test_real_eleven_strategy_run_from_the_step3_to_step10_tool():
    """halo_11_strategies.json comes from checkmpi-halo with step0-step10
    (notes, mpi_buffers, per-direction pack timers, backend, omp_threads)."""
    run = load(DATA / "halo_11_strategies.json")
    assert [s.step for s in run.ran()] == list(range(11))
    assert "pack_x" in run.strategies[3].timers
    assert "step4: same work as step3 on the host backend" in tables.halo_table(run).caption
    assert dict(tables.context_rows(run))["buffers handed to MPI"] == "host"
    rows = list(csv.DictReader(io.StringIO(export.to_csv([run]))))
    assert len(rows) == 11 * 16 * 3 and {"pack_x", "unpack_z"} <= {r["timer"] for r in rows}


def test_halo_table_shows_skipped_and_invalid():
    run = load(DATA / "halo_all_steps.json")
    run.strategies[1].valid = False
    run.strategies[1].error = "validation failed at t=1"
    table = tables.halo_table(run)
    skipped = [r for r in table.rows if r[0].startswith("step4")]
    assert skipped and skipped[0][-1].startswith("skipped:")
    assert any(r[0].startswith("step1") and r[-1] == "INVALID" for r in table.rows)
    assert "step1: validation failed at t=1" in table.caption


def test_comparison_table_marks_fastest():
    a = load(DATA / "halo_4ranks.json")
    b = load(DATA / "halo_all_steps.json")
    table = tables.comparison_table([a, b])
    assert [r[0] for r in table.rows][:3] == ["step0 sendrecv-dtype", "step1 sendrecv-packx", "step2 sendrecv-pack"]
    step3 = next(r for r in table.rows if r[0].startswith("step3"))
    assert step3[1] == "-"  # not in the first run
    for col in (1, 2):
        assert sum(r[col].endswith("*") for r in table.rows) == 1
    unit = table.title.split("(")[1].split(")")[0]
    loop = a.strategies[2].timers["loop"].max / a.strategies[2].steps
    assert float(table.rows[2][1].rstrip("*")) == pytest.approx(loop * {"ms": 1e3, "us": 1e6, "s": 1}[unit],
                                                                 abs=6e-4)


def test_p2p_tables():
    pp = load(DATA / "p2p_pingpong.json")
    t = tables.p2p_tables(pp)
    assert t[0].headers[0] == "Size (B)" and len(t[0].rows) == len(pp.results)
    assert float(t[0].rows[0][2]) == pytest.approx(pp.results[0]["latency"]["median"] * 1e6, abs=0.006)
    fit = t[-1]
    assert fit.rows[0][2] == "0.400" and fit.rows[1][3] == "10000.0" and "8192" in fit.caption
    lg = tables.p2p_tables(load(DATA / "p2p_loggp.json"))
    assert lg[1].rows[0][:4] == ["0.300", "0.200", "0.250", "0.500"] and lg[1].rows[0][4] == "0.1000"
    assert "warning:" in lg[1].caption
    dt = tables.p2p_tables(load(DATA / "p2p_datatype.json"))
    assert {r[4] for r in dt[0].rows} == {"yes", "no"} and dt[1].rows[0][0] == "0.5000"
    for mode in ("bw", "ring"):
        assert tables.p2p_tables(load(DATA / f"p2p_{mode}.json"))[0].rows


@pytest.mark.parametrize("name", ["p2p_nbc", "p2p_nbc_pencil"])
def test_nbc_tables_are_osus_means(name):
    run = load(DATA / f"{name}.json")
    made = tables.p2p_tables(run)
    ops = list(dict.fromkeys(r["op"] for r in run.results))
    assert len(made) == len(ops)
    pencil = name.endswith("pencil")
    lead = 2 if pencil else 1
    for t, op in zip(made, ops):
        rows = [r for r in run.results if r["op"] == op]
        assert len(t.rows) == len(rows)
        unit = t.headers[lead + 1].split("(")[1].rstrip(")")
        assert t.headers[-1] == "overlap (%)" and "max(0, 100 - (overall - compute) / pure comm" in t.caption
        assert "Open MPI has no progress thread" in t.caption
        for cells, r in zip(t.rows, rows):
            m = {k: r[k]["mean"] * {"ms": 1e3, "us": 1e6, "s": 1}[unit] for k in
                 ("blocking", "pure_comm", "compute", "test", "init", "wait", "overall")}
            if pencil:
                assert cells[:2] == ["x".join(map(str, r["grid"])), str(r["size"])]
            else:
                assert cells[0] == str(r["size"])
            assert cells[lead] == str(r["tests"])
            want = [m["blocking"], m["pure_comm"], m["compute"] - m["test"], m["init"], m["test"], m["wait"],
                    m["overall"]]
            assert [float(c) for c in cells[lead + 1:-1]] == pytest.approx(want, abs=0.006)
            assert float(cells[-1]) == pytest.approx(r["overlap"], abs=0.051)
    if pencil:
        assert made[0].title.endswith("x_to_y transpose on 2x2 pencils (MPI_Ialltoallv over 2 ranks)")
        assert made[0].headers[:2] == ["grid", "Bytes"]


def test_nbc_default_ranks():
    from checkmpi.grid import physical_cores
    from checkmpi.jobs import _p2p_ranks

    assert _p2p_ranks("nbc", ["--pencil", "2x4", "-c"]) == 8
    assert _p2p_ranks("nbc", ["--pencil=3x2"]) == 6
    assert _p2p_ranks("nbc", ["-m", "4:64"]) == max(2, physical_cores())
    assert _p2p_ranks("pingpong", ["--pencil", "2x4"]) == 2


def test_context_rows_say_what_ran_where():
    rows = dict(tables.context_rows(load(DATA / "halo_all_steps.json")))
    assert rows["MPI library"].startswith("Open MPI")
    assert rows["ranks"] == "4 on 1 node(s), at most 4 per node"
    assert rows["backend / GPU-aware MPI"] == "host (no GPU)"
    assert rows["OpenMP threads per rank"] == "1"
    p2p = dict(tables.context_rows(load(DATA / "p2p_pingpong.json")))
    assert p2p["placement"] == "same node"


def test_pick_unit():
    assert tables.pick_unit(2.0) == ("s", 1.0)
    assert tables.pick_unit(0.002) == ("ms", 1e3)
    assert tables.pick_unit(2e-6) == ("us", 1e6)


# ---- export -------------------------------------------------------------------------------------------


def test_csv_has_one_row_per_run_strategy_timer_statistic():
    runs = [load(DATA / "halo_4ranks.json"), load(DATA / "halo_all_steps.json")]
    rows = list(csv.DictReader(io.StringIO(export.to_csv(runs))))  # type: ignore[arg-type]
    assert len(rows) == (3 + 10) * len(HALO_TIMERS) * 3
    doc = _halo_doc()
    row = next(r for r in rows if r["file"].endswith("halo_4ranks.json") and r["strategy"] == "step1"
               and r["timer"] == "x" and r["stat"] == "mean")
    assert float(row["seconds"]) == doc["results"][1]["timers"]["x"]["mean"]
    assert float(row["seconds_per_step"]) == pytest.approx(float(row["seconds"]) / 40)
    assert row["nprocs"] == "4" and row["proc_x"] == "2" and row["l"] == "16" and row["valid"] == "true"


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


# ---- executables and launchers ------------------------------------------------------------------------


def _fake_tool(folder: Path, name: str = "checkmpi-halo") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return exe


def test_find_executable_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(_fake_tool(tmp_path / "onpath").parent))
    monkeypatch.delenv("CHECKMPI_BIN", raising=False)
    assert native.find_executable("checkmpi-halo").source == "PATH"
    _fake_tool(tmp_path / "build" / "bin")
    assert native.find_executable("checkmpi-halo").source == "./build/bin"
    monkeypatch.setenv("CHECKMPI_BIN", str(_fake_tool(tmp_path / "env").parent))
    assert native.find_executable("checkmpi-halo").source == f"CHECKMPI_BIN {tmp_path / 'env'}"
    found = native.find_executable("checkmpi-halo", str(_fake_tool(tmp_path / "opt").parent))
    assert found.source.startswith("--bin") and found.path == tmp_path / "opt" / "checkmpi-halo"


def test_find_executable_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CHECKMPI_BIN", raising=False)
    with pytest.raises(CheckmpiError, match="looked in ./build/bin and on PATH"):
        native.find_executable("checkmpi-halo")
    with pytest.raises(CheckmpiError, match="not found in --bin directory"):
        native.find_executable("checkmpi-halo", str(tmp_path))
    monkeypatch.setenv("CHECKMPI_BIN", str(tmp_path / "empty"))
    with pytest.raises(CheckmpiError, match="not found in CHECKMPI_BIN directory"):
        native.find_executable("checkmpi-halo")


def test_launcher_flavor_from_version_text():
    assert native._version_flavor("mpirun (Open MPI) 4.1.4") == "openmpi"
    assert native._version_flavor("HYDRA build details:\n    Version: 4.0.2") == "mpich"
    assert native._version_flavor("srun 23.02") == "unknown"


def test_mpi_command_flags(monkeypatch):
    monkeypatch.setattr(native, "physical_cores", lambda: 2)
    monkeypatch.delenv("OMPI_ALLOW_RUN_AS_ROOT", raising=False)
    ompi = native.Launcher("/usr/bin/mpirun", "openmpi")
    cmd, env = native.mpi_command(ompi, 2, ["tool"])
    assert cmd == ["/usr/bin/mpirun", "-n", "2", "tool"]
    cmd, env = native.mpi_command(ompi, 8, ["tool"])
    assert "--oversubscribe" in cmd
    if os.geteuid() == 0:
        assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    cmd, env = native.mpi_command(native.Launcher("/usr/bin/mpiexec.mpich", "mpich"), 8, ["tool"])
    assert cmd == ["/usr/bin/mpiexec.mpich", "-n", "8", "tool"] and "OMPI_ALLOW_RUN_AS_ROOT" not in env


def test_progress_pattern_matches_halo_output():
    text = "[1/3] step0 (sendrecv-dtype) ... 0.004 s, valid\n[2/3] step1 (sendrecv-packx) ..."
    found = [m.groups() for m in native.PROGRESS.finditer(text)]
    assert found == [("1", "3", "step0", "sendrecv-dtype"), ("2", "3", "step1", "sendrecv-packx")]


def test_predicted_vs_measured_table():
    from checkmpi import model as M

    run = load(DATA / "halo_11_strategies.json")
    model = M.message_model([load(DATA / "p2p_pingpong.json")])
    predictions = M.predict(M.case_of(run), M.select_strategies("all"), model, 10e9)
    table = tables.predicted_vs_measured_table(run, predictions, model, (10e9, "test"))
    assert len(table.rows) == 11
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[table.headers[1].split("(")[1].rstrip(")")]
    doc = json.loads((DATA / "halo_11_strategies.json").read_text())
    entry, row, pred = doc["results"][7], table.rows[7], predictions[7]
    t, steps = entry["timers"], entry["steps"]
    assert row[0] == "step7 isend-irecv"
    assert float(row[1]) == pytest.approx(pred.exchange * scale, abs=6e-4)
    assert float(row[2]) == pytest.approx(t["comm"]["mean"] / steps * scale, abs=6e-4)
    measured = (t["loop"]["mean"] - t["diag"]["mean"]) / steps
    assert float(row[4]) == pytest.approx(measured * scale, abs=6e-4)
    assert float(row[5]) == pytest.approx(pred.total / measured, abs=0.006)
