"""The terminal tables (checkmpi.tables, p2p_tables, model_tables): numbers as in the JSON, units, widths, notes."""

from __future__ import annotations

import json
import re

import pytest
from conftest import BUILD_BIN, DATA, UNIT
from matplotlib.container import ErrorbarContainer

from checkmpi import p2p_tables, tables
from checkmpi.results import load, load_all


def _unit(title: str) -> float:
    return {"s": 1.0, "ms": 1e3, "us": 1e6}[title.rsplit(" in ", 1)[1].split(",")[0].split()[0]]


@pytest.mark.parametrize("name", ["halo_4ranks.json", "halo_all_steps.json"])
def test_halo_table_numbers_match_json(name):
    run = load(DATA / name)
    table = tables.halo_table(run)
    assert table.headers == ["strategy", "median", "95% CI", "vs best", "tail", "x GB/s", "y GB/s", "z GB/s",
                             "check"]
    assert "tail: p95/median" in table.caption
    scale = _unit(table.title)
    doc = json.loads((DATA / name).read_text())
    ran = [row for row in table.rows if row[-1] != "skipped"]
    assert len(ran) == len(doc["results"])
    skipped = [row for row in table.rows if row[-1] == "skipped"]
    assert [row[0] for row in skipped] == [k["strategy"] for k in doc["skipped"]]
    for k in doc["skipped"]:
        assert f"{k['strategy']}: skipped: {k['reason']}" in table.caption
    for row, entry in zip(ran, doc["results"]):
        d = entry["step_time"]
        assert row[0] == entry["strategy"]
        assert float(row[1]) == pytest.approx(d["median"] * scale, abs=6e-3)
        lo, hi = map(float, row[2].split("-"))
        assert (lo, hi) == pytest.approx((d["median_ci"][0] * scale, d["median_ci"][1] * scale), rel=5e-3, abs=6e-3)
        check_vs_best(row[3], entry, doc["fastest_group"])
        assert float(row[4].rstrip("!")) == pytest.approx(d["p95"] / d["median"], rel=5e-3, abs=6e-3)
        assert row[4].endswith("!") == bool(entry["noise"])
        for col, x in zip((5, 6, 7), "xyz"):
            # at most four characters: 2 decimals below 10 GB/s, 1 below 100, none above; null: "-"
            bandwidth = entry["directions"][x]["bandwidth"]["min"]
            assert row[col] == "-" if bandwidth is None else float(row[col]) == pytest.approx(
                bandwidth / 1e9, rel=5e-3, abs=6e-3)
            assert len(row[col]) <= 4
        if entry["parts"]["transport"].startswith(("neighbor", "ineighbor", "rma")) or entry["strategy"] == "mock":
            assert row[5:8] == ["-", "-", "-"]  # one call for every direction: no per-direction bandwidth
        assert row[8] == ("valid" if entry["valid"] else "INVALID")
    for entry in doc["results"]:
        if entry["noise"]:
            assert f"warning: {entry['strategy']} is noisy: {'; '.join(entry['noise'])}" in table.caption
    assert "message size x/y/z (KiB): 1.3/1.3/1.3 (step0, step1); 3.8/3.8/3.8 (step2" in table.caption
    caption = " ".join(table.caption.split())
    runs = doc["config"]["repeat"]
    assert (f"time per step over ranks, steps, {doc['config']['rounds']} rounds"
            + (f" and {runs} runs" if runs > 1 else "") + ", validation excluded") in caption
    assert "(bootstrap over runs, rounds and steps)" in caption
    assert "= the fastest and those tied with it (ratio's CI includes 1, or within 2.0%)" in caption


def check_vs_best(cell: str, entry: dict, group: list[str]) -> None:
    """The 'vs best' cell: the JSON's ratio (2 decimals below 10, 1 below 100), '=' on the fastest group, '-' on
    what is not ranked."""
    vs = entry["vs_fastest"]
    if vs is None:
        assert cell == "-" and entry["strategy"] not in group
        return
    assert cell.endswith("=") == (entry["strategy"] in group) == vs["tied"]
    assert float(cell.rstrip("=")) == pytest.approx(vs["ratio"], rel=5e-3, abs=6e-3)


