"""Campaigns with the local executor, end to end with the real tools: the
issue's spec interrupted halfway and resumed, its records, status and report,
and runs that crash, hit the submission's time limit or never start."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from campaign_helpers import (check_record, interrupt, leftover_processes, records, rendered_table, start,
                              validate_report, wait_for_records)
from conftest import REPO, assert_clean_error, checkmpi
from test_commands import check_html, check_plots

SPEC = REPO / "examples" / "campaign-tiny.toml"
TIMEOUT = 300  # seconds for a whole campaign of the spec (about 30 here)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, halo_bin) -> dict:
    """The issue's spec, run with the local executor, killed (SIGTERM) after 7 runs and run again."""
    folder = tmp_path_factory.mktemp("tiny") / "campaign"
    proc = start("campaign", "run", str(SPEC), "--dir", str(folder), "--bin", str(halo_bin))
    wait_for_records(folder, 7, proc, TIMEOUT)
    for _ in range(20):  # between two runs none is running: ask again
        status = checkmpi("campaign", "status", str(folder), timeout=60)
        if " 1 running," in status.stdout:
            break
        time.sleep(0.1)
    locked = checkmpi("campaign", "run", str(SPEC), "--dir", str(folder), "--bin", str(halo_bin), timeout=60)
    code, _, err = interrupt(proc)
    before = {p.name: p.read_bytes() for p in (folder / "runs").glob("*.json")}
    orphans = leftover_processes(folder)
    second = checkmpi("campaign", "run", str(SPEC), "--dir", str(folder), "--bin", str(halo_bin), timeout=TIMEOUT)
    return {"folder": folder, "code": code, "err": err, "before": before, "orphans": orphans, "second": second,
            "status": status, "locked": locked}


def test_report_page_fits_the_screen(tiny, tmp_path):
    """The campaign's HTML report in Chromium at 1400 and 800 px: no table cell or figure overflows its box."""
    from browser import check_page

    assert tiny["second"].returncode == 0, tiny["second"].stderr
    wide, narrow = check_page(tiny["folder"] / "report.html", "campaign", tmp_path)
    assert wide["figures"] == narrow["figures"] == 4  # scale-up, two variability plots, failure matrix
    assert wide["tables"] >= 12


def test_while_it_runs(tiny):
    assert re.search(r"\d+ done, 1 running, 0 failed, \d+ pending of 20 runs", tiny["status"].stdout)
    assert_clean_error(tiny["locked"], 1, "another 'checkmpi campaign run' is working on")


def test_interrupted_campaign_leaves_whole_records_and_no_job(tiny):
    assert tiny["code"] == 130, tiny["err"]
    assert "checkmpi: interrupted" in tiny["err"]
    assert 7 <= len(tiny["before"]) < 20
    for text in tiny["before"].values():
        assert json.loads(text)["status"] == "ok"  # whole files, every one of a finished run
    assert not list((tiny["folder"] / "runs").glob("**/*.tmp.*"))
    assert tiny["orphans"] == []  # the MPI job in flight was stopped with the campaign


def test_resume_finishes_without_redoing_finished_runs(tiny):
    second, folder = tiny["second"], tiny["folder"]
    assert second.returncode == 0, second.stderr
    assert f"{len(tiny['before'])} of 20 runs done already; {20 - len(tiny['before'])} to do" in second.stderr
    for name, text in tiny["before"].items():
        assert (folder / "runs" / name).read_bytes() == text  # untouched
    recs = records(folder)
    assert len(recs) == 20 and all(r["status"] == "ok" and r["attempt"] == 1 for r in recs.values())
    assert len(re.findall(r"^checkmpi: \[\s*\d+/20\] s\d-\S+: ok in", second.stderr, re.M)) == 20 - len(tiny["before"])
    assert not list((folder / "runs").glob("*.running"))


