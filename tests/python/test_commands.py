"""The commands that need no MPI: report, predict, export, and every input error."""

from __future__ import annotations

import base64
import json
import re
import shutil
import struct
import sys
from pathlib import Path

import pytest
from conftest import DATA, UNIT, assert_clean_error, checkmpi

from checkmpi.errors import CheckmpiError
from checkmpi.results import HALO_TIMERS, schema_validator


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def check_plots(folder: Path, expected: list[str]) -> list[Path]:
    pngs = sorted(folder.glob("*.png"))
    assert sorted(p.stem for p in pngs) == sorted(expected)
    for png in pngs:
        width, height = png_size(png)
        assert width >= 400 and height >= 300, (png, width, height)
        svg = png.with_suffix(".svg").read_text()
        assert "<svg" in svg and len(svg) > 5000
    return pngs


def check_html(html: Path, pngs: list[Path]) -> str:
    text = html.read_text()
    embedded = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(embedded) == len(pngs)
    assert sorted(base64.b64decode(e) for e in embedded) == sorted(p.read_bytes() for p in pngs)
    assert "http://" not in text and "https://" not in text  # self-contained
    assert text.index('id="context"') < text.index('id="results"') < text.index('id="plots"')
    return text


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "checkmpi"
    assert script.exists() or shutil.which("checkmpi"), "pip install should provide the checkmpi command"


def test_report_everything(tmp_path):
    files = [DATA / n for n in ("halo_4ranks.json", "halo_all_steps.json", "p2p_pingpong.json", "p2p_loggp.json",
                                "p2p_datatype.json", "p2p_bw.json", "p2p_ring.json")]
    r = checkmpi("report", *map(str, files), "--plots", str(tmp_path / "plots"), "--html", str(tmp_path / "r.html"),
                 timeout=120)
    assert r.returncode == 0, r.stderr
    pngs = check_plots(tmp_path / "plots", [
        "halo_4ranks-breakdown", "halo_4ranks-directions", "halo_4ranks-predicted", "halo_all_steps-breakdown",
        "halo_all_steps-directions", "halo_all_steps-predicted", "comparison", "p2p_pingpong-pingpong",
        "p2p_loggp-loggp", "p2p_datatype-datatype", "p2p_bw-bw", "p2p_ring-ring"])
    html = check_html(tmp_path / "r.html", pngs)
    for text in ("Open MPI v4.1.4", "at most 4 per node", "host (no GPU)", "predicted vs measured",
                 "Hockney fit", "LogGP parameters", "Comparison"):
        assert text in html, text
    out = r.stdout
    assert "Comparison: median time per step" in out and "predicted vs measured" in out
    assert "Size (B)" in out and "LogGP parameters" in out
    assert out.count("Headline: ") == 2 and '<p class="headline">' in html
    assert "x GB/s" in html and "x msg KiB" in html  # the HTML page has the wide tables
    from browser import check_page  # every kind of plot and table, at 1400 and 800 px

    wide, narrow = check_page(tmp_path / "r.html", "fixtures", tmp_path)
    assert wide["figures"] == narrow["figures"] == 12 and narrow["scrolling"] >= 2


def test_report_nbc_tables_and_plots(tmp_path):
    files = [DATA / "p2p_nbc.json", DATA / "p2p_nbc_pencil.json"]
    r = checkmpi("report", *map(str, files), "--outdir", str(tmp_path / "rep"), timeout=120)
    assert r.returncode == 0, r.stderr
    pngs = check_plots(tmp_path / "rep" / "plots", ["p2p_nbc-overlap", "p2p_nbc-breakdown", "p2p_nbc_pencil-overlap",
                                                    "p2p_nbc_pencil-breakdown"])
    html = check_html(tmp_path / "rep" / "report.html", pngs)
    for text in ("p2p_nbc: ialltoall on 2 ranks", "p2p_nbc: ibcast on 2 ranks",
                 "p2p_nbc_pencil: y_to_z transpose on 2x2 pencils", "overlap (%)", "pure comm"):
        assert text in r.stdout and text in html, text
    for text in ("MPI_Test calls", "MPI_Wait"):  # the parts of overall: in the HTML's wide tables
        assert text in html, text
    assert max(len(line) for line in r.stdout.splitlines()) <= 80