def test_wide_halo_table_has_every_figure_per_step():
    run = load(DATA / "halo_all_steps.json")
    table = tables.halo_table(run, wide=True)
    h = table.headers
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[h[1].split("(")[1].rstrip(")")]
    s = run.strategies[7]
    row = dict(zip(h, table.rows[7]))
    assert row["strategy"] == "step7 isend-irecv"
    for key, value in (("p5", s.step_time.p5), ("p95", s.step_time.p95), ("min", s.step_time.min),
                       ("max", s.step_time.max), ("mean", s.step_time.mean)):
        assert float(row[next(k for k in h if k.startswith(key + " ("))]) == pytest.approx(value * scale, abs=6e-3)
    assert float(row["x (" + h[1].split("(")[1]]) == pytest.approx(s.timers["x"].max / s.steps * scale, abs=6e-3)
    assert float(row["loop (s)"]) == pytest.approx(s.timers["loop"].max, abs=6e-5)
    assert float(row["%MPI"]) == pytest.approx(100 * s.timers["comm"].max / s.timers["loop"].max, abs=0.06)
    assert float(row["spread"].rstrip("%")) == pytest.approx(100 * s.repeat_spread, abs=0.06)
    assert float(row["z msg KiB"]) == pytest.approx(s.message_bytes("z") / 1024, abs=0.06)
    rows = {cells[0]: dict(zip(h, cells)) for cells in table.rows}
    for s in run.ran():  # the tail and its noise marker, and the ranking, as in the narrow table
        tail = rows[s.label]["tail"]
        assert tail.endswith("!") == bool(s.noise)
        assert float(tail.rstrip("!")) == pytest.approx(s.step_time.p95 / s.step_time.median, rel=5e-3, abs=6e-3)
        check_vs_best(rows[s.label]["vs best"], s.raw, run.fastest_group)
        if s.vs_fastest:
            lo, hi = map(float, rows[s.label]["vs best 95% CI"].split("-"))
            assert (lo, hi) == pytest.approx(s.vs_fastest.ci, rel=5e-3, abs=6e-3)


def test_headline_is_the_binarys_ranking():
    """The fixture's own ranking: the fastest group and the closest strategy outside it, from the JSON."""
    run = load(DATA / "halo_all_steps.json")
    text = tables.headline(run)
    group = [s for i in run.fastest_group for s in run.ran() if s.id == i]
    best = group[0]
    ranked = [s for s in run.ran() if s.vs_fastest and not s.vs_fastest.tied]
    if run.oversubscribed:  # the binary separates nothing there: every ranked strategy in the group
        assert not ranked and len(group) == sum(1 for s in run.ran() if s.vs_fastest)
        assert text.startswith(f"halo_all_steps: not separated (oversubscribed): {tables.names_of(run.fastest_group)}"
                               " are within ")
    elif len(group) == 1:
        assert text.startswith(f"halo_all_steps: fastest {best.id}, {tables.per_step_text(best.step_time.median)} "
                               "per step")
    else:
        assert text.startswith(f"halo_all_steps: {tables.names_of(run.fastest_group)} are tied within ")
    if ranked:
        nxt = min(ranked, key=lambda s: s.vs_fastest.ratio)
        assert f"; next {nxt.id} is {tables.percent(nxt.vs_fastest.ratio)} slower (95% CI " in text
    shares = tables.phase_shares(best)
    assert f"{best.id}'s loop without validation: {100 * shares['compute']:.0f}% compute, " in text
    assert "validation" not in text.split("without validation")[1]  # no share of it: excluded, as in the table


