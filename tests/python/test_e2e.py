"""End to end: `checkmpi run` / `p2p` launching the real native tools at small
sizes (2 to 8 ranks), with every number in the tables checked against the JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BUILD_BIN, DATA, MPICH_BIN, UNIT, assert_clean_error, checkmpi
from checkmpi.results import schema_validator
from test_commands import check_html, check_plots
from test_tables import check_vs_best

LIMIT = ["--timeout", "180"]  # checkmpi's own bound on each MPI job


def halo_rows(stdout: str, stem: str, ids: set[str]) -> tuple[float, dict[str, list[str]]]:
    """(unit scale, {strategy id: cells}) from the rendered halo table of the run `stem`."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(stem + ":"))
    header = next(i for i in range(start, len(lines)) if lines[i].startswith("strategy "))
    unit = re.search(r"time\s+per\s+step\s+in\s+(\w+)", " ".join(lines[start:header])).group(1)
    rows: dict[str, list[str]] = {}
    for line in lines[header + 2:]:
        if not line.split() or line.split()[0] not in ids:
            break
        # No cell of the 80-column table holds a space (its labels are the ids), and where the numbers fill
        # the width one space may be all that parts two columns.
        cells = line.split()
        rows[cells[0]] = cells[1:]
    return UNIT[unit], rows


def check_table_against_json(stdout: str, json_path: Path) -> None:
    """Every number of the terminal's halo table is the JSON's, and every line fits 80 columns."""
    doc = json.loads(json_path.read_text())
    scale, rows = halo_rows(stdout, json_path.stem, {e["strategy"] for e in doc["results"]})
    assert sorted(rows) == sorted(e["strategy"] for e in doc["results"])
    for entry in doc["results"]:
        median, ci, vs, tail, x, y, z, verdict = rows[entry["strategy"]]
        d = entry["step_time"]
        assert float(median) == pytest.approx(d["median"] * scale, abs=6e-3)
        lo, hi = map(float, ci.split("-"))
        assert (lo, hi) == pytest.approx((d["median_ci"][0] * scale, d["median_ci"][1] * scale), rel=5e-3, abs=6e-3)
        check_vs_best(vs, entry, doc["fastest_group"])
        assert float(tail.rstrip("!")) == pytest.approx(d["p95"] / d["median"], rel=5e-3, abs=6e-3)
        for cell, direction in zip((x, y, z), "xyz"):  # four characters: 2, 1 or no decimals; null: "-"
            bandwidth = entry["directions"][direction]["bandwidth"]["min"]
            if bandwidth is None:
                assert cell == "-"
                continue
            assert float(cell) == pytest.approx(bandwidth / 1e9, rel=5e-3, abs=6e-3)
        assert verdict == ("valid" if entry["valid"] else "INVALID")
    assert max(len(line) for line in stdout.splitlines()) <= 80


@pytest.fixture(scope="module")
def real_run(tmp_path_factory, halo_bin) -> tuple[Path, object]:
    """One real 2-rank run of every strategy, shared by the tests that read it."""
    folder = tmp_path_factory.mktemp("real")
    json_path = folder / "two.json"
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "20", "--no-report",
                 "--json", str(json_path), *LIMIT, cwd=folder)
    return json_path, r


def test_run_prints_the_json_numbers(real_run):
    json_path, r = real_run
    assert r.returncode == 0, r.stderr
    check_table_against_json(r.stdout, json_path)
    doc = json.loads(json_path.read_text())
    assert doc["config"]["l"] == 8 and doc["config"]["itfin"] == 20 and doc["context"]["nprocs"] == 2
    assert [e["strategy"] for e in doc["results"]][:3] == ["step0", "step1", "step2"]
    assert "found via --bin" in r.stderr and "launcher" in r.stderr
    for e in doc["results"]:  # the progress line names each strategy as it starts
        assert re.search(rf"\[\d+/\d+\] .*{e['strategy']} \({e['catalog']['alias']}\)", r.stderr)
    outdir = json_path.with_suffix("")
    assert (outdir / "step0" / "task.000000.log").exists() and (outdir / "checkmpi-halo.log").exists()