def test_records(tiny):
    folder = tiny["folder"]
    recs = records(folder)
    for rec in recs.values():
        check_record(folder, rec)
        assert rec["launch"]["executor"] == "local" and rec["launch"]["launcher"] == "mpirun"
        assert Path(rec["command"][0]).name == "mpirun" and "--tag-output" in rec["command"]
        assert rec["command"][rec["command"].index("-n") + 1] == str(rec["point"]["np"])
        assert rec["slurm"] is None and rec["nodes"] and rec["hostnames"]
        expected = rec["expected"]
        assert expected["limit_s"] == pytest.approx(max(5.0 * expected["seconds"], 60.0))
        if rec["submission"] == 1:  # no run of its point had finished yet: the model
            assert expected["kind"] == "predict" and "checkmpi predict from p2p/pingpong.json" in expected["source"]
        else:  # the first submission's run of the same point and strategy
            first = recs[rec["run"].replace("s2-", "s1-", 1)]
            assert expected["kind"] == "run" and first["run"] in expected["source"]
            assert expected["seconds"] == first["elapsed_s"]
    pp = json.loads((folder / "p2p" / "pingpong.record.json").read_text())
    assert pp["error"] is None and pp["exit_code"] == 0 and 0 <= pp["launch_s"] <= pp["seconds"]
    assert json.loads((folder / "p2p" / "pingpong.json").read_text())["mode"] == "pingpong"


