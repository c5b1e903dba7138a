"""A report: context, tables and plots of one or more results files, for the
terminal and as one self-contained HTML page."""

from __future__ import annotations

import argparse
import base64
import dataclasses
import functools
import html
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.text import Text

from checkmpi import __version__
from checkmpi import bounds, catalog, halo_plan
from checkmpi import model_tables as MT
from checkmpi import tables as T
from checkmpi.catalog import Row
from checkmpi.atomic import refuse_inputs, refuse_odd_target, write_text
from checkmpi.errors import CheckmpiError
from checkmpi.p2p_tables import p2p_tables
from checkmpi.machine import STAND_IN_WARNING, Machine
from checkmpi.model import Case, Geometry, Prediction, predict
from checkmpi.projection import Campaign
from checkmpi.results import HaloRun, P2PRun, load_all, new_path, run_folder, x_join


@dataclass
class Report:
    contexts: list[T.Table] = field(default_factory=list)  # one full block per results file
    summary: T.Table | None = None  # the same, one line per file
    headlines: list[str] = field(default_factory=list)  # per halo run: the fastest group, the next, the loop
    tables: list[T.Table] = field(default_factory=list)
    html_tables: list[T.Table] = field(default_factory=list)  # the same, halo tables with every figure
    figures: list = field(default_factory=list)  # plots.Figure
    notes: list[str] = field(default_factory=list)


@dataclass
class ModelInputs:
    """What the report predicts from: a machine profile, else the p2p results among its files."""

    machine: Machine | None = None
    copy_bandwidth: float | None = None  # with p2p results: bytes/s, else the run's probe
    bin_dir: str | None = None  # where checkmpi-halo lists the strategies
    scale: list[int] = field(default_factory=list)  # rank counts of the projection (default: the runs')
    ranks_per_node: int | None = None
    campaign: Campaign | None = None  # a campaign's weak scale-up: measured points of the projection


def build(halos: list[HaloRun], p2ps: list[P2PRun], plots_dir: Path | None,
          inputs: ModelInputs | None = None, wide: bool = False) -> Report:
    """Tables for every run, a comparison of halo runs, predicted vs measured
    phase by phase and the scale-up projection when a model is at hand, and
    (with plots_dir) the plots."""
    inputs = inputs or ModelInputs()
    runs = [*halos, *p2ps]
    rep = Report(contexts=[T.context_table(r) for r in runs], summary=T.contexts_summary(runs))
    rep.headlines = [T.headline(run) for run in halos]
    for run in halos:
        rep.tables.append(T.halo_table(run, wide))
        rep.html_tables.append(T.halo_table(run, wide=True))
    shared = len(rep.tables)  # the comparison and the predictions are the same in both
    if len(halos) > 1:
        rep.tables.append(T.comparison_table(halos))
    predictions: dict[str, list[Prediction]] = {}
    for run in halos:
        made = _explain(run, p2ps, inputs, rep)
        if made:
            predictions[run.name] = made[0]
            rep.tables.append(MT.explain_table(run, made[0], made[1]))
    projection = _projection(halos, p2ps, inputs, rep)
    rep.html_tables += rep.tables[shared:]
    for run in p2ps:
        rep.tables.extend(p2p_tables(run, wide))
        rep.html_tables.extend(p2p_tables(run, wide=True))
    if plots_dir is not None:
        _plots(rep, halos, p2ps, predictions, projection, plots_dir)
    return rep


def case_of(run: HaloRun, ranks_per_node: int | None = None) -> Case:
    return Case(run.dims, run.local, Geometry.of(run.config), run.precision, str(run.config.get("sync", "barrier")),
                int(run.config.get("border", 10)), ranks_per_node or int(run.context.get("ranks_per_node") or 0)
                or None, str(run.config.get("compute", "one-pass")), bool(run.config.get("self_copy", False)),
                str(run.context.get("backend", "host")),
                run.memcpy_bandwidth.mean if run.memcpy_bandwidth and run.memcpy_bandwidth.mean > 0 else None,
                float(run.context["ranks_per_cpu"]) if run.context.get("ranks_per_cpu") else None)