def test_report_and_export_of_a_real_run(real_run, tmp_path):
    json_path, _ = real_run
    r = checkmpi("report", str(json_path), str(DATA / "p2p_pingpong.json"), "--plots", str(tmp_path / "p"),
                 "--html", str(tmp_path / "r.html"), timeout=120)
    assert r.returncode == 0, r.stderr
    check_table_against_json(r.stdout, json_path)
    # The ranking in the words checkmpi-halo printed (its stdout, kept in the run's log), read from the JSON: the
    # fastest alone, or the group tied with it (at 20 steps a run of every strategy often has one).
    said = next(line for line in (json_path.with_suffix("") / "checkmpi-halo.log").read_text().splitlines()
                if line.startswith("fastest: ") or " are tied within " in line)
    headline = " ".join(r.stdout.split("Headline: ", 1)[1].split("\n\n", 1)[0].split())
    assert headline.startswith("two: " + said.replace("fastest: ", "fastest ", 1) + "; "), (headline, said)
    assert "two: where the time goes, predicted vs measured" in " ".join(r.stdout.split())
    pngs = check_plots(tmp_path / "p", ["two-breakdown", "two-directions", "two-predicted", "p2p_pingpong-pingpong"])
    check_html(tmp_path / "r.html", pngs)
    r = checkmpi("export", "--format", "csv", str(json_path))
    doc = json.loads(json_path.read_text())
    rows = sum(len(e["timers"]) * 3 + 6 for e in doc["results"])  # every timer's min, mean, max; step time
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1 + rows


def test_run_four_ranks_writes_report(halo_bin, tmp_path):
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "4", "--procs", "2x2x1", "--size", "16x16x8", "--iters", "10",
                 *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [json_path] = (tmp_path / "results").glob("halo-*.json")  # the default: timestamped under results/
    check_table_against_json(r.stdout, json_path)
    doc = json.loads(json_path.read_text())
    assert doc["context"]["dims"] == [2, 2, 1] and doc["config"]["lx"] == 16
    run_dir = json_path.with_suffix("")
    pngs = check_plots(run_dir / "plots", [f"{json_path.stem}-breakdown", f"{json_path.stem}-directions"])
    check_html(run_dir / "report.html", pngs)


def test_run_eight_ranks(halo_bin, tmp_path):
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "8", "--local", "8x8x8", "--iters", "10", "--strategy",
                 "step2", "--no-report", "--json", "eight.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "eight.json").read_text())
    assert doc["context"]["dims"] == [2, 2, 2] and doc["config"]["lx"] == 16
    assert [e["strategy"] for e in doc["results"]] == ["step2"]
    check_table_against_json(r.stdout, tmp_path / "eight.json")


def test_main_job_with_no_arguments(halo_bin, tmp_path):
    """`checkmpi run` alone: all cores, automatic sizes, about half a minute, a report."""
    start = time.monotonic()
    r = checkmpi("run", cwd=tmp_path, env={"CHECKMPI_BIN": str(halo_bin)}, timeout=400)
    elapsed = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    assert "found via CHECKMPI_BIN" in r.stderr and "calibration:" in r.stderr
    [json_path] = (tmp_path / "results").glob("halo-*.json")
    doc = json.loads(json_path.read_text())
    from checkmpi.grid import physical_cores

    assert doc["context"]["nprocs"] == physical_cores()
    assert doc["config"]["strategies"] == ["all"] and doc["config"]["itfin"] >= 10
    steps = int(re.search(r"(\d+) steps in each of 3 launches for about 30 s", r.stderr).group(1))
    assert doc["config"]["itfin"] == steps and doc["config"]["launches"] == 3
    check_table_against_json(r.stdout, json_path)
    assert (json_path.with_suffix("") / "report.html").exists()
    # About half a minute on an idle machine; shared CI machines get slack.
    assert elapsed < 300, elapsed
    check_quickstart_page(json_path.with_suffix("") / "report.html", doc, tmp_path)


def check_quickstart_page(page: Path, doc: dict, work: Path) -> None:
    """The quick start's report in Chromium at 1400 and 800 px: nothing overflows; the wide results table
    scrolls in its own box at 800 px with the strategy column staying; the noise markers are there."""
    from browser import check_page

    wide, narrow = check_page(page, "quickstart", work)
    assert (wide["tables"], wide["figures"]) == (2, 2)  # context and results; breakdown and directions
    assert narrow["scrolling"] == 1  # the results table, in its box
    text = page.read_text()
    noisy = [e["strategy"] for e in doc["results"] if e["noise"]]
    assert text.count('class="noisy"') == len(noisy)
    for sid in noisy:
        assert f"warning: {sid} is noisy: " in text


