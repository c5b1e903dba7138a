"""The terminal tables (checkmpi.tables, p2p_tables, model_tables): numbers as in the JSON, units, widths, notes."""

from __future__ import annotations

import json

import pytest
from conftest import BUILD_BIN, DATA

from checkmpi import p2p_tables, tables
from checkmpi.results import load, load_all


def _unit(title: str) -> float:
    return {"s": 1.0, "ms": 1e3, "us": 1e6}[title.rsplit(" in ", 1)[1].split(",")[0].split()[0]]


@pytest.mark.parametrize("name", ["halo_4ranks.json", "halo_all_steps.json"])
def test_halo_table_numbers_match_json(name):
    run = load(DATA / name)
    table = tables.halo_table(run)
    assert table.headers == ["strategy", "median", "95% CI", "tail", "%MPI", "x GB/s", "y GB/s", "z GB/s",
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
        d, t = entry["step_time"], entry["timers"]
        assert row[0] == entry["strategy"]
        assert float(row[1]) == pytest.approx(d["median"] * scale, abs=6e-3)
        lo, hi = map(float, row[2].split("-"))
        assert (lo, hi) == pytest.approx((d["median_ci"][0] * scale, d["median_ci"][1] * scale), rel=5e-3, abs=6e-3)
        assert float(row[3].rstrip("!")) == pytest.approx(d["p95"] / d["median"], rel=5e-3, abs=6e-3)
        assert row[3].endswith("!") == bool(entry["noise"])
        assert float(row[4]) == pytest.approx(100 * t["comm"]["max"] / t["loop"]["max"], abs=0.06)
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
    assert float(row["spread"].rstrip("%")) == pytest.approx(100 * s.repeat_spread, abs=0.06)
    assert float(row["z msg KiB"]) == pytest.approx(s.message_bytes("z") / 1024, abs=0.06)
    rows = {cells[0]: dict(zip(h, cells)) for cells in table.rows}
    for s in run.ran():  # the tail and its noise marker, as in the narrow table
        tail = rows[s.label]["tail"]
        assert tail.endswith("!") == bool(s.noise)
        assert float(tail.rstrip("!")) == pytest.approx(s.step_time.p95 / s.step_time.median, rel=5e-3, abs=6e-3)


def test_headline_names_the_fastest_and_its_speed_up():
    run = load(DATA / "halo_all_steps.json")
    best = min((s for s in run.ran() if s.id != "mock"), key=lambda s: s.step_time.median)  # mock: the floor
    step0 = run.strategies[0]
    text = tables.headline(run)
    assert text.startswith(f"halo_all_steps: fastest {best.label},")
    assert f"{step0.step_time.median / best.step_time.median:.2f}x faster than step0" in text
    loop = best.timers["loop"].mean
    assert f"{100 * best.timers['mpi'].mean / loop:.0f}% MPI" in text


def test_comparison_table_per_step_and_per_byte():
    a = load(DATA / "halo_4ranks.json")
    b = load(DATA / "halo_all_steps.json")
    table = tables.comparison_table([a, b])
    assert table.headers[1:] == [f"run 1 ({table.headers[1].split('(')[1]}", "run 1 ns/B",
                                 f"run 2 ({table.headers[1].split('(')[1]}", "run 2 ns/B"]
    assert [r[0] for r in table.rows][:3] == ["step0", "step1", "step2"]
    step3 = next(r for r in table.rows if r[0] == "step3")
    assert step3[1:3] == ["-", "-"]  # not in the first run
    for col in (1, 3):
        assert sum(r[col].endswith("*") for r in table.rows) == 1
    scale = {"ms": 1e3, "us": 1e6, "s": 1}[table.headers[1].split("(")[1].rstrip(")")]
    s = a.strategies[2]
    assert float(table.rows[2][1].rstrip("*")) == pytest.approx(s.step_time.median * scale, abs=6e-4)
    per_byte = s.timers["comm"].mean / s.steps / s.bytes_per_step
    assert float(table.rows[2][2]) == pytest.approx(per_byte * 1e9, abs=6e-4)


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