def test_report_one_run_prints_full_context_and_default_folder(tmp_path):
    src = tmp_path / "run1.json"
    shutil.copy(DATA / "halo_4ranks.json", src)
    r = checkmpi("report", str(src), "--wide")
    assert r.returncode == 0, r.stderr
    assert "MPI library" in r.stdout and "Open MPI v4.1.4, package" in r.stdout
    pngs = check_plots(tmp_path / "run1" / "plots", ["run1-breakdown", "run1-directions"])
    check_html(tmp_path / "run1" / "report.html", pngs)
    doc = json.loads(src.read_text())
    header = next(line for line in r.stdout.splitlines() if line.startswith("strategy "))
    unit = re.search(r"median \((\w+)\)", header).group(1)
    row = next(line for line in r.stdout.splitlines() if line.startswith("step2 sendrecv-pack"))
    median = float(re.split(r"\s{2,}", row.strip())[1])
    assert median == pytest.approx(doc["results"][2]["step_time"]["median"] * UNIT[unit], abs=6e-3)


def test_report_of_several_runs_gets_its_own_folder(tmp_path):
    r = checkmpi("report", str(DATA / "halo_4ranks.json"), str(DATA / "halo_all_steps.json"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [folder] = (tmp_path / "results").glob("report-*")
    check_plots(folder / "plots", ["halo_4ranks-breakdown", "halo_4ranks-directions", "halo_all_steps-breakdown",
                                   "halo_all_steps-directions", "comparison"])
    assert (folder / "report.html").exists()
    assert not list(DATA.glob("*/plots"))  # nothing written beside the inputs


def test_report_of_a_file_without_suffix(tmp_path):
    src = tmp_path / "run2"
    shutil.copy(DATA / "halo_4ranks.json", src)
    assert checkmpi("report", str(src)).returncode == 0
    check_plots(tmp_path / "run2-files" / "plots", ["run2-breakdown", "run2-directions"])


@pytest.mark.parametrize("spelling", ["--no-report", "--no-plots"])
def test_report_no_report(tmp_path, spelling):
    """Tables only, as `run --no-report`; --no-plots, the old name, still works for a release, and says so."""
    r = checkmpi("report", str(DATA / "p2p_pingpong.json"), spelling, "--plots", str(tmp_path / "p"),
                 "--outdir", str(tmp_path / "o"))
    assert r.returncode == 0 and not (tmp_path / "p").exists() and not (tmp_path / "o").exists()
    assert "Hockney fit" in r.stdout
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    assert warnings == ([] if spelling == "--no-report" else
                        ["checkmpi: warning: --no-plots is the old spelling of --no-report; it works in this release "
                         "only"])
    # With --html the page is still written (without plots), as asked.
    r = checkmpi("report", str(DATA / "p2p_pingpong.json"), spelling, "--html", str(tmp_path / "p.html"))
    assert r.returncode == 0 and "<img" not in (tmp_path / "p.html").read_text()


def test_one_option_vocabulary():
    """The names the commands share mean one thing: -n/--np ranks where a command launches (and nowhere else),
    -o/--json the results file, --launcher listed alike; old spellings warn."""
    import contextlib
    import io

    from checkmpi.cli import LAUNCHER_HELP, build_parser

    parser = build_parser()
    launching = {"run": ["run"], "p2p": ["p2p", "pingpong"], "calibrate": ["calibrate"]}
    for name, head in launching.items():
        args, _ = parser.parse_known_args([*head, "-n", "3", "-o", "x.json", "--launcher", "srun"])
        assert (args.np, args.json, args.launcher) == (3, "x.json", "srun"), name
        sub = parser._subparsers._group_actions[0].choices[name]
        text = sub.format_help()
        assert "--launcher mpirun|mpiexec|srun" in text and " ".join(LAUNCHER_HELP.split()) in " ".join(text.split())
    args, _ = parser.parse_known_args(["predict", "--p2p", "p.json", "--procs", "2x2x2", "--local", "8x8x8",
                                       "-o", "pr.json"])
    assert args.json == "pr.json"
    for head in (["predict", "--p2p", "p.json", "--procs", "2x2x2", "--local", "8x8x8"], ["report", "a.json"],
                 ["export", "--format", "csv", "a.json"]):  # they launch nothing: no -n
        with pytest.raises(CheckmpiError):
            args, extra = parser.parse_known_args([*head, "-n", "2"])
            if extra:
                raise CheckmpiError(f"unrecognized arguments: {extra}")
    args, _ = parser.parse_known_args(["run", "--itfin", "7"])
    assert args.iters == 7
    with pytest.raises(CheckmpiError, match=r"^--iters 7 and --itfin 8 both set the number of timed steps"):
        parser.parse_known_args(["run", "--iters", "7", "--itfin", "8"])
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        args, _ = parser.parse_known_args(["calibrate", "--output", "m.json"])
    assert args.json == "m.json"
    assert err.getvalue() == "checkmpi: warning: --output is the old spelling of --json; it works in this release only\n"


def test_report_at_80_columns(tmp_path):
    files = sorted(str(p) for p in [*DATA.glob("halo_*.json"), *DATA.glob("p2p_*.json")])
    r = checkmpi("report", *files, "--no-report", "--machine", str(DATA / "profiles" / "machine_2ranks.json"),
                 env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    assert "\u2026" not in r.stdout  # no cell cut short
    wide = checkmpi("report", *files, "--no-report", "--wide", env={"COLUMNS": "80"})
    assert max(len(line) for line in wide.stdout.splitlines()) > 80


def test_report_below_80_columns_names_what_it_leaves_out():
    """A terminal too narrow for a table's columns even at their narrowest: the columns that do not fit are
    left out from the right, and a line under the table names them; nothing is cut."""
    files = [str(DATA / "halo_4ranks.json"), str(DATA / "p2p_loggp.json")]
    r = checkmpi("report", *files, "--no-report", env={"COLUMNS": "60"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 60 and "\u2026" not in r.stdout
    text = " ".join(r.stdout.split())
    # The halo table's columns from the right, as many as the figures' widths need (the fixture's values).
    left_out = re.search(r"left out to fit 60 columns: ((?:[xyz] GB/s, )*check) \(a wider terminal, or COLUMNS, "
                         r"shows them\)", text)
    assert left_out, text
    header = next(line for line in lines if line.startswith("strategy "))
    kept = 3 - left_out.group(1).count("GB/s")
    assert header.split() == ["strategy", "median", "95%", "CI", "best", "tail"] + ["GB/s"] * kept  # "vs" above
    row = next(line for line in lines if line.startswith("step2 "))
    doc = json.loads((DATA / "halo_4ranks.json").read_text())
    step2 = next(e for e in doc["results"] if e["strategy"] == "step2")
    unit = re.search(r"time per step in (\S+)", text).group(1)  # the unit the table chose for its figures
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[unit]
    printed = row.split()[1]
    last_digit = 10.0 ** -len(printed.partition(".")[2])
    assert float(printed) == pytest.approx(step2["step_time"]["median"] * scale, abs=0.51 * last_digit)
    assert "left out to fit 60 columns: g+G*s (a wider" in text  # the LogGP measurements
    wide = checkmpi("report", *files, "--no-report", env={"COLUMNS": "200"})
    assert "left out" not in wide.stdout


def test_predict_table_and_json(tmp_path):
    out = tmp_path / "pred.json"
    r = checkmpi("predict", "--p2p", str(DATA / "p2p_pingpong.json"), "--p2p", str(DATA / "p2p_datatype.json"),
                 "--procs", "2x2x2", "--local", "16x16x16", "--copy-bandwidth", "10", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "Predicted time per step: 2x2x2 ranks (8 per node), local 16x16x16" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    doc = json.loads(out.read_text())
    assert not list(schema_validator("checkmpi.predict/1").iter_errors(doc))
    ids = [p["strategy"] for p in doc["predictions"]]
    assert ids[:11] == [f"step{i}" for i in range(11)] and "persistent" in ids and "mock" in ids
    step2 = doc["predictions"][2]
    assert step2["messages"] == 6 and step2["bytes"] == 6 * 3 * 18 * 18 * 4
    assert step2["links"] == {"self": 0, "intra": 6, "inter": 0}
    assert set(step2["terms"]) == {"pack", "mpi", "self", "unpack", "barrier", "compute", "hidden"}
    t = step2["terms"]
    assert step2["total"] == pytest.approx(sum(t.values()) - 2 * t["hidden"])
    assert t["compute"] == pytest.approx(2 * 3 * 16 ** 3 * 4 / 10e9)  # one pass at --copy-bandwidth
    assert doc["model"]["derived_from"] == "p2p"
    row = next(line for line in r.stdout.splitlines() if line.strip().startswith("step2 "))
    unit = re.search(r"\((\w+)\)\s*$", r.stdout.split("strategy")[0].strip()).group(1)
    assert float(row.split()[-1]) == pytest.approx(step2["total"] * UNIT[unit], rel=0.01)


def test_predict_with_loggp_and_halo_probe():
    r = checkmpi("predict", "--p2p", str(DATA / "p2p_loggp.json"), "--procs", "2x2x1", "--local", "16x16x16",
                 "--strategy", "step2,overlap", "--halo", str(DATA / "halo_4ranks.json"))
    assert r.returncode == 0, r.stderr
    words = " ".join(r.stdout.split())  # the caption wraps where the path's length puts it
    assert "p2p_loggp.json" in words and "memcpy probe in halo_4ranks.json" in words
    assert "step8 " in r.stdout and "step0" not in r.stdout


def _profile(tmp_path: Path) -> Path:
    """A machine profile in the schema's shape with round parameters (a unit test's input, not a measurement)."""
    link = {"hockney": [{"min_size": 0, "max_size": 1 << 30, "alpha": 1e-6, "beta": 1e9}], "loggp": None,
            "source": "synthetic"}
    direction = {"pack": 1e9, "unpack": 1e9}
    kinds = ("in-place", "one-pass", "interior", "masked", "interior-one-pass", "masked-one-pass", "window")
    rates = [{"ranks": 1, "bandwidth": 1e10}, {"ranks": 2, "bandwidth": 5e9}]
    doc = {"schema": "checkmpi.machine/2", "tool": {"name": "checkmpi calibrate", "version": "0.1.0"},
           "context": {"host": "h", "mpi_library": "m", "nodes": 1, "ranks": 2, "ranks_per_node": 2,
                       "cores_per_node": 2, "backend": "host", "created": "2026-01-01T00:00:00Z", "command": "c"},
           "links": {"intra": link, "inter": dict(link, hockney=[dict(link["hockney"][0], alpha=1e-5, beta=1e8)])},
           "self": {"alpha": 5e-7, "beta": 2e9, "source": "synthetic"},
           "barrier": [{"ranks": 2, "seconds": 1e-6}, {"ranks": 4, "seconds": 2e-6}],
           "datatype": None, "memory": {"copy": [{"ranks": 1, "bandwidth": 1e10}, {"ranks": 2, "bandwidth": 5e9}],
                                        "source": "synthetic"},
           "compute": {**{k: rates for k in kinds}, "local": [10, 10, 10], "source": "synthetic"},
           "pack": {"host": {"x": direction, "y": direction, "z": direction, "local": [10, 10, 10],
                             "source": "synthetic"}, "cuda": None},
           "blocks": {"points": [{"local": [10, 10, 10], "bytes": 3 * 12 ** 3 * 4, "by_ranks": [
               {"ranks": r["ranks"], "copy": r["bandwidth"], "compute": {k: r["bandwidth"] for k in kinds},
                "x": direction, "y": direction, "z": direction, "overlap": {"interior": 1.0, "masked": 1.0}}
               for r in rates]}], "source": "synthetic"}}
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(doc))
    return path


def test_predict_with_a_machine_profile_and_a_composition(tmp_path):
    out = tmp_path / "m.json"
    r = checkmpi("predict", "--machine", str(_profile(tmp_path)), "--procs", "4x1x1", "--local", "10x10x10",
                 "--ranks-per-node", "2", "--strategy", "step7,pack=kernel,transport=persistent", "--json", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert [p["strategy"] for p in doc["predictions"]] == ["step7", "persistent"]  # a composition equal to a row
    p = doc["predictions"][0]
    assert p["links"] == {"self": 4, "intra": 1, "inter": 1}
    assert p["terms"]["mpi"] == pytest.approx(1e-5 + 1728 / 1e8)  # the off-node message decides
    assert p["terms"]["barrier"] == pytest.approx(2e-6)
    r = checkmpi("predict", "--machine", str(_profile(tmp_path)), "--procs", "2x1x1", "--local", "8x8x8",
                 "--strategy", "step99")
    assert_clean_error(r, 2, "unknown strategy 'step99'")
    r = checkmpi("predict", "--machine", str(_profile(tmp_path)), "--procs", "2x1x1", "--local", "8x8x8",
                 "--copy-bandwidth", "5")
    assert_clean_error(r, 2, "--copy-bandwidth and --halo go with --p2p")


def test_predict_from_a_calibrated_profile(tmp_path):
    """The profile `checkmpi calibrate` recorded (fixture): 4 ranks compute in place at the kernel's rate with 4 at
    once (the profile's last point, 2) at their block (16^3, the profile's own); oversubscribed, they wait for
    each other's turns."""
    out = tmp_path / "p.json"
    profile = str(DATA / "profiles" / "machine_2ranks.json")
    r = checkmpi("predict", "--machine", profile, "--procs", "2x2x1", "--local", "16x16x16", "--ranks-per-node", "4",
                 "--strategy", "step7,mock", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "machine_2ranks.json" in " ".join(r.stdout.split())
    doc = json.loads(out.read_text())
    step7, mock = doc["predictions"]
    machine = json.loads(Path(profile).read_text())
    kernel = machine["compute"]["in-place"][-1]
    assert kernel["ranks"] == 2
    assert step7["terms"]["compute"] == pytest.approx(2 * 3 * 16 ** 3 * 4 / kernel["bandwidth"])
    if machine["context"]["cores_per_node"] < 4:  # no turns measured (2 ranks): rpn/cores - 1 times its work
        assert step7["turns"] == pytest.approx((4 / machine["context"]["cores_per_node"] - 1) * step7["work"])
        assert step7["terms"]["mpi"] > step7["turns"] > step7["terms"]["compute"]
    assert mock["turns"] == 0.0 and mock["terms"]["mpi"] == 0.0
    assert mock["terms"]["pack"] == pytest.approx(step7["terms"]["pack"])


def test_predict_scale_table_plot_and_json(tmp_path):
    out = tmp_path / "scale.json"
    r = checkmpi("predict", "--machine", str(_profile(tmp_path)), "--scale", "8,64,1000", "--ranks-per-node", "4",
                 "--local", "30x30x30", "--strategy", "step4,step8,step9", "--plots", str(tmp_path / "p"),
                 "--json", str(out))
    assert r.returncode == 0, r.stderr
    words = " ".join(r.stdout.split())
    assert "Scale-up: grids and neighbours (4 ranks per node, local 30x30x30)" in words
    assert "10x10x10" in r.stdout and max(len(line) for line in r.stdout.splitlines()) <= 80
    doc = json.loads(out.read_text())
    assert not list(schema_validator("checkmpi.predict/1").iter_errors(doc))
    assert [(p["ranks"], p["procs"], p["nodes"]) for p in doc["projection"]] == [
        (8, [2, 2, 2], 2), (64, [4, 4, 4], 16), (1000, [10, 10, 10], 250)]
    assert [p["strategy"] for p in doc["projection"][2]["predictions"]] == ["step4", "step8", "step9"]
    assert (tmp_path / "p" / "projection.png").stat().st_size > 1000
    assert_clean_error(checkmpi("predict", "--machine", str(_profile(tmp_path)), "--scale", "0,8",
                                "--local", "8x8x8"), 2, "--scale expects")


def test_report_explains_and_projects_over_measured_runs(tmp_path):
    runs = [str(DATA / f"halo_scale_np{n}.json") for n in (1, 2, 4)]
    r = checkmpi("report", *runs, "--machine", str(_profile(tmp_path)), "--outdir", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    words = " ".join(r.stdout.split())
    for n in (1, 2, 4):
        assert f"halo_scale_np{n}: where the time goes, predicted vs measured" in words
    assert "Scale-up: grids and neighbours (4 ranks per node, local 12x12x12)" in words
    assert "Scale-up: predicted time per step" in words
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    for name in ("projection", "halo_scale_np4-predicted"):
        assert (tmp_path / "rep" / "plots" / f"{name}.png").stat().st_size > 1000
    # Without a model: the tables stand, no explanation.
    r = checkmpi("report", runs[0], "--no-report")
    assert r.returncode == 0 and "where the time goes" not in r.stdout


def test_report_overlays_a_campaigns_scale_up(tmp_path):
    campaign = str(DATA / "campaign_scale_report.json")
    doc = json.loads(Path(campaign).read_text())
    r = checkmpi("report", "--campaign", campaign, "--machine", str(DATA / "profiles" / "machine_2ranks.json"), "--outdir",
                 str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    words = " ".join(r.stdout.split())
    assert "Scale-up: grids and neighbours (every count on one node, local 12x12x12)" in words
    table = r.stdout.split("Scale-up: predicted time")[1]
    assert [line.split()[0] for line in table.splitlines() if line.startswith("step")] == doc["campaign"]["strategies"]
    assert (tmp_path / "rep" / "plots" / "projection.png").stat().st_size > 1000
    assert_clean_error(checkmpi("report", "--campaign", str(DATA / "halo_4ranks.json"), "--no-report"), 2,
                       "is not a campaign report")
    assert_clean_error(checkmpi("report", "--no-report"), 2, "report needs results files or --campaign")


def test_export_csv_and_extrap(tmp_path):
    r = checkmpi("export", "--format", "csv", str(DATA / "halo_4ranks.json"))
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1 + 3 * (len(HALO_TIMERS) * 3 + 6)
    out = tmp_path / "x.jsonl"
    r = checkmpi("export", "--format", "extrap", str(DATA / "halo_4ranks.json"), str(DATA / "halo_all_steps.json"),
                 "-o", str(out))
    assert r.returncode == 0 and r.stdout == ""
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    strategies = sum(len(json.loads((DATA / f).read_text())["results"]) for f in ("halo_4ranks.json",
                                                                               "halo_all_steps.json"))
    assert strategies == 3 + 20  # every strategy that ran: 11 steps and 9 of checkmpi's own rows
    assert len(lines) == strategies * len(HALO_TIMERS) and all({"params", "callpath", "metric", "value"} <= x.keys() for x in lines)
    r = checkmpi("export", "--format", "csv", str(DATA / "p2p_pingpong.json"), str(DATA / "p2p_ring.json"))
    assert r.returncode == 0 and r.stdout.startswith("file,date,mpi_library,mode,")


def test_failed_write_is_exit_1(tmp_path):
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "x.csv").mkdir()  # a directory where the file should go
    r = checkmpi("export", "--format", "csv", str(DATA / "halo_4ranks.json"), "-o", str(tmp_path / "ro" / "x.csv"))
    assert_clean_error(r, 1, "cannot write")


# ---- errors: one line, a non-zero code, no traceback ----------------------------------------------------


def test_error_missing_file(tmp_path):
    assert_clean_error(checkmpi("report", str(tmp_path / "none.json")), 2, "does not exist")


def test_error_malformed_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "checkmpi.halo/5", ')
    assert_clean_error(checkmpi("report", str(bad)), 2, "is not valid JSON")
    bad.write_text('{"schema": "checkmpi.halo/5", "context": {}, "config": {}, "results": [], "skipped": [], '
                   '"fastest_group": [], "separable": true}')
    assert_clean_error(checkmpi("export", "--format", "csv", str(bad)), 2, "context.", "is missing")
    doc = json.loads((DATA / "halo_4ranks.json").read_text())
    doc["results"][1]["valid"] = "false"  # a string where a boolean belongs is an error, not "valid"
    bad.write_text(json.dumps(doc))
    assert_clean_error(checkmpi("report", str(bad), "--no-report"), 2, "results[1].valid is not a boolean: 'false'")
    doc = json.loads((DATA / "p2p_pingpong.json").read_text())
    doc["fits"]["hockney"]["segments"][0]["alpha"] = "fast"
    bad.write_text(json.dumps(doc))
    assert_clean_error(checkmpi("report", str(bad), "--no-report"), 2,
                       "fits.hockney.segments[0].alpha is not a number or null: 'fast'")


def test_error_unknown_schema_version(tmp_path):
    doc = json.loads((DATA / "halo_4ranks.json").read_text())
    doc["schema"] = "checkmpi.halo/9"
    path = tmp_path / "future.json"
    path.write_text(json.dumps(doc))
    assert_clean_error(checkmpi("report", str(path)), 2, "schema version 'checkmpi.halo/9'", "checkmpi.halo/5")


def test_error_wrong_kind_of_file(tmp_path):
    assert_clean_error(checkmpi("export", "--format", "extrap", str(DATA / "p2p_pingpong.json")), 2,
                       "--format extrap reads checkmpi-halo results")
    assert_clean_error(checkmpi("export", "--format", "csv", str(DATA / "p2p_pingpong.json"),
                                str(DATA / "halo_4ranks.json")), 2, "one kind of results at a time")
    assert_clean_error(checkmpi("predict", "--p2p", str(DATA / "halo_4ranks.json"), "--procs", "2x2x2",
                                "--local", "8x8x8"), 2, "--p2p needs checkmpi-p2p results")
    assert_clean_error(checkmpi("predict", "--p2p", str(DATA / "p2p_ring.json"), "--procs", "2x2x2",
                                "--local", "8x8x8"), 2, "needs a ping-pong result")


@pytest.mark.parametrize("args,fragment", [
    (["run", "--np", "4", "--procs", "2x2x2"], "--procs 2x2x2 needs 8 ranks, but --np is 4"),
    (["run", "--procs", "2x2"], "three positive integers"),
    (["run", "--np", "0"], "--np must be positive"),
    (["run", "--size", "10x10x10", "--local", "4x4x4"], "not allowed with argument"),
    (["run", "--np", "4", "--size", "3x5x7"], "lx = 3 is not divisible by proc_x = 2"),
    (["run", "--procs", "2x1x1", "--size", "3x4x4"], "lx = 3 is not divisible by proc_x = 2"),
    (["run", "--iters", "0"], "--iters must be positive"),
    (["run", "--budget", "-1"], "--budget must be a number of seconds above 0 and at most 10^7, got '-1'"),
    (["predict", "--p2p", "x.json"], "required"),
    (["predict", "--p2p", str(DATA / "p2p_pingpong.json"), "--procs", "2x2x2", "--local", "8x8x8",
      "--strategy", "step99"], "unknown strategy 'step99'"),
    (["report"], "report needs results files or --campaign REPORT.json"),
    (["report", str(DATA / "halo_4ranks.json"), "--bogus"], "unrecognized arguments: --bogus"),
    (["p2p", "teleport"], "invalid choice"),
    (["export", "--format", "xml", "a.json"], "invalid choice"),
    (["frobnicate"], "invalid choice"),
    (["run", "--mpi-args", "'unbalanced"], "--mpi-args: No closing quotation"),
    (["p2p", "pingpong", "-n", "0"], "--np must be positive"),
])
def test_usage_errors(args, fragment):
    r = checkmpi(*args)
    assert_clean_error(r, 2, fragment)
    assert "checkmpi: error: checkmpi" not in r.stderr  # one prefix


def test_every_option_has_help():
    from checkmpi.cli import build_parser

    def check(parser, name: str) -> int:
        """Every action of `parser` and of its subcommands, at any depth; how many were checked."""
        seen = 0
        for action in parser._actions:
            assert action.help, f"{name} {action.option_strings or action.dest}: no help"
            seen += 1
            for verb, sub in getattr(action, "choices", None).items() if action.nargs == "A..." else ():
                seen += check(sub, f"{name} {verb}")
        return seen

    assert check(build_parser(), "checkmpi") > 50


def test_null_fits_are_shown_as_missing_not_a_crash(tmp_path):
    """checkmpi-p2p writes null for a fit it cannot make (beta when times do
    not grow with size, O with a single payload size): report shows '-' and
    draws no model, predict says why it cannot predict."""
    pp = json.loads((DATA / "p2p_pingpong.json").read_text())
    for seg in pp["fits"]["hockney"]["segments"]:
        seg["beta"] = None
    dt = json.loads((DATA / "p2p_datatype.json").read_text())
    dt["fits"]["datatype"].update({"O": None, "o": None, "r2": None})
    for r in pp["results"]:  # and a p95 that is not a number
        r["latency"]["p95"] = None
    (tmp_path / "pp.json").write_text(json.dumps(pp))
    (tmp_path / "dt.json").write_text(json.dumps(dt))
    r = checkmpi("report", str(tmp_path / "pp.json"), str(tmp_path / "dt.json"), "--no-report")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    hockney = r.stdout[r.stdout.index("Hockney fit"):]
    assert re.search(r"\b1\s+\S+\s+[0-9.]+\s+-\s", hockney), hockney[:400]
    r = checkmpi("predict", "--p2p", str(tmp_path / "pp.json"), "--procs", "2x1x1", "--local", "8x8x8")
    assert_clean_error(r, 2, "no positive beta; cannot predict")


def test_report_names_runs_apart_and_draws_names_as_text(tmp_path):
    """Two results files of one name (a/halo.json, b/halo.json) once shared their plots and predictions: they are
    a-halo and b-halo. A '$' in a name (matplotlib's formulas) once crashed the plots after the tables."""
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(DATA / "halo_4ranks.json", tmp_path / sub / "halo.json")
    r = checkmpi("report", "a/halo.json", "b/halo.json", "--outdir", "out", cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "out" / "plots").glob("*.png"))
    assert names == ["a-halo-breakdown.png", "a-halo-directions.png", "b-halo-breakdown.png",
                     "b-halo-directions.png", "comparison.png"]
    assert "halo.json (a-halo)" in r.stdout and "halo.json (b-halo)" in r.stdout
    shutil.copy(DATA / "halo_4ranks.json", tmp_path / "a" / "halo.JSON")  # one folder, one stem: the suffix tells
    r = checkmpi("report", "a/halo.json", "a/halo.JSON", "--no-report", cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "Headline: halo-json:" in r.stdout and "Headline: halo-JSON:" in r.stdout
    shutil.copy(DATA / "halo_4ranks.json", tmp_path / "r$\\frac{a$.json")
    r = checkmpi("report", "r$\\frac{a$.json", cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r$\\frac{a$" / "report.html").is_file()


def test_predict_refuses_a_loggp_fit_of_negative_time(tmp_path):
    doc = json.loads((DATA / "p2p_loggp.json").read_text())
    assert doc["fits"]["loggp"]["L"] < 0  # a real fit: L alone below 0 is accepted
    r = checkmpi("predict", "--p2p", str(DATA / "p2p_loggp.json"), "--procs", "2x1x1", "--local", "8x8x8",
                 "--strategy", "step2")
    assert r.returncode == 0, r.stderr
    doc["fits"]["loggp"]["L"] = -1e-5
    (tmp_path / "neg.json").write_text(json.dumps(doc))
    r = checkmpi("predict", "--p2p", str(tmp_path / "neg.json"), "--procs", "2x1x1", "--local", "8x8x8",
                 "--strategy", "step2")
    assert_clean_error(r, 2, "LogGP fit has o_s 8.89e-08 s, o_r 1.6e-07 s and L + o_s + o_r -9.75e-06 s: a "
                       "negative time; cannot predict")


def test_a_campaign_report_without_rows_or_with_an_unknown_point(tmp_path):
    doc = json.loads((DATA / "campaign_scale_report.json").read_text())
    empty = json.loads(json.dumps(doc))
    empty["scaleup"][0]["rows"] = []
    unknown = json.loads(json.dumps(doc))
    unknown["scaleup"][0]["rows"][0]["point"] = "9x9x9-1x1x1"
    for name, bad, message in (("empty", empty, "its weak scale-up sweep has no rows"),
                               ("unknown", unknown, "scaleup[0] names point '9x9x9-1x1x1', which its points do "
                                "not hold")):
        (tmp_path / f"{name}.json").write_text(json.dumps(bad))
        r = checkmpi("report", "--campaign", str(tmp_path / f"{name}.json"), "--machine", str(_profile(tmp_path)),
                     "--no-report")
        assert_clean_error(r, 2, message)


def test_a_refused_output_writes_no_plot(tmp_path):
    """The plots were written before the --html or --json target was checked."""
    (tmp_path / "adir").mkdir()
    r = checkmpi("report", str(DATA / "halo_4ranks.json"), "--html", str(tmp_path / "adir"), "--plots",
                 str(tmp_path / "p"))
    assert_clean_error(r, 1, "a directory")
    assert not (tmp_path / "p").exists()
    r = checkmpi("predict", "--machine", str(_profile(tmp_path)), "--scale", "2,4", "--ranks-per-node", "2",
                 "--local", "8x8x8", "--strategy", "step2", "--plots", str(tmp_path / "q"), "--json",
                 str(tmp_path / "adir"))
    assert_clean_error(r, 1, "a directory")
    assert not (tmp_path / "q").exists()