def test_calibration_targets_the_budget(halo_bin, tmp_path):
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--budget", "4", "--no-report",
                 "--json", "cal.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    steps = int(re.search(r"(\d+) steps in each of 3 launches for about 4 s", r.stderr).group(1))
    config = json.loads((tmp_path / "cal.json").read_text())["config"]
    assert config["itfin"] == steps >= 10 and config["launches"] == 3


def test_launches_are_ranked_together(halo_bin, tmp_path):
    """--launches N: N launches of checkmpi-halo keep their samples in the run's folder (a stale file there
    from an earlier run is replaced, not refused); the JSON ranks all of them; the log has every launch."""
    (tmp_path / "l").mkdir()
    (tmp_path / "l" / "samples.json").write_text('{"schema": "checkmpi.samples/1", "stale": true}')
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "20", "--strategy",
                 "step2,step7", "--launches", "2", "--no-report", "--json", "l.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "l.json").read_text())
    assert doc["config"]["launches"] == 2 and doc["config"]["samples"] == "l/samples.json"
    assert all(len(e["launch_medians"]) == 2 for e in doc["results"])
    samples = json.loads((tmp_path / "l" / "samples.json").read_text())
    assert len(samples["launches"]) == 2 and samples["launches"][0]["seed"] != samples["launches"][1]["seed"]
    log = (tmp_path / "l" / "checkmpi-halo.log").read_text()
    assert "samples of 1 launch in " in log and "samples of 2 launches in " in log
    assert "20 steps x 2 launches" in " ".join(r.stdout.split())
    # --iters alone: one launch, as CheckMPI.
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "20", "--strategy",
                 "step2", "--no-report", "--json", "one.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "one.json").read_text())
    assert doc["config"]["launches"] == 1 and doc["config"]["samples"] is None
    assert not (tmp_path / "one" / "samples.json").exists()
    for bad in ("0", "101"):
        r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--launches", bad, *LIMIT,
                     cwd=tmp_path)
        assert_clean_error(r, 2, f"--launches must be 1 to 100, got {bad}")


def test_pass_through_options(halo_bin, tmp_path):
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "6", "--precision",
                 "double", "--warmup", "2", "--reverse", "--strategy", "sendrecv-pack", "--no-report", "--json",
                 "p.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    config = json.loads((tmp_path / "p.json").read_text())["config"]
    assert (config["precision"], config["warmup"], config["reverse"]) == ("double", 2, True)


def test_native_tool_failure_shows_code_and_stderr(halo_bin, tmp_path):
    """A refusal only the run itself makes (a test hook naming no strategy it runs) comes back with the tool's
    exit code and its own line."""
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "5", "-s", "step0",
                 "--inject-error", "step9", "--no-report", *LIMIT, cwd=tmp_path)
    assert_clean_error(r, 1, "checkmpi-halo failed with exit code 2",
                       "--inject-error: 'step9' is not the id of a strategy this run runs")


def test_bad_tool_option_is_refused_before_any_launch(halo_bin, tmp_path):
    """checkmpi-halo's own plan of the run reads every option it passes on: a wrong one is a usage error (exit 2,
    the tool's line) before any MPI job starts or any file is written."""
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "5", "--bogus-option",
                 "--no-report", *LIMIT, cwd=tmp_path)
    assert_clean_error(r, 2, "unknown option '--bogus-option' (see checkmpi-halo --help)")
    assert "running:" not in r.stderr and not list(tmp_path.iterdir())


def test_validation_failure_still_reports(halo_bin, tmp_path):
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "5", "--inject-error",
                 "step1", "--no-report", "--json", "v.json", *LIMIT, cwd=tmp_path)
    assert_clean_error(r, 3, "validation failed for step1")
    ids = {entry["strategy"] for entry in json.loads((tmp_path / "v.json").read_text())["results"]}
    _, rows = halo_rows(r.stdout, "v", ids)
    assert rows["step1"][-1] == "INVALID" and rows["step2"][-1] == "valid"