def test_status(tiny):
    r = checkmpi("campaign", "status", str(tiny["folder"]), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "20 done, 0 running, 0 failed, 0 pending of 20 runs" in r.stdout
    rows = rendered_table(r.stdout, "Campaign")
    assert len(rows) == 20 and all(row[1] == "done" and row[2] == "1" for row in rows)


def test_report_never_writes_over_the_campaigns_own_files(tiny, tmp_path):
    """--json or --html naming a run record or campaign.json once wrote over it (exit 0) and broke the folder."""
    folder = tiny["folder"]
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    record = sorted((folder / "runs").glob("*.json"))[0]
    for option, target in (("--json", record), ("--html", folder / "campaign.json")):
        r = checkmpi("campaign", "report", str(folder), option, str(target), timeout=120)
        assert_clean_error(r, 2, f"{option} '{target}' is one of the campaign's own files; write the report "
                           "elsewhere")
    r = checkmpi("campaign", "report", str(folder), "--json", str(tmp_path / "r"), "--html", str(tmp_path / "./r"),
                 timeout=120)
    assert_clean_error(r, 2, f"--json and --html name the same file '{tmp_path / 'r'}'")
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_report_tables_json_html(tiny, tmp_path):
    folder = tiny["folder"]
    r = checkmpi("campaign", "report", str(folder), "--json", str(tmp_path / "r.json"), "--html",
                 str(tmp_path / "r.html"), "--plots", str(tmp_path / "plots"), timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    validate_report(doc)
    assert doc["counts"]["ok"] == 20 and doc["counts"]["runs"] == 20 and doc["counts"]["retried_runs"] == 0
    assert "20/20 runs ok; 0 invalid, 0 too slow, 0 crashed, 0 not started, 0 pending" in doc["summary"]
    assert "2/2 submissions (100%) ran every point correctly, regardless of time" in doc["summary"]
    recs = records(folder)
    loops = {}
    for run in doc["runs"]:  # every number from the run's own results
        halo = json.loads((folder / recs[run["run"]]["results"]).read_text())["results"][0]["timers"]
        assert run["loop_s"] == halo["loop"]["max"]
        assert run["mpi_percent"] == pytest.approx(100 * halo["comm"]["max"] / halo["loop"]["max"])
        loops[run["run"]] = run["loop_s"]
    for stat in doc["stats"]:
        values = [loops[f"s{k}-{stat['point']}-{stat['strategy']}"] for k in (1, 2)]
        assert (stat["n"], stat["max_s"], stat["min_s"]) == (2, max(values), min(values))
        assert stat["ratio"] == pytest.approx(max(values) / min(values))

    # Table 5 in the terminal: the same loop times, in the table's unit.
    title = "Loop time ("
    lines = [line for line in r.stdout.splitlines() if line.strip().startswith(title) and "step2, grid 2x1x1" in line]
    unit = re.search(r"Loop time \((s|ms|us)\)", lines[0]).group(1)
    rows = rendered_table(r.stdout, lines[0].strip())
    scale = {"s": 1, "ms": 1e3, "us": 1e6}[unit]
    assert [row[0] for row in rows] == ["s1", "s2"]
    for k, row in enumerate(rows, start=1):
        for size, cell in zip(("32x32x32", "48x48x48"), row[1:3]):
            assert float(cell) == pytest.approx(loops[f"s{k}-2x1x1-{size}-step2"] * scale, rel=6e-4)  # 4 digits
        assert row[3] == "-"  # no note
    scale_rows = rendered_table(r.stdout, "Scale-up, 16x16x16 per rank")
    assert [row[:2] for row in scale_rows] == [["1", "1x1x1"], ["2", "2x1x1"], ["4", "2x2x1"]]
    assert scale_rows[0][3] == "100%" and scale_rows[0][5] == "100%"

    pngs = check_plots(tmp_path / "plots", ["scaleup-sweep2", "variability-sweep1", "variability-sweep2",
                                            "failure-matrix"])
    html = check_html(tmp_path / "r.html", pngs)
    for text in ("checkmpi campaign: tiny", "Scale-up, 16x16x16 per rank", "ratio = max / min",
                 "MPI %, step7, grid 2x1x1", "20/20 runs ok"):
        assert text in html, text


def _spec(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'[campaign]\nname = "{name}"\n{body}')
    return path


def test_crashed_runs_keep_each_ranks_errors_and_are_retried(tmp_path, halo_bin):
    # An error injected into a strategy the run does not run: checkmpi-halo's plan takes it (the campaign's check
    # of [halo] args passes), the run refuses it: a real crash (exit code 2).
    spec = _spec(tmp_path, "crash", '[halo]\nstrategies = ["step2"]\nitfin = 10\nargs = ["--inject-error", "step9"]\n'
                 '[[sweep]]\nprocs = "2x1x1"\nsize = "16x8x8"\n')
    folder = tmp_path / "c"  # given relative to the working directory
    r = checkmpi("campaign", "run", str(spec), "--dir", "c", "--bin", str(halo_bin), cwd=tmp_path, timeout=TIMEOUT)
    assert_clean_error(r, 1, "1 of 1 runs are not ok")
    rec = records(folder)["s1-2x1x1-16x8x8-step2"]
    check_record(folder, rec)
    assert rec["status"] == "crashed" and rec["exit_code"] == 2 and rec["note"] == "exit code 2"
    assert any("checkmpi-halo: error:" in line and "'step9'" in line for line in rec["errors"]["0"])
    assert re.search(r"\[1/1\] s1-2x1x1-16x8x8-step2: crashed in [0-9.]+ s .*: exit code 2", r.stderr)

    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), timeout=TIMEOUT)
    assert r.returncode == 1
    rec = records(folder)["s1-2x1x1-16x8x8-step2"]
    assert rec["attempt"] == 2 and rec["previous"][0]["status"] == "crashed"
    assert rec["previous"][0]["errors"]["0"]
    r = checkmpi("campaign", "report", str(folder), "--json", str(tmp_path / "r.json"), timeout=120)
    doc = json.loads((tmp_path / "r.json").read_text())
    validate_report(doc)
    assert doc["counts"]["crashed"] == 1 and doc["counts"]["retried_runs"] == 1 and doc["counts"]["attempts"] == 2
    assert "runs retried: 1 (2 attempts in all)" in doc["summary"]
    rows = rendered_table(r.stdout, "Loop time")
    assert rows == [["s1", "n.a.", "a"]]
    notes = rendered_table(r.stdout, "Notes: runs that did not end ok")
    assert notes[0] == ["a", "s1-2x1x1-16x8x8-step2", "crashed", "exit code 2"]
    assert any("rank 0: checkmpi-halo: error:" in row[-1] for row in notes[1:])