def ranked_doc(group: list[str], nxt: str, oversubscribed: bool = False) -> dict:
    """halo_all_steps.json with a ranking written in: `group` tied (1.0, 1.004, 1.012, ...), the fastest's median
    1.234 ms, `nxt` 18% slower (15%-21%), everything else twice as slow or more."""
    doc = json.loads((DATA / "halo_all_steps.json").read_text())
    for k, e in enumerate(doc["results"]):
        e["vs_fastest"] = {"ratio": 2.0 + 0.1 * k, "ci95": [1.9 + 0.1 * k, 2.1 + 0.1 * k], "tied": False}
    at = {e["strategy"]: e for e in doc["results"]}
    for k, sid in enumerate(group):
        ratio = (1.0, 1.004, 1.012, 1.008)[k]
        at[sid]["vs_fastest"] = {"ratio": ratio, "ci95": [ratio - 0.02, ratio + 0.02], "tied": True}
    at[group[0]]["step_time"].update(median=1.234e-3, median_ci=[1.2e-3, 1.27e-3])
    at[nxt]["vs_fastest"] = {"ratio": 1.18, "ci95": [1.15, 1.21], "tied": False}
    doc["fastest_group"] = group
    doc["context"].update(oversubscribed=oversubscribed, cpus_per_node=[2], ranks_on_node=[4], omp_threads=1)
    doc["separable"] = not oversubscribed  # one launch, as the binary writes it
    return doc