def test_tool_not_found(tmp_path):
    (tmp_path / "empty").mkdir()
    assert_clean_error(checkmpi("run", "--bin", str(tmp_path / "empty"), "--np", "2", cwd=tmp_path), 1,
                       "checkmpi-halo not found in --bin directory")
    r = checkmpi("run", "--np", "2", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert_clean_error(r, 1, "checkmpi-halo not found: looked in ./build/bin and on PATH")
    assert_clean_error(checkmpi("p2p", "pingpong", "--bin", str(tmp_path / "empty"), cwd=tmp_path), 1,
                       "checkmpi-p2p not found in --bin directory")


def test_timeout_stops_the_job(halo_bin, tmp_path):
    marker = tmp_path / "slow.json"
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "32x32x32", "--iters", "3000000",
                 "--no-report", "--json", str(marker), "--timeout", "3", cwd=tmp_path, timeout=120)
    assert_clean_error(r, 1, "timed out after 3 s")
    time.sleep(1)
    left = subprocess.run(["pgrep", "-f", str(marker)], capture_output=True, text=True, check=False).stdout.split()
    assert not left, f"ranks left running: {left}"


@pytest.mark.skipif(not (MPICH_BIN / "checkmpi-halo").exists(),
                    reason="build-mpich/ not built (scripts/test.sh builds it with 'setup.sh --tests')")