def _machine_for(run: HaloRun | None, p2ps: list[P2PRun], inputs: ModelInputs,
                 real_bytes: Callable[[], int]) -> Machine | None:
    """The --machine profile, or one from ping-pong results for numbers of real_bytes() bytes, or None."""
    if inputs.machine is not None:
        return inputs.machine
    if not any(r.mode in ("pingpong", "loggp") for r in p2ps):
        return None
    from checkmpi.p2p_profile import copy_bandwidth_for, machine_from_p2p

    return machine_from_p2p(p2ps, copy_bandwidth_for(run, inputs.copy_bandwidth), real_bytes())


def _explain(run: HaloRun, p2ps: list[P2PRun], inputs: ModelInputs,
             rep: Report) -> tuple[list[Prediction], Machine] | None:
    try:
        machine = _machine_for(run, p2ps, inputs, lambda: Geometry.of(run.config).real_bytes)
        if machine is None or not run.ran():
            return None
        rows = _rows(run, inputs)
    except CheckmpiError as e:  # the tables still stand without a prediction
        rep.notes.append(f"{run.name}: no prediction: {e.message}")
        return None
    return predict(rows, case_of(run, inputs.ranks_per_node), machine), machine


def _rows(run: HaloRun, inputs: ModelInputs) -> list[Row]:
    """The catalog rows of what the run ran, under the run's ids."""
    rows = catalog.rows_of_run(run)
    return [dataclasses.replace(rows[s.id], id=s.id, alias=s.alias) for s in run.ran() if s.id in rows]


def _projection(halos: list[HaloRun], p2ps: list[P2PRun], inputs: ModelInputs, rep: Report):
    """With runs of one block size at several rank counts (or --scale): the
    projection of the first run's strategies, the runs as measured points."""
    from checkmpi.projection import measured_points

    if inputs.campaign is not None:
        return _campaign_projection(inputs.campaign, p2ps, inputs, rep)
    ran = [r for r in halos if r.ran()]
    counts = inputs.scale or sorted({r.nprocs for r in ran})
    if not ran or len(counts) < 2 or len({r.local for r in ran}) != 1:
        if inputs.scale:  # asked for: say why there is none
            why = ("no halo run to project from" if not ran else
                   f"the halo runs have {len({r.local for r in ran})} local blocks, not one")
            rep.notes.append(f"no projection for --scale: {why}")
        return None
    first = ran[0]
    try:
        machine = _machine_for(first, p2ps, inputs, lambda: Geometry.of(first.config).real_bytes)
        if machine is None:
            if inputs.scale:
                rep.notes.append("no projection for --scale: it needs --machine FILE or a ping-pong result")
            return None
        rows = _rows(first, inputs)
    except CheckmpiError as e:
        rep.notes.append(f"no projection: {e.message}")
        return None
    # Ranks per node as the largest run had them (a one-rank run says 1).
    widest = max(ran, key=lambda r: r.nprocs)
    case = case_of(first, inputs.ranks_per_node or int(widest.context.get("ranks_per_node") or 0) or None)
    return _project(counts, case, rows, machine, measured_points(ran), rep, inputs)


def _campaign_projection(c: Campaign, p2ps: list[P2PRun], inputs: ModelInputs, rep: Report):
    try:
        # The block in bytes from the binary's plan, asked only once a machine can be had.
        geometry = functools.cache(lambda: Geometry.of(
            halo_plan.make(["--no-input", "--local", x_join(c.local), "--np", "1"], inputs.bin_dir).raw))
        machine = _machine_for(None, p2ps, inputs, lambda: geometry().real_bytes)
        if machine is None:
            rep.notes.append("no projection: the campaign's points need --machine FILE or a ping-pong result")
            return None
        rows = catalog.load(",".join(c.strategies), inputs.bin_dir)
        case = Case((1, 1, 1), c.local, geometry(), ranks_per_node=inputs.ranks_per_node or c.ranks_per_node)
    except CheckmpiError as e:
        rep.notes.append(f"no projection: {e.message}")
        return None
    return _project(inputs.scale or c.counts, case, rows, machine, c.measured, rep, inputs)