def test_submission_time_limit_stops_a_run_and_the_rest_never_start(tmp_path, halo_bin):
    # Submission 1 has time; submission 2 (no ping-pong left to run) stops its first run after
    # 3 s, about half of it (40000 steps of 64^3 take 6 to 7 s here with the one-pass kernels),
    # and never starts the second.
    spec = _spec(tmp_path, "limit", 'repetitions = 2\n[launch]\ntime_limit_s = [300, 3]\n'
                 '[halo]\nstrategies = ["step2"]\nitfin = 40000\n[[sweep]]\nlocal = "64x64x64"\nnp = 1\n'
                 '[[sweep]]\nprocs = "1x1x1"\nsize = "8x8x8"\n')
    folder = tmp_path / "l"
    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), timeout=TIMEOUT)
    assert r.returncode == 1, r.stderr
    recs = records(folder)
    first, second = recs["s2-1x1x1-64x64x64-step2"], recs["s2-1x1x1-8x8x8-step2"]
    assert [recs[n]["status"] for n in ("s1-1x1x1-64x64x64-step2", "s1-1x1x1-8x8x8-step2")] == ["ok", "ok"]
    assert recs["s1-1x1x1-64x64x64-step2"]["elapsed_s"] > 3
    assert first["status"] == "too_slow" and "stopped at the submission's time limit (3 s)" in first["note"]
    assert first["elapsed_s"] < 10 and first["results"] is None
    assert "checkmpi-halo 0" in (folder / first["log"]).read_text()  # it had started
    assert second["status"] == "not_started" and "time limit (3 s) was reached before" in second["note"]
    assert leftover_processes(folder) == []
    for _ in range(20):  # between two runs none is running: ask again
        status = checkmpi("campaign", "status", str(folder), timeout=60)
        if " 1 running," in status.stdout:
            break
        time.sleep(0.1)
    assert [row[1] for row in rendered_table(status.stdout, "Campaign")] == ["done", "done", "failed (too_slow)",
                                                                             "failed (not_started)"]


def test_spec_must_not_change_under_a_campaign(tmp_path, halo_bin):
    folder = tmp_path / "d"
    folder.mkdir()
    spec = _spec(tmp_path, "one", '[[sweep]]\nlocal = "8x8x8"\nnp = 1\n')
    from checkmpi.campaign.records import CampaignDir
    from checkmpi.campaign.spec import load_spec

    CampaignDir(folder).create_or_check(load_spec(spec))
    other = _spec(tmp_path, "one", '[[sweep]]\nlocal = "8x8x8"\nnp = 2\n')
    r = checkmpi("campaign", "run", str(other), "--dir", str(folder), "--bin", str(halo_bin), timeout=60)
    assert_clean_error(r, 2, "made from a different spec")
    shutil.rmtree(folder)


def test_a_launcher_that_cannot_start_records_the_run_not_started(tmp_path, halo_bin, monkeypatch):
    """The launcher's exec failing (once: 'Argument list too long') left the run's marker, and the campaign called
    the run interrupted: it is recorded not started, with the reason, and no marker stays."""
    from checkmpi import native
    from checkmpi.campaign.cli import _executables
    from checkmpi.campaign.execute import execute
    from checkmpi.campaign.launch import resolve_launch
    from checkmpi.campaign.plan import plan
    from checkmpi.campaign.records import CampaignDir
    from checkmpi.campaign.spec import load_spec
    from checkmpi.errors import EXIT_FAILED, CheckmpiError

    spec = load_spec(_spec(tmp_path, "e2big", '[halo]\nstrategies = ["step2"]\nitfin = 2\n'
                           '[[sweep]]\nlocal = "8x8x8"\nnp = [1]\n'), str(halo_bin))
    cdir = CampaignDir(tmp_path / "c")
    cdir.create_or_check(spec)
    halo, p2p = _executables(str(halo_bin))

    real_run = native.Job.run

    def cannot_start(self, *args, **kwargs):  # the halo run's launch; the ping-pong that sizes its limit runs
        if Path(self.argv[0]).name != "checkmpi-halo":
            return real_run(self, *args, **kwargs)
        raise CheckmpiError("cannot start /usr/bin/mpirun: Argument list too long", EXIT_FAILED)

    monkeypatch.setattr(native.Job, "run", cannot_start)
    run = plan(spec)[0]
    rec = execute(cdir, spec, run, halo, p2p, resolve_launch(spec, halo.path), None)
    assert rec["status"] == "not_started" and rec["note"] == "cannot start /usr/bin/mpirun: Argument list too long"
    assert cdir.marker(run.id) is None and cdir.read_record(run.id)["status"] == "not_started"