def test_mpich_build_gets_the_mpich_launcher(tmp_path):
    r = checkmpi("run", "--bin", str(MPICH_BIN), "--np", "2", "--local", "8x8x8", "--iters", "5", "--no-report",
                 "--json", "m.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "mpiexec.mpich" in r.stderr
    assert "MPICH" in json.loads((tmp_path / "m.json").read_text())["context"]["mpi_library"]


@pytest.mark.skipif(not (BUILD_BIN / "checkmpi-p2p").exists(),
                    reason="checkmpi-p2p is not built yet (issue 5); report/predict are tested on schema fixtures")
def test_p2p_pingpong(tmp_path):
    r = checkmpi("p2p", "pingpong", "--bin", str(BUILD_BIN), "--json", "pp.json", "-m", "1:4096", "-i", "200",
                 *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Size (B)" in r.stdout and "ping-pong" in r.stdout
    doc = json.loads((tmp_path / "pp.json").read_text())
    assert doc["schema"] == "checkmpi.p2p/2" and doc["mode"] == "pingpong"
    assert (tmp_path / "pp" / "report.html").exists()
    sizes = [1 << k for k in range(13)]  # progress per message size
    assert [int(m) for m in re.findall(r"\[\d+/13\] checkmpi-p2p pingpong on 2 ranks: (\d+) B", r.stderr)] == sizes


@pytest.mark.skipif(not (BUILD_BIN / "checkmpi-p2p").exists(), reason="checkmpi-p2p is not built")
def test_p2p_short_n_means_ranks_and_csv(tmp_path):
    r = checkmpi("p2p", "ring", "-n", "3", "--bin", str(BUILD_BIN), "--json", "ring.json", "-m", "1:64", "-i", "10",
                 "--no-report", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "ring.json").read_text())
    assert doc["context"]["nprocs"] == 3 and doc["config"]["ranks"] == [2, 3]
    r = checkmpi("export", "--format", "csv", "ring.json", cwd=tmp_path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1 + 2 * 7 * 6  # rings x sizes x statistics


def test_vocabulary_reaches_the_tools_and_their_warnings_the_user(halo_bin, tmp_path):
    """--itfin is --iters (CheckMPI's name); checkmpi-halo gets the vocabulary's names; the native tools' warning
    lines (here icheck above the steps, and an old spelling) are shown, not left in their logs."""
    r = checkmpi("run", "--bin", str(halo_bin), "-n", "2", "--local", "8x4x4", "--itfin", "6", "--icheck", "10",
                 "--strategy", "step2", "--no-report", "-o", "w.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # The size per rank goes to checkmpi-halo as given: the tool decomposes.
    assert re.search(r"running: .*checkmpi-halo --no-input --local 8x4x4 --iters 6 ", r.stderr)
    assert r.stderr.count("checkmpi-halo: warning: icheck (10) is larger than itfin (6)") == 1, r.stderr
    config = json.loads((tmp_path / "w.json").read_text())["config"]
    assert (config["itfin"], config["lx"], config["proc_x"], config["l"]) == (6, 16, 2, 8)
    r = checkmpi("p2p", "self", "--bin", str(BUILD_BIN), "-o", "s.json", "-m", "1:4", "--iterations", "3", "-x", "0",
                 "--no-report", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "checkmpi-p2p: warning: --iterations is the old spelling of --iters; it works in this release only" \
        in r.stderr.splitlines()
    assert json.loads((tmp_path / "s.json").read_text())["config"]["iterations"] == 3


@pytest.mark.skipif(not (BUILD_BIN / "checkmpi-p2p").exists(), reason="checkmpi-p2p is not built")
def test_p2p_nbc_pencil_takes_its_ranks_from_the_grid(tmp_path):
    r = checkmpi("p2p", "nbc", "--bin", str(BUILD_BIN), "--json", "nbc.json", "--pencil", "2x2", "--grid", "9x7x5",
                 "-i", "3", "-x", "1", "--progress", "0,2", "-c", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "nbc.json").read_text())
    assert doc["context"]["nprocs"] == 4 and doc["config"]["pencil"] == [2, 2] and doc["config"]["validate"]
    assert [(x["op"], x["tests"]) for x in doc["results"]] == [("x_to_y", 0), ("x_to_y", 2), ("y_to_z", 0),
                                                                ("y_to_z", 2)]
    assert "nbc: x_to_y transpose on 2x2 pencils" in r.stdout
    pngs = check_plots(tmp_path / "nbc" / "plots", ["nbc-overlap", "nbc-breakdown"])
    check_html(tmp_path / "nbc" / "report.html", pngs)


FAKE_P2P = """#!/bin/sh
# Test double for checkmpi-p2p (the real tool is built separately): rank 0
# records its arguments and writes a schema fixture to the --json path.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
[ "$rank" = 0 ] || exit 0
echo "$@" > "$(dirname "$0")/args.txt"
if [ -n "$FAIL" ]; then echo "checkmpi-p2p: error: $FAIL" >&2; exit 2; fi
while [ $# -gt 0 ]; do
  if [ "$1" = --json ]; then cp "$FIXTURE" "$2"; fi
  shift
done
"""


def _fake_p2p(folder: Path) -> Path:
    folder.mkdir()
    exe = folder / "checkmpi-p2p"
    exe.write_text(FAKE_P2P)
    exe.chmod(0o755)
    return folder


def test_p2p_command_plumbing_with_a_stand_in_tool(tmp_path):
    """`checkmpi p2p` launches MODE through MPI, passes options on, reports the JSON."""
    bin_dir = _fake_p2p(tmp_path / "bin")
    r = checkmpi("p2p", "loggp", "--bin", str(bin_dir), "--json", "lg.json", "-m", "1:65536", *LIMIT, cwd=tmp_path,
                 env={"FIXTURE": str(DATA / "p2p_loggp.json")})
    assert r.returncode == 0, r.stderr
    args = (bin_dir / "args.txt").read_text().split()
    assert args[:5] == ["loggp", "--json", "lg.json", "-m", "1:65536"]  # then --events, where the progress goes
    assert args[5] == "--events" and args[6].endswith("events.jsonl") and len(args) == 7
    fit = json.loads((DATA / "p2p_loggp.json").read_text())["fits"]["loggp"]
    assert "LogGP parameters" in r.stdout and f"{fit['o_s'] * 1e6:.3f}" in r.stdout
    pngs = check_plots(tmp_path / "lg" / "plots", ["lg-loggp"])
    check_html(tmp_path / "lg" / "report.html", pngs)
    r = checkmpi("p2p", "pingpong", "--bin", str(bin_dir), "--json", "x.json", *LIMIT, cwd=tmp_path,
                 env={"FIXTURE": str(DATA / "p2p_pingpong.json"), "FAIL": "min size > max size"})
    assert_clean_error(r, 1, "checkmpi-p2p failed with exit code 2", "checkmpi-p2p: error: min size > max size")


def test_repeat_with_a_calibrated_length(halo_bin, tmp_path):
    """Without --iters the run is sized by a short calibration of one repeat: --repeat 2 passed on as well
    once reached checkmpi-halo twice (it refuses an option given twice)."""
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--budget", "2", "--repeat", "2",
                 "--strategy", "step2", "--no-report", "--json", "rep.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "rep.json").read_text())["config"]["repeat"] == 2


def test_repeat_three_shows_medians_with_intervals(halo_bin, tmp_path):
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "30", "--repeat", "3",
                 "--strategy", "step2,step7", "--no-report", "--json", "rep.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "rep.json").read_text())
    assert doc["config"]["repeat"] == 3
    for e in doc["results"]:
        assert e["runs"] == 3 and e["steps"] == 90 and len(e["repeat_medians"]) == 3
        assert e["step_time"]["n"] == 3 * 2 * 30 and e["step_time"]["median_ci"] is not None
    # 3 runs of 3 rounds (10 steps each), every round both strategies, in a shuffled order.
    order = re.findall(r"\[(\d+)/18\] checkmpi-halo on 2 ranks: (step\d)", r.stderr)
    assert [int(k) for k, _ in order] == list(range(1, 19)), order
    assert all({order[k][1], order[k + 1][1]} == {"step2", "step7"} for k in range(0, 18, 2)), order
    check_table_against_json(r.stdout, tmp_path / "rep.json")
    rounds = doc["config"]["rounds"]
    assert f"time per step over ranks, steps, {rounds} round{'s' if rounds > 1 else ''} and 3 runs" in " ".join(
        r.stdout.split())


def test_run_at_80_columns(halo_bin, tmp_path):
    """COLUMNS=80: nothing checkmpi prints is wider, and no number is cut."""
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "10", "--no-report",
                 "--json", "narrow.json", *LIMIT, cwd=tmp_path, env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    for stream in (r.stdout, r.stderr):
        assert max(len(line) for line in stream.splitlines()) <= 80, stream
    assert "\u2026" not in r.stdout
    check_table_against_json(r.stdout, tmp_path / "narrow.json")


def test_run_reads_file_input_in_the_working_directory(halo_bin, tmp_path):
    (tmp_path / "file.input").write_text("&parameters\n lx = 16, ly = 8, lz = 8\n proc_x = 2 proc_y = 1 proc_z = 1\n"
                                         " itfin=12 icheck=4 /\n")
    r = checkmpi("run", "--bin", str(halo_bin), "--strategy", "step2", "--no-report", "--json", "fi.json", *LIMIT,
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "reading ./file.input, as CheckMPI does" in r.stderr and "calibrat" not in r.stderr
    doc = json.loads((tmp_path / "fi.json").read_text())
    assert doc["config"]["input"] == "file.input" and doc["context"]["nprocs"] == 2
    assert (doc["config"]["lx"], doc["config"]["itfin"], doc["config"]["icheck"]) == (16, 12, 4)
    # Size options win over the file, which is then not read.
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "4x4x4", "--iters", "5", "--strategy",
                 "step2", "--no-report", "--json", "opt.json", *LIMIT, cwd=tmp_path)
    assert r.returncode == 0 and "reading ./file.input" not in r.stderr
    assert json.loads((tmp_path / "opt.json").read_text())["config"]["input"] is None


def test_mpi_args_reach_the_launcher(halo_bin, tmp_path):
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "4x4x4", "--iters", "5", "--strategy",
                 "step2", "--no-report", "--json", "m.json", "--mpi-args", "--bind-to none --tag-output", *LIMIT,
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"running: \S*mpirun -n 2 --bind-to none --tag-output ", r.stderr)
    assert re.search(r"^\[1,0\]<stdout>:checkmpi-halo ", (tmp_path / "m" / "checkmpi-halo.log").read_text(), re.M)


def test_compute_probe_is_the_fastest_in_place_kernel(halo_bin, tmp_path):
    """--compute-probe times each in-place kernel on the run's fields, a turn in every round among the strategies',
    and holds the strategies to the fastest."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    out = subprocess.run(["mpirun", "-n", "1", str(halo_bin / "checkmpi-halo"), "--no-input", "--local", "24x20x16",
                          "--iters", "10", "--rounds", "10", "--strategy", "step2", "--compute-probe",
                          "--json", "r.json", "--outdir", "o"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert schema_validator("checkmpi.halo/5").is_valid(doc)
    probe = doc["probes"]["compute"]
    kernels = {name: t["mean"] for name, t in probe["kernels"].items()}
    assert sorted(kernels) == ["lines", "sweep"] and probe["steps"] == 10
    assert probe["seconds_per_step"]["mean"] == pytest.approx(min(kernels.values()), rel=1e-6)
    assert probe["fastest"] == min(kernels, key=kernels.get)
    line = next(line for line in out.stdout.splitlines() if line.startswith("compute probe (in-place, no MPI)"))
    assert "; lines " in line and ", sweep " in line
    rounds = [line for line in out.stdout.splitlines() if re.match(r"\[\d+/10\] round \d+, steps", line)]
    assert len(rounds) == 10 and all(sorted(line.split(":")[-1].split()) == ["probe", "step2"] for line in rounds)