def _project(counts: list[int], case: Case, rows: list[Row], machine: Machine, measured, rep: Report,
             inputs: ModelInputs):
    from checkmpi.projection import project

    points = project(counts, case, rows, machine, inputs.bin_dir)
    rep.tables.append(MT.placement_table(points, case.ranks_per_node, case.local))
    rep.tables.append(MT.projection_table(points, machine))
    stand_in = machine.off_node_link(sum(pt.links["inter"] for pt in points)) == "on-node stand-in"
    if stand_in:
        rep.notes.append(f"projection: {STAND_IN_WARNING}")
    return points, measured, stand_in


def _plots(rep: Report, halos: list[HaloRun], p2ps: list[P2PRun], predictions: dict, projection,
           outdir: Path) -> None:
    from checkmpi import plots  # matplotlib loads only when plots are wanted

    for run in halos:
        if run.ran():
            rep.figures += [plots.halo_breakdown(run, outdir), plots.halo_directions(run, outdir)]
        if run.name in predictions and run.ran():
            rep.figures.append(plots.predicted_vs_measured(run, predictions[run.name], outdir))
    if len([r for r in halos if r.ran()]) > 1:
        rep.figures.append(plots.halo_comparison([r for r in halos if r.ran()], outdir))
    if projection is not None:
        points, measured, stand_in = projection
        rep.figures.append(plots.projection(points, measured, outdir, stand_in=stand_in))
    for run in p2ps:
        if run.results:
            made = plots.P2P_PLOTS[run.mode](run, outdir)
            rep.figures += made if isinstance(made, list) else [made]


def print_report(rep: Report, out: Console) -> None:
    """Context (in full for one file, a line each for several), then the tables."""
    context = rep.contexts if len(rep.contexts) <= 1 or rep.summary is None else [rep.summary]
    for table in context:
        T.render(table, out)
    for line in rep.headlines:
        out.print(Text("Headline: " + line, style="bold"))
    if rep.headlines:
        out.print()
    for table in rep.tables:
        T.render(table, out)
    for note in rep.notes:
        out.print(note)