def _load_doc(tmp_path, doc: dict, name: str = "ranked.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return load(path)


def test_headline_names_a_tied_group_as_the_binary_does(tmp_path):
    """Issue 30's example: never one winner that is not separated; the table marks the group."""
    run = _load_doc(tmp_path, ranked_doc(["step1", "step4", "step7"], "step0"))
    text = tables.headline(run)
    assert text.startswith("ranked: step1, step4 and step7 are tied within 1.2% (fastest median 1.234 ms per step); "
                           "next step0 is 18% slower (95% CI 15%-21%); step1's loop without validation: ")
    assert "fastest step1" not in text and "oversubscribed" not in text
    marked = [row[0] for row in tables.halo_table(run).rows if row[3].endswith("=")]
    assert marked == ["step1", "step4", "step7"]
    wide = tables.halo_table(run, wide=True)
    assert [row[0].split()[0] for row in wide.rows if row[3].endswith("=")] == marked
    # A group of one: "fastest X"; two: "X and Y".
    one = _load_doc(tmp_path, ranked_doc(["step7"], "step2"), "one.json")
    assert tables.headline(one).startswith("one: fastest step7, 1.234 ms per step; next step2 is 18% slower "
                                           "(95% CI 15%-21%); ")
    two = _load_doc(tmp_path, ranked_doc(["step7", "mock"], "step2"), "two.json")
    assert tables.headline(two).startswith("two: step7 and mock are tied within 0.4% (fastest median 1.234 ms ")
    # Nothing valid: no ranking to tell.
    doc = ranked_doc(["step7"], "step2")
    for e in doc["results"]:
        e.update(valid=False, error="test", vs_fastest=None)
    doc["fastest_group"] = []
    assert tables.headline(_load_doc(tmp_path, doc, "none.json")) == "none: no valid strategy to rank"


def test_oversubscription_is_flagged_in_headline_table_and_context(tmp_path):
    warning = "oversubscribed: 4 ranks x 1 thread on 2 CPUs, timings include the scheduler's time slices"
    over = _load_doc(tmp_path, ranked_doc(["step7"], "step2", oversubscribed=True), "over.json")
    assert over.oversubscribed
    assert tables.headline(over).endswith("; " + warning)
    assert "\nwarning: " + warning in tables.halo_table(over).caption
    assert "\nwarning: " + warning in tables.halo_table(over, wide=True).caption
    assert dict(tables.context_rows(over))["CPUs"].startswith(
        "4 ranks x 1 thread on 2 CPUs: OVERSUBSCRIBED, timings include the scheduler's time slices; binding ")
    assert tables.contexts_summary([over]).rows[0][1].endswith("; OVERSUBSCRIBED")
    assert "warning: placement" not in tables.halo_table(over).caption  # the binary advised nothing
    advised = ranked_doc(["step7"], "step2", oversubscribed=True)
    advised["context"]["placement_advice"] = "the ranks are not bound, so ..."
    caption = tables.halo_table(_load_doc(tmp_path, advised, "advised.json")).caption
    assert "\nwarning: " + warning + "\nwarning: placement: the ranks are not bound, so ..." in caption
    # The binary ties every ranked strategy there: the headline says they are not separated, not "tied".
    doc = ranked_doc(["step1", "step4"], "step0", oversubscribed=True)
    for e in doc["results"]:
        e["vs_fastest"]["tied"] = True
    doc["fastest_group"] = ["step1", "step4"] + [e["strategy"] for e in doc["results"]
                                                 if e["strategy"] not in ("step1", "step4")]
    text = tables.headline(_load_doc(tmp_path, doc, "all.json"))
    assert text.startswith("all: not separated (oversubscribed): step1, step4, ")
    assert " (fastest median 1.234 ms per step); one launch cannot see how the placement of ranks on CPUs, fixed " \
           "for a launch, changes each strategy; " in text and "slower" not in text
    fits = _load_doc(tmp_path, ranked_doc(["step7"], "step2"), "fits.json")
    assert not fits.oversubscribed
    for text in (tables.headline(fits), tables.halo_table(fits).caption, tables.contexts_summary([fits]).rows[0][1],
                 dict(tables.context_rows(fits))["CPUs"]):
        assert "oversubscribed" not in text.lower()


def test_launches_are_said_where_the_medians_are(tmp_path):
    """Three launches (--samples, from the real tool): the run line, the caption and the CSV say so; an
    oversubscribed run of several launches is ranked as the binary ranked it, not said to be unseparated."""
    run = load(DATA / "halo_launches.json")
    assert run.launches == 3 and all(len(s.launch_medians) == 3 for s in run.ran())
    assert run.describe().endswith(" steps x 3 launches")
    caption = tables.halo_table(run).caption
    assert f"{run.rounds} rounds per launch, 3 launches" in caption
    assert "bootstrap over launches, rounds and steps, at least Student's t over the launches" in caption
    doc = json.loads((DATA / "halo_launches.json").read_text())
    doc["context"]["oversubscribed"] = True
    text = tables.headline(_load_doc(tmp_path, doc, "over.json"))
    assert "not separated" not in text and text.endswith("timings include the scheduler's time slices")
    assert text.startswith(f"over: fastest {doc['fastest_group'][0]}, ") or " are tied within " in text


def test_breakdown_plot_shows_the_tables_median(tmp_path, monkeypatch):
    """The breakdown's stacked bars end at the table's median (validation excluded), its whiskers are the table's
    CI, and the strategies it marks are the fastest group the table marks."""
    from checkmpi import plots

    shown = {}
    monkeypatch.setattr(plots, "save_figure", lambda fig, *args: shown.setdefault("fig", fig))
    run = _load_doc(tmp_path, ranked_doc(["step1", "step4", "step7"], "step0"))
    plots.halo_breakdown(run, tmp_path)
    ax = shown["fig"].axes[0]
    scale = UNIT[re.search(r"median time per step \((\w+)\)", ax.get_xlabel()).group(1)]
    table = tables.halo_table(run)
    cells, table_scale = {row[0]: row for row in table.rows}, _unit(table.title)
    ends: dict[int, float] = {}
    for bar in ax.patches:  # each row's phases, stacked
        y = round(bar.get_y() + bar.get_height() / 2)
        ends[y] = max(ends.get(y, 0.0), bar.get_x() + bar.get_width())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    [whiskers] = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segments = whiskers.lines[2][0].get_segments()
    ran = sorted(run.ran(), key=lambda s: s.step)
    assert len(labels) == len(ends) == len(segments) == len(ran)
    for k, s in enumerate(ran):
        assert labels[k].startswith("* ") == (s.id in run.fastest_group) == cells[s.id][3].endswith("=")
        assert ends[k] == pytest.approx(s.step_time.median * scale)
        assert ends[k] / scale * table_scale == pytest.approx(float(cells[s.id][1]), abs=6e-3)  # as printed
        (lo, _), (hi, _) = segments[k]
        assert (lo, hi) == pytest.approx((s.step_time.ci[0] * scale, s.step_time.ci[1] * scale))
    assert "validation" not in " ".join(t.get_text() for t in ax.get_legend().get_texts())


def test_p2p_tables():
    pp = load(DATA / "p2p_pingpong.json")
    t = p2p_tables.p2p_tables(pp)
    assert t[0].headers[:3] == ["Size (B)", "median", "95% CI"] and len(t[0].rows) == len(pp.results)
    first = pp.results[0]["latency"]
    assert float(t[0].rows[0][1]) == pytest.approx(first["median"] * 1e6, abs=0.006)
    lo, hi = map(float, t[0].rows[0][2].split("-"))
    assert (lo, hi) == pytest.approx(tuple(v * 1e6 for v in first["median_ci"]), rel=5e-3, abs=0.006)
    fit = t[-1]
    seg = pp.fits["hockney"]["segments"][0]
    assert float(fit.rows[0][2]) == pytest.approx(seg["alpha"] * 1e6, abs=6e-4)
    for warning in pp.noise:
        assert f"warning: {warning}" in fit.caption
    lg = p2p_tables.p2p_tables(load(DATA / "p2p_loggp.json"))
    params = load(DATA / "p2p_loggp.json").fits["loggp"]
    for cell, key in zip(lg[1].rows[0], ("L", "o_s", "o_r", "g")):  # '-' where the tool says unphysical
        if key not in params.get("unphysical", {}):
            assert float(cell) == pytest.approx(params[key] * 1e6, abs=6e-4)
    dt = p2p_tables.p2p_tables(load(DATA / "p2p_datatype.json"))
    assert {r[4] for r in dt[0].rows} == {"yes", "no"}
    for mode in ("bw", "ring"):
        assert p2p_tables.p2p_tables(load(DATA / f"p2p_{mode}.json"))[0].rows


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("name", ["p2p_nbc", "p2p_nbc_pencil"])
def test_nbc_tables_are_osus_means(name, wide):
    run = load(DATA / f"{name}.json")
    made = p2p_tables.p2p_tables(run, wide)
    ops = list(dict.fromkeys(r["op"] for r in run.results))
    assert len(made) == len(ops)
    pencil = name.endswith("pencil")
    lead = 2 if pencil else 1
    columns = ["blocking", "pure comm", "compute"] + (["init", "MPI_Test", "MPI_Wait"] if wide else []) + ["overall"]
    for t, op in zip(made, ops):
        rows = [r for r in run.results if r["op"] == op]
        assert len(t.rows) == len(rows)
        assert t.headers[lead:] == ["MPI_Test calls" if wide else "tests"] + columns + ["overlap (%)"]
        scale = _unit(t.title)
        assert "max(0, 100 - (overall - compute) / pure comm" in t.caption
        assert "Open MPI has no progress thread" in t.caption
        for cells, r in zip(t.rows, rows):
            m = {k: r[k]["mean"] * scale
                 for k in ("blocking", "pure_comm", "compute", "test", "init", "wait", "overall")}
            if pencil:
                assert cells[:2] == ["x".join(map(str, r["grid"])), str(r["size"])]
            else:
                assert cells[0] == str(r["size"])
            assert cells[lead] == str(r["tests"])
            want = {"blocking": m["blocking"], "pure comm": m["pure_comm"], "compute": m["compute"] - m["test"],
                    "init": m["init"], "MPI_Test": m["test"], "MPI_Wait": m["wait"], "overall": m["overall"]}
            assert [float(c) for c in cells[lead + 1:-1]] == pytest.approx([want[c] for c in columns], abs=0.006)
            assert float(cells[-1]) == pytest.approx(r["overlap"], abs=0.051)
    if pencil:
        assert "x_to_y transpose on 2x2 pencils (MPI_Ialltoallv over 2 ranks), times in " in made[0].title
        assert made[0].headers[:2] == ["grid", "Bytes"]
    for warning in run.noise:  # the tool's noise flags, under the last table
        assert f"warning: {warning}" in made[-1].caption


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


def test_tables_fit_80_columns_without_cutting_numbers(monkeypatch):
    """Every table of every fixture at COLUMNS=80: no line longer, no cell cut short."""
    from checkmpi import report

    monkeypatch.setenv("COLUMNS", "80")
    halos, p2ps = load_all([str(p) for p in sorted([*DATA.glob("halo_*.json"), *DATA.glob("p2p_*.json")])])
    rep = report.build(halos, p2ps, None, report.ModelInputs(bin_dir=str(BUILD_BIN)))
    console = tables.console()
    assert console.width == 80
    with console.capture() as captured:
        report.print_report(rep, console)
    lines = captured.get().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "\u2026" not in captured.get()  # rich's ellipsis: a cell was cut
    assert sum(line.startswith("Headline: ") for line in lines) == len(halos)
    assert " ".join(captured.get().split()).count("where the time goes, predicted vs measured") == len(halos)


def test_explain_table():
    """Predicted and measured phase by phase, the measured side straight from the run's timers."""
    from checkmpi import report as R

    run = load(DATA / "halo_all_steps.json")
    rep = R.build([run], [load(DATA / "p2p_pingpong.json")], None, R.ModelInputs(bin_dir=str(BUILD_BIN)))
    table = next(t for t in rep.tables if "where the time goes" in t.title)
    assert len(table.rows) == 2 * len(run.ran())
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[table.title.rsplit("(", 1)[1].split()[0]]
    doc = json.loads((DATA / "halo_all_steps.json").read_text())
    entry, pred, meas = doc["results"][7], table.rows[14], table.rows[15]
    t, steps = entry["timers"], entry["steps"]
    assert pred[:2] == ["step7", "pred."] and meas[:2] == ["", "meas."]
    def shown(cell: str, value: float) -> bool:  # equal at the precision the table prints
        decimals = len(cell.split(".")[1]) if "." in cell else 0
        return float(cell) == pytest.approx(value, rel=0.01, abs=0.5 * 10 ** -decimals)

    assert shown(meas[2], t["pack"]["mean"] / steps * scale)
    assert shown(meas[3], t["mpi"]["mean"] / steps * scale)
    assert shown(meas[6], t["compute"]["mean"] / steps * scale)
    measured = (t["loop"]["mean"] - t["diag"]["mean"]) / steps
    assert shown(meas[7], measured * scale)
    # the ratio is of the unrounded prediction: within what the printed one allows
    half = 0.5 * 10 ** -(len(pred[7].split(".")[1]) if "." in pred[7] else 0)
    low, high = (measured * scale / (float(pred[7]) + half), measured * scale / (float(pred[7]) - half))
    assert low * 0.98 <= float(meas[8]) <= high * 1.02


def _fit_cells(table: tables.Table) -> dict[str, str]:
    return dict(zip(table.headers, table.rows[0]))


def test_unphysical_fit_values_are_dashes_with_the_reason(tmp_path):
    """Where checkmpi-p2p calls a fitted value unphysical (a latency, overhead or gap that is not positive), the
    tables print '-' and its reason, whatever else the fit holds; every other value is printed."""
    for name in ("p2p_loggp.json", "p2p_pingpong.json"):  # the recorded runs: '-' exactly where the JSON says
        run = load(DATA / name)
        for table in p2p_tables.p2p_tables(run):
            if table.title.endswith("LogGP parameters"):
                fit = run.fits["loggp"]
                for key, header in (("L", "L (us)"), ("o_s", "o_s (us)"), ("o_r", "o_r (us)"), ("g", "g (us)")):
                    wrong = key in (fit.get("unphysical") or {})
                    assert (_fit_cells(table)[header] == "-") == wrong, (name, key)
                    assert wrong == (fit[key] <= 0), (name, key)  # the tool's rule
                for reason in (fit.get("unphysical") or {}).values():
                    assert reason in table.caption
            if "Hockney fit" in table.title:
                for row, seg in zip(table.rows, run.fits["hockney"]["segments"]):
                    assert (row[2] == "-") == ("alpha" in (seg.get("unphysical") or {})) == (seg["alpha"] <= 0)
    # A fit as checkmpi-p2p writes it when the smallest size's round trip is shorter than its overheads.
    doc = json.loads((DATA / "p2p_loggp.json").read_text())
    fit = doc["fits"]["loggp"]
    fit["L"] = -1.17e-7
    fit["unphysical"] = {"L": "L = -0.117 us is not a latency: at 1 B half the round trip (0.173 us) is no longer "
                              "than o_s + o_r + (s-1)G (0.290 us), so the overheads measured there are too large"}
    doc["fits"]["hockney"] = {"segments": [{"min_size": 1, "max_size": 64, "alpha": 0.0, "beta": 1e9, "r2": 0.95,
                                            "unphysical": {"alpha": "alpha = 0.000 us is not a latency: ..."}}],
                              "breakpoints": []}
    path = tmp_path / "lg.json"
    path.write_text(json.dumps(doc))
    made = p2p_tables.p2p_tables(load(path))
    params = next(t for t in made if t.title.endswith("LogGP parameters"))
    cells = _fit_cells(params)
    assert cells["L (us)"] == "-" and cells["o_s (us)"] == f"{fit['o_s'] * 1e6:.3f}"
    assert params.caption.splitlines()[0] == "- for L: " + fit["unphysical"]["L"]
    hockney = next(t for t in made if "Hockney fit" in t.title)
    assert hockney.rows[0][2] == "-" and hockney.rows[0][3] == "1000.0"
    assert "segment 1: - for alpha: alpha = 0.000 us is not a latency" in hockney.caption


def test_context_names_the_cpu_and_its_caches():
    """The report's context says what the halo results depend on: rank 0's CPU and its L2 and L3, from the
    results' context (older files: "?")."""
    run = load(DATA / "halo_4ranks.json")
    cpu = run.context["cpu"]
    text = dict(tables.context_rows(run))["CPU (rank 0)"]
    assert text.startswith(cpu["model"] or "unknown CPU")
    for level in (c for c in cpu["caches"] if c["level"] >= 2):
        assert f"L{level['level']} " in text
    assert tables._cpu_text({"model": "X", "caches": [{"level": 1, "type": "data", "bytes": 32768, "shared_by": 1},
                                                      {"level": 2, "type": "unified", "bytes": 524288, "shared_by": 1},
                                                      {"level": 3, "type": "unified", "bytes": 33554432,
                                                       "shared_by": 16}]}) == "X; L2 512 KiB, L3 32 MiB shared by 16 CPUs"
    assert tables._cpu_text(None) == "?"


def test_osu_counterpart_tables_are_the_jsons_numbers():
    """bibw, mbw-mr, coll, rma and pingpong --threads (issue 33): a row per result, the tool's figures."""
    bibw = load(DATA / "p2p_bibw.json")
    t = p2p_tables.p2p_tables(bibw)[0]
    assert len(t.rows) == len(bibw.results) and "both directions" in t.caption
    assert float(t.rows[-1][1]) == pytest.approx(bibw.results[-1]["bandwidth"] * 1e-6, abs=0.06)
    mbw = load(DATA / "p2p_mbw-mr.json")
    t = p2p_tables.p2p_tables(mbw)[0]
    assert "2 pair(s)" in t.title and "pairs on one node: 2, across nodes: 0" in t.caption
    assert float(t.rows[0][2]) == pytest.approx(mbw.results[0]["message_rate"], abs=0.6)
    coll = load(DATA / "p2p_coll.json")
    made = p2p_tables.p2p_tables(coll)
    assert [m.title.split(": ")[1].split(" on ")[0] for m in made] == coll.config["ops"]
    first = next(r for r in coll.results if r["op"] == "allreduce")
    assert [float(x) for x in made[0].rows[0][1:4]] == pytest.approx(
        [first[k] * 1e6 for k in ("avg_latency", "min_latency", "max_latency")], abs=0.006)
    assert made[-1].rows == [["0"] + made[-1].rows[0][1:]]  # barrier: one row, no message
    rma = load(DATA / "p2p_rma.json")
    made = p2p_tables.p2p_tables(rma)
    assert len(made) == 3 and all("sync lock" in m.title for m in made)
    assert float(made[0].rows[0][1]) == pytest.approx(rma.results[0]["latency"]["median"] * 1e6, abs=0.006)
    threads = load(DATA / "p2p_pingpong_threads.json")
    assert "2 threads per rank" in p2p_tables.p2p_tables(threads)[0].title