# ---- HTML -------------------------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1500px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
p.title { font-weight: 600; margin: 1.5em 0 .3em; overflow-wrap: anywhere; }
div.table { overflow-x: auto; max-width: 100%; margin-bottom: .4em; }
table { border-collapse: separate; border-spacing: 0; font-size: .8em; }
th, td { padding: .2em .3em; text-align: right; }
td { white-space: nowrap; }
th { white-space: normal; vertical-align: bottom; border-bottom: 2px solid #444; }
td.name, th.name { text-align: left; }
td.name { white-space: normal; overflow-wrap: anywhere; min-width: 6em; } td.id { white-space: nowrap; }
tr > :first-child { position: sticky; left: 0; background: #fff; z-index: 1; }
tbody:not(:last-child) tr:last-child > * { border-bottom: 1px solid #bbb; }
td.noisy { color: #b3261e; font-weight: 600; }
p.note { color: #555; font-size: .85em; margin: 0 0 1.5em; white-space: pre-line; overflow-wrap: anywhere; }
table.context td:first-child { font-weight: 600; }
p.headline { font-size: 1.1em; font-weight: 600; background: #eef4fb; border-left: 4px solid #4c72b0;
  padding: .5em .8em; }
figure { margin: 1em 0 2em; }
figure img { max-width: 100%; height: auto; box-sizing: border-box; border: 1px solid #eee; }
"""

NOISY = re.compile(r"^[0-9.]+!$")  # a figure the tables mark noisy (tables.halo_table)


def _html_table(table: T.Table, css_class: str = "") -> str:
    """The title above a box that scrolls sideways when the table is wider
    than the page, its first column staying in view; the caption below."""
    ids = max((len(row[0]) for row in table.rows if row), default=0) <= 32  # short names: kept on one line

    def cell(tag: str, i: int, text: str) -> str:
        classes = ["name"] if i < table.left_columns else ["noisy"] if tag == "td" and NOISY.match(text) else []
        classes += ["id"] if i == 0 and ids else []
        title = ' title="noisy: see the warning below the table"' if "noisy" in classes else ""
        return f'<{tag} class="{" ".join(classes)}"{title}>{_e(text)}</{tag}>'

    head = "".join(cell("th", i, h) for i, h in enumerate(table.headers))
    body, group = [], []
    for i, row in enumerate(table.rows):
        group.append("<tr>" + "".join(cell("td", j, c) for j, c in enumerate(row)) + "</tr>")
        if i in table.section_after or i == len(table.rows) - 1:
            body.append("<tbody>" + "".join(group) + "</tbody>")
            group = []
    cls = f' class="{css_class}"' if css_class else ""
    thead = f"<thead><tr>{head}</tr></thead>" if any(table.headers) else ""
    out = (f'<p class="title">{_e(table.title)}</p>'
           f'<div class="table"><table{cls}>{thead}{"".join(body)}</table></div>')
    return out + (f'<p class="note">{_e(table.caption)}</p>' if table.caption else "")


def _e(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


def to_html(rep: Report, title: str = "checkmpi report") -> str:
    """One page, no external references: the PNGs are embedded as base64."""
    parts = [(f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
              f"<style>{CSS}</style></head><body>"),
             f"<h1>{_e(title)}</h1>",
             f"<p>made by checkmpi {__version__} on {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}</p>",
             '<section id="context"><h2>Context</h2>']
    parts += [_html_table(t, "context") for t in rep.contexts]
    parts.append('</section><section id="results"><h2>Results</h2>')
    parts += [f'<p class="headline">{_e(line)}</p>' for line in rep.headlines]
    parts += [_html_table(t) for t in rep.html_tables]
    parts += [f'<p class="note">{_e(n)}</p>' for n in rep.notes]
    if rep.figures:
        parts.append('</section><section id="plots"><h2>Plots</h2>')
        for fig in rep.figures:
            data = base64.b64encode(fig.png.read_bytes()).decode("ascii")
            parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{_e(fig.title)}">'
                         f"<figcaption>{_e(fig.title)} ({_e(fig.png.name)}, SVG beside it)</figcaption></figure>")
    parts.append("</section></body></html>\n")
    return "\n".join(parts)


def write_html(rep: Report, path: Path) -> None:
    write_text(path, to_html(rep))


def report_command(args: argparse.Namespace) -> int:
    """`checkmpi report FILE...`: tables, plots and the HTML page of results files."""
    from checkmpi.predict import gbs
    from checkmpi.projection import load_campaign, parse_scale

    halos, p2ps = load_all(args.files)
    folder = Path(args.outdir) if args.outdir else report_folder(args.files)
    plots = None if args.no_report else Path(args.plots) if args.plots else folder / "plots"
    if not args.files and not args.campaign:
        raise CheckmpiError("report needs results files or --campaign REPORT.json")
    html = Path(args.html) if args.html else None if args.no_report else folder / "report.html"
    if html is not None:  # checked before any plot is written: a refused command writes nothing
        refuse_inputs(html, [Path(f) for f in (*args.files, args.machine, args.campaign) if f], "--html")
        refuse_odd_target(html)
    inputs = ModelInputs(_report_machine(args), gbs(args.copy_bandwidth), args.bin,
                         parse_scale(args.scale) if args.scale else [], args.ranks_per_node,
                         load_campaign(args.campaign) if args.campaign else None)
    rep = build(halos, p2ps, plots, inputs, wide=args.wide)
    print_report(rep, T.console(args.wide))
    if rep.figures:
        print(f"checkmpi: plots in {plots}", file=sys.stderr)
    if html is not None:
        write_html(rep, html)
        print(f"checkmpi: report: {html}", file=sys.stderr)
    return 0


def _report_machine(args: argparse.Namespace):
    bounds.at_most(args.ranks_per_node, "--ranks-per-node", bounds.MAX_NP)
    if args.ranks_per_node is not None and args.ranks_per_node < 1:
        raise CheckmpiError(f"--ranks-per-node must be positive, got {args.ranks_per_node}")
    if not args.machine:
        return None
    from checkmpi.machine import load_machine

    return load_machine(args.machine)


def report_folder(files: list[str]) -> Path:
    """One file: its companions' folder; several: a new results/report-<time>/."""
    if len(files) == 1:
        return run_folder(Path(files[0]))
    return new_path("report", "")
