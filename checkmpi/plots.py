"""Plots of halo and point-to-point results, each written as PNG and SVG."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.ticker
import matplotlib.pyplot as plt
import numpy as np

from checkmpi.atomic import replacing
from checkmpi.machine import STAND_IN_NOTE, Link
from checkmpi.model import Prediction
from checkmpi.projection import Point
from checkmpi.results import HaloRun, P2PRun, opt_float, x_join
from checkmpi.p2p_tables import nbc_means
from checkmpi.tables import measured_total, phase_shares, pick_unit, pooled_text

matplotlib.use("Agg")  # files only; never needs a display (no figure exists yet, so switching is allowed)
matplotlib.rcParams["text.parse_math"] = False  # names are text: "$a$" in a file name is no formula


@dataclass
class Figure:
    title: str
    png: Path
    svg: Path


def save_figure(fig: plt.Figure, outdir: Path, name: str, title: str) -> Figure:
    """`fig` as OUTDIR/NAME.png and .svg (name made safe for a file), each written whole or not at all."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    png, svg = outdir / f"{stem}.png", outdir / f"{stem}.svg"
    try:
        with replacing(png) as temp:
            fig.savefig(temp, format="png", dpi=110, bbox_inches="tight")
        with replacing(svg) as temp:
            fig.savefig(temp, format="svg", bbox_inches="tight")
    finally:
        plt.close(fig)
    return Figure(title, png, svg)


def id_ticks(ax: plt.Axes, labels: list[str], fontsize: float = 8) -> None:
    """Strategy ids (or other names) under bars: slanted when there are many
    or long ones, so that neighbours never overlap."""
    slant = len(labels) > 6 or max((len(t) for t in labels), default=0) > 10
    ax.set_xticks(np.arange(len(labels)), labels, fontsize=fontsize, rotation=40 if slant else 0,
                  ha="right" if slant else "center", rotation_mode="anchor" if slant else "default")


def bars_width(groups: int, per_group: float = 0.4, least: float = 6.0) -> float:
    """Figure width (inches) for `groups` groups of bars and their labels."""
    return max(least, per_group * groups + 2.5)


def log_if_decades(ax: plt.Axes, values) -> int:
    """A log y axis when the positive values span more than a decade: a
    linear one would flatten every small value onto the axis. Returns how
    many values a log axis leaves out (zero or negative), 0 if it stays linear."""
    finite = [float(v) for v in np.ravel(values) if np.isfinite(v)]
    positive = [v for v in finite if v > 0]
    if not positive or max(positive) / min(positive) <= 10:
        return 0
    ax.set_yscale("log")
    return len(finite) - len(positive)


def wrapped(text: str, width: int = 100) -> str:
    """A long title as lines of at most `width` characters, never cut."""
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


# The loop's timed phases, validation apart (tables.PHASES): (timer, legend label, colour).
PARTS = (("compute", "compute (shift)", "#4c72b0"), ("mpi", "MPI calls + barriers", "#dd8452"),
         ("pack", "pack", "#55a868"), ("unpack", "unpack", "#c44e52"))


def halo_breakdown(run: HaloRun, outdir: Path) -> Figure:
    """Per strategy, the table's figure: the median time per step (validation excluded) with its 95% CI as
    whiskers, the bar split into phases by their shares of the loop without validation (tables.phase_shares);
    the fastest group (checkmpi-halo's ranking) marked."""
    ran = sorted(run.ran(), key=lambda s: s.step)
    unit, scale = pick_unit(max((max(s.step_time.median, s.step_time.ci[1] if s.step_time.ci else 0.0)
                                 for s in ran), default=0.0))
    median = np.array([s.step_time.median * scale for s in ran])
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(ran) + 2.2))
    y = np.arange(len(ran))
    left = np.zeros(len(ran))
    shares = [phase_shares(s) or {"other": 1.0} for s in ran]
    for timer, label, colour in (*PARTS, ("other", "other (untimed)", "#cccccc")):
        width = np.array([max(0.0, sh.get(timer, 0.0)) for sh in shares]) * median
        ax.barh(y, width, left=left, color=colour, label=label)
        left += width
    lo = np.array([s.step_time.ci[0] * scale if s.step_time.ci else m for s, m in zip(ran, median)])
    hi = np.array([s.step_time.ci[1] * scale if s.step_time.ci else m for s, m in zip(ran, median)])
    ax.errorbar((lo + hi) / 2, y, xerr=(hi - lo) / 2, fmt="none", ecolor="black", elinewidth=0.9, capsize=3,
                label="95% CI of the median")  # from lo to hi, wherever the median lies
    group = [s.id in run.fastest_group for s in ran]
    ax.set_yticks(y, [("* " if g else "") + s.label + ("" if s.valid else " (INVALID)") for s, g in zip(ran, group)])
    for tick, g in zip(ax.get_yticklabels(), group):
        tick.set_fontweight("bold" if g else "normal")
    fastest = next((s for s in ran if run.fastest_group and s.id == run.fastest_group[0]), None)
    if fastest is not None:  # the fastest's median: the group's bars end about here
        ax.axvline(fastest.step_time.median * scale, color="black", ls="--", lw=0.8)
    ax.invert_yaxis()
    ax.set_xlabel(f"median time per step ({unit}) over {pooled_text(run)}, validation excluded; whiskers: 95% CI\n"
                  "split by each phase's share of the loop without validation (means over ranks); "
                  "* bold: the fastest and those tied with it; dashed: the fastest's median"
                  + ("\nOVERSUBSCRIBED: timings include the scheduler's time slices" if run.oversubscribed else ""),
                  fontsize=8)
    ax.set_title(f"Median time per step by strategy and phase\n{run.name}: {run.describe()}", fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)  # outside: never hides a bar
    ax.grid(axis="x", alpha=0.3)
    return save_figure(fig, outdir, f"{run.name}-breakdown", "Median time per step by strategy and phase")


def halo_directions(run: HaloRun, outdir: Path) -> Figure:
    """Grouped bars: time per step in x, y and z (mean over ranks, bars from min to max)."""
    ran = sorted(run.ran(), key=lambda s: s.step)
    unit, scale = pick_unit(max((s.per_step(d, "max") for s in ran for d in "xyz" if d in s.timers), default=0.0))
    fig, ax = plt.subplots(figsize=(bars_width(len(ran), 0.45), 4.6))
    x = np.arange(len(ran))
    width = 0.26
    for k, (d, colour) in enumerate(zip("xyz", ("#4c72b0", "#55a868", "#c44e52"))):
        mean = np.array([s.per_step(d, "mean") * scale if d in s.timers else 0.0 for s in ran])
        lo = np.array([s.per_step(d, "min") * scale if d in s.timers else 0.0 for s in ran])
        hi = np.array([s.per_step(d, "max") * scale if d in s.timers else 0.0 for s in ran])
        ax.bar(x + (k - 1) * width, mean, width, color=colour, label=f"{d} direction",
               yerr=np.vstack([mean - lo, hi - mean]), capsize=3, error_kw={"elinewidth": 0.8})
    id_ticks(ax, [s.id for s in ran])
    ax.set_ylabel(f"time per step ({unit})")
    xlabel = "strategy (bars: mean over ranks; whiskers: min to max)"
    if any(s.raw["parts"]["schedule"] == "all-at-once" for s in ran):  # docs/halo.md, "Timers"
        xlabel += "\nall directions in flight at once (step7 on): the wait for them is in no direction"
    ax.set_xlabel(xlabel)
    ax.set_title(f"Exchange time per direction\n{run.name}: {x_join(run.dims)} ranks, local {x_join(run.local)}",
                 fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)  # outside: never hides a bar
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, outdir, f"{run.name}-directions", "Exchange time per direction")


def halo_comparison(runs: list[HaloRun], outdir: Path) -> Figure:
    """Grouped bars: median time per step of each strategy, one bar per run, whiskers its 95% CI."""
    ids = sorted({s.id: s.step for r in runs for s in r.ran()}.items(), key=lambda kv: kv[1])
    unit, scale = pick_unit(max((s.step_time.median for r in runs for s in r.ran()), default=0.0))
    fig, ax = plt.subplots(figsize=(bars_width(len(ids), 0.25 + 0.15 * len(runs)), 4.6))
    x = np.arange(len(ids))
    width = 0.8 / len(runs)
    for k, run in enumerate(runs):
        ran = {s.id: s.step_time for s in run.ran()}
        median = np.array([ran[i].median * scale if i in ran else 0.0 for i, _ in ids])
        lo = np.array([ran[i].ci[0] * scale if i in ran and ran[i].ci else m for (i, _), m in zip(ids, median)])
        hi = np.array([ran[i].ci[1] * scale if i in ran and ran[i].ci else m for (i, _), m in zip(ids, median)])
        grouped = [i in run.fastest_group for i, _ in ids]
        at = x + (k - (len(runs) - 1) / 2) * width
        ax.bar(at, median, width, edgecolor=["black" if g else "none" for g in grouped],
               linewidth=[1.5 if g else 0 for g in grouped],
               label=f"{run.name} ({run.nprocs} ranks, local {x_join(run.local)})")
        ax.errorbar(at, (lo + hi) / 2, yerr=(hi - lo) / 2, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
    id_ticks(ax, [i for i, _ in ids])
    ax.set_ylabel(f"median time per step ({unit}), 95% CI")
    ax.set_xlabel("strategy (outlined: each run's fastest and those tied with it)")
    ax.set_title("Comparison of runs", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(0, -0.32), fontsize=8)  # below the slanted ids
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, outdir, "comparison", "Comparison of runs")


def predicted_vs_measured(run: HaloRun, predictions: list[Prediction], outdir: Path) -> Figure:
    """Per strategy, the predicted phases stacked beside the measured ones."""
    from checkmpi.model_tables import measured_phases, predicted_phases

    measured = {s.id: s for s in run.ran()}
    pairs = [(p, measured[p.row.id]) for p in predictions if p.row.id in measured]
    unit, scale = pick_unit(max((max(p.total, measured_total(s)) for p, s in pairs), default=0.0))
    fig, ax = plt.subplots(figsize=(bars_width(len(pairs), 0.45), 4.6))
    x = np.arange(len(pairs))
    width = 0.38
    for k, (label, phases) in enumerate((("predicted", [predicted_phases(p) for p, _ in pairs]),
                                         ("measured", [measured_phases(s) for _, s in pairs]))):
        bottom = np.zeros(len(pairs))
        for timer, name, colour in PARTS:
            values = np.array([max(0.0, ph[timer]) for ph in phases]) * scale
            ax.bar(x + (k - 0.5) * width, values, width, bottom=bottom, color=colour, hatch="//" if k == 0 else None,
                   edgecolor="white" if k == 0 else None, alpha=0.6 if k == 0 else 1.0,
                   label=f"{name}, {label}")
            bottom += values
    id_ticks(ax, [p.row.id for p, _ in pairs])
    ax.set_ylabel(f"time per step ({unit})")
    ax.set_title(f"Predicted (hatched) vs measured, by phase\n{run.name}: {x_join(run.dims)} ranks, "
                 f"local {x_join(run.local)}", fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, outdir, f"{run.name}-predicted", "Predicted vs measured by phase")


def projection(points: list[Point], measured: dict[str, list[tuple[int, float]]], outdir: Path,
               name: str = "projection", stand_in: bool = False) -> Figure:
    """Predicted time per step against ranks, one line per strategy; measured points as markers (the axis says so
    only where there are some); stand_in: the title says that the on-node link times the off-node messages."""
    ids = [p.row.id for p in points[0].predictions]
    unit, scale = pick_unit(max([p.total for pt in points for p in pt.predictions]
                                + [t for pts in measured.values() for _, t in pts]))
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    ranks = [pt.nprocs for pt in points]
    cmap = plt.get_cmap("tab20")
    for i, sid in enumerate(ids):
        colour = cmap(i % 20)
        ax.plot(ranks, [pt.predictions[i].total * scale for pt in points], "-", color=colour, lw=1.2, label=sid)
        if sid in measured:
            n, t = zip(*measured[sid])
            ax.plot(n, np.array(t) * scale, "o", color=colour, ms=5)
    ax.set_xscale("log")
    ax.set_xticks(ranks, [str(n) for n in ranks])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    markers = any(measured.get(sid) for sid in ids)
    ax.set_xlabel("ranks (weak scaling" + ("; markers: measured)" if markers else ")"))
    ax.set_ylabel(f"time per step ({unit})")
    ax.set_title("Projected weak scale-up" + (f"\n({STAND_IN_NOTE})" if stand_in else ""), fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, ncol=1 + len(ids) // 16)
    return save_figure(fig, outdir, name, "Projected weak scale-up")


# ---- point-to-point -----------------------------------------------------------------------------------

def _median(stats: dict) -> float:
    return float(stats.get("median") or stats["mean"])


def _size_axes(ax: plt.Axes, ylabel: str, title: str, logy: bool = False, xlabel: str = "message size (bytes)"):
    """Message sizes in powers of two along x, labels, grid and legend."""
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)

def _hockney(run: P2PRun) -> Link | None:
    from checkmpi.p2p_profile import link_of

    segments = run.fits.get("hockney", {}).get("segments")
    if run.mode != "pingpong" or not segments or any(s.get("beta") is None for s in segments):
        return None  # no fit to draw (a null beta: times did not grow with size)
    return link_of([run])


def pingpong(run: P2PRun, outdir: Path) -> Figure:
    """Latency and bandwidth against message size, with the fitted Hockney model."""
    sizes = np.array([float(r["size"]) for r in run.results])
    median = np.array([_median(r["latency"]) for r in run.results]) * 1e6
    lo = np.array([float(r["latency"]["min"]) for r in run.results]) * 1e6
    hi = np.array([float(r["latency"]["max"]) for r in run.results]) * 1e6
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6), constrained_layout=True)
    ax1.fill_between(sizes, lo, hi, color="#4c72b0", alpha=0.2, label="min to max")
    ax1.plot(sizes, median, "o", color="#4c72b0", ms=4, label="measured (median)")
    ax2.plot(sizes, sizes / (median * 1e-6) / 1e6, "o", color="#4c72b0", ms=4, label="measured (size / median)")
    model = _hockney(run)
    if model is not None:
        grid = np.logspace(np.log10(max(sizes.min(), 1.0)), np.log10(sizes.max()), 200)
        t = np.array([model.time(s) for s in grid])
        ax1.plot(grid, t * 1e6, "-", color="#c44e52", label="Hockney fit  alpha + s/beta")
        ax2.plot(grid, grid / t / 1e6, "-", color="#c44e52", label="Hockney fit  s / (alpha + s/beta)")
        for b in run.fits["hockney"].get("breakpoints", []):
            for ax in (ax1, ax2):
                ax.axvline(float(b), color="grey", ls="--", lw=0.8)
        ax1.plot([], [], "--", color="grey", lw=0.8, label="protocol breakpoint")
    _size_axes(ax1, "latency, half round trip (us)", "Ping-pong latency", logy=True)
    _size_axes(ax2, "bandwidth (MB/s)", "Ping-pong bandwidth")
    log_if_decades(ax2, sizes / (median * 1e-6) / 1e6)
    fig.suptitle(wrapped(f"{run.name}: {run.context.get('mpi_library', '')}", 110), fontsize=9)
    return save_figure(fig, outdir, f"{run.name}-pingpong", "Ping-pong latency and bandwidth")


BANDWIDTH_TITLES = {"bw": "Streaming bandwidth", "bibw": "Bidirectional bandwidth (both ways)",
                    "mbw-mr": "Aggregate bandwidth of all pairs"}


def bandwidth(run: P2PRun, outdir: Path) -> Figure:
    """bw, bibw, mbw-mr: bandwidth against message size."""
    title = BANDWIDTH_TITLES[run.mode]
    sizes = np.array([float(r["size"]) for r in run.results])
    bw = np.array([float(r["bandwidth"]) for r in run.results]) / 1e6
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(sizes, bw, "o-", color="#4c72b0", ms=4, label=f"measured (window {run.config.get('window', '?')})")
    _size_axes(ax, "bandwidth (MB/s)", f"{title}\n{run.name}")
    log_if_decades(ax, bw)
    return save_figure(fig, outdir, f"{run.name}-{run.mode}", title)


def op_latency(run: P2PRun, outdir: Path) -> Figure:
    """coll, rma: the median latency against message size, one line per operation."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for op in dict.fromkeys(r["op"] for r in run.results):
        rows = [r for r in run.results if r["op"] == op and r["size"] > 0]
        if rows:
            ax.plot([float(r["size"]) for r in rows], [_median(r["latency"]) * 1e6 for r in rows], "o-", ms=4,
                    label=op)
    title = "Blocking collectives" if run.mode == "coll" else f"One-sided ({run.config.get('sync', '')})"
    _size_axes(ax, "latency, median (us)", f"{title}\n{run.name}", logy=True)
    return save_figure(fig, outdir, f"{run.name}-{run.mode}", f"{title} latency")


def loggp(run: P2PRun, outdir: Path) -> Figure:
    """Per-size o_s, o_r and g + G*s with the fitted line (log axes where sizes and times span decades), and
    the parameters themselves; one checkmpi-p2p calls unphysical is left out of the bars and named instead."""
    fit = run.fits.get("loggp") or {}
    wrong = fit.get("unphysical") or {}
    sizes = np.array([float(r["size"]) for r in run.results])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [3, 2]},
                                   constrained_layout=True)
    shown = []
    for key, label, colour in (("g_plus_Gs", "g + G*s (measured)", "#4c72b0"), ("o_s", "o_s (send overhead)",
                               "#55a868"), ("o_r", "o_r (receive overhead)", "#dd8452")):
        values = np.array([float(r[key]) * 1e6 if key in r else np.nan for r in run.results])
        ax1.plot(sizes, values, "o", ms=4, color=colour, label=label)
        shown.append(values)
    if {"g", "G"} <= fit.keys() and "G" not in wrong:
        grid = np.geomspace(max(sizes.min(), 1.0), sizes.max(), 200)
        line = (float(fit["g"]) + float(fit["G"]) * grid) * 1e6
        ax1.plot(grid, line, "-", color="#c44e52", label="fit g + G*s")
        shown.append(line)
    ax1.set_xscale("symlog", base=2, linthresh=1)
    hidden = log_if_decades(ax1, np.concatenate(shown))
    ax1.set_xlabel("message size (bytes)")
    ax1.set_ylabel("time (us)")
    ax1.set_title("LogGP measurements per size" + (f"\n({hidden} values <= 0 are off the log axis)" if hidden else ""),
                  fontsize=10)
    ax1.grid(alpha=0.3, which="both")
    ax1.legend(fontsize=8, loc="upper left")
    names = [k for k in ("L", "o_s", "o_r", "g") if k in fit and k not in wrong]
    colours = dict(zip(("L", "o_s", "o_r", "g"), ("#8172b3", "#55a868", "#dd8452", "#4c72b0")))
    bars = ax2.bar(names, [float(fit[k]) * 1e6 for k in names], color=[colours[k] for k in names])
    ax2.bar_label(bars, fmt="%.3f", fontsize=8)
    ax2.set_ylabel("time (us)")
    ax2.set_title("LogGP parameters", fontsize=10)
    notes = []
    if "G" in fit and "G" not in wrong:  # G is per byte: its own line rather than a bar on the microsecond axis
        G = float(fit["G"])
        notes.append(f"G = {G * 1e9:.4f} ns/byte (1/G = {1 / G / 1e6:.0f} MB/s)")
    left_out = [k for k in ("L", "o_s", "o_r", "g", "G") if k in wrong]
    if left_out:
        notes.append(f"not shown: {', '.join(left_out)} (not physical; the table says why)")
    ax2.set_xlabel("\n".join(notes))
    ax2.grid(axis="y", alpha=0.3)
    ax2.margins(y=0.15)
    fig.suptitle(f"{run.name}: LogGP (n = {fit.get('n', run.config.get('n', '?'))})", fontsize=10)
    return save_figure(fig, outdir, f"{run.name}-loggp", "LogGP parameters")


def datatype(run: P2PRun, outdir: Path) -> Figure:
    rows = [r for r in run.results if isinstance(r.get("datatype"), dict) and isinstance(r.get("packed"), dict)]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for key, label, marker, colour in (("datatype", "MPI_Type_vector", "o", "#4c72b0"),
                                       ("packed", "hand pack + contiguous", "s", "#55a868")):
        for contiguous, fill in ((True, "full"), (False, "none")):
            pts = [r for r in rows if bool(r.get("contiguous")) == contiguous]
            ax.plot([float(r["bytes"]) for r in pts],
                    [_median(r[key]) * 1e6 for r in pts], marker, ls="", color=colour, fillstyle=fill,
                    ms=7 if key == "datatype" else 5,
                    label=f"{label}, {'contiguous' if contiguous else 'non-contiguous'} tuples")
    _size_axes(ax, "half round trip, median (us)", f"Derived datatypes vs hand packing\n{run.name}", logy=True,
               xlabel="payload (bytes)")
    return save_figure(fig, outdir, f"{run.name}-datatype", "Derived datatypes vs hand packing")


def ring(run: P2PRun, outdir: Path) -> Figure:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for n in sorted({int(r["nprocs"]) for r in run.results}):
        pts = [r for r in run.results if int(r["nprocs"]) == n]
        ax.plot([float(r["size"]) for r in pts], [_median(r["time"]) * 1e6 for r in pts], "o-", ms=4,
                label=f"{n} ranks")
    _size_axes(ax, "time per ring iteration, median (us)", f"Ring exchange\n{run.name}", logy=True)
    return save_figure(fig, outdir, f"{run.name}-ring", "Ring exchange")


def _nbc_groups(run: P2PRun) -> tuple[list[str], list[int], bool]:
    """The operations (in order), the MPI_Test counts, and whether these are pencil transposes."""
    ops = list(dict.fromkeys(str(r["op"]) for r in run.results))
    return ops, sorted({int(r["tests"]) for r in run.results}), "grid" in run.results[0]


def nbc_overlap(run: P2PRun, outdir: Path) -> Figure:
    """OSU's overlap against size: a line per operation and MPI_Test count."""
    ops, tests, pencil = _nbc_groups(run)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, op in enumerate(ops):
        for j, n in enumerate(tests):
            pts = [r for r in run.results if r["op"] == op and int(r["tests"]) == n]
            ax.plot([float(r["size"]) for r in pts], [opt_float(r.get("overlap")) for r in pts], ms=5,
                    marker="os^Dv<>"[i % 7], ls=("-", "--", ":", "-.")[j % 4], color=f"C{i % 10}",
                    label=f"{op}, {n} MPI_Test call{'' if n == 1 else 's'}")
    ax.set_ylim(-3, 103)
    thread = (run.context.get("progress_thread") or {}).get("active")
    _size_axes(ax, "overlap (%), OSU's definition",
               f"Overlap of communication with computation\n{run.name}: {run.context.get('nprocs', '?')} ranks, "
               f"progress thread {'on' if thread else 'off'}",
               xlabel="bytes one rank sends (the most over ranks)" if pencil else "message size (bytes)")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    return save_figure(fig, outdir, f"{run.name}-overlap", "Overlap of non-blocking collectives with computation")


NBC_TOP = 3.0  # y range of the breakdown, in units of the pure communication time
# Parts of post + compute + wait, bottom to top: (column of nbc_means, label, colour).
NBC_PARTS = (("init", "init (post)", "#8172b3"), ("compute", "compute", "#4c72b0"),
             ("MPI_Test", "MPI_Test calls", "#55a868"), ("MPI_Wait", "MPI_Wait", "#dd8452"))


def nbc_breakdown(run: P2PRun, outdir: Path) -> Figure:
    """Per operation and size, post + compute + wait as stacked bars, every part
    divided by the pure communication time: compute is about 1 (calibrated),
    the bar's top is 1 with full overlap and 2 with none."""
    ops, tests, pencil = _nbc_groups(run)
    widest = max(len({int(r["size"]) for r in run.results if r["op"] == op}) for op in ops) * len(tests)
    fig, axes = plt.subplots(len(ops), 1, figsize=(max(8.0, 0.3 * widest + 3), 3.0 * len(ops) + 0.6), squeeze=False,
                             constrained_layout=True)
    for ax, op in zip(axes[:, 0], ops):
        rows = [r for r in run.results if r["op"] == op]
        keys = list(dict.fromkeys(x_join(r["grid"]) if pencil else str(int(r["size"])) for r in rows))
        at = {((x_join(r["grid"]) if pencil else str(int(r["size"]))), int(r["tests"])): r for r in rows}
        x = np.arange(len(keys))
        width = 0.8 / len(tests)
        for j, n in enumerate(tests):
            means = [nbc_means(at[(k, n)]) for k in keys]
            rel = {c: np.array([m[c] / m["pure comm"] for m in means]) for c in means[0]}  # over pure comm
            xs = x + (j - (len(tests) - 1) / 2) * width
            bottom = np.zeros(len(keys))
            for col, label, colour in NBC_PARTS:
                ax.bar(xs, rel[col], width, bottom=bottom, color=colour, hatch=("", "//", "..", "xx")[j % 4],
                       edgecolor="white", label=label if j == 0 else None)
                bottom += rel[col]
            # Beyond NBC_TOP (a noisy iteration in a mean): the value as text at the top.
            for xv, total in zip(xs, bottom):
                if total > NBC_TOP:
                    ax.text(xv, NBC_TOP * 0.98, f"{total:.1f}", ha="center", va="top", fontsize=7, rotation=90)
            blocking = rel["blocking"]
            ax.plot(xs, np.minimum(blocking, NBC_TOP * 0.98), "x", color="black", ms=6,
                    label="blocking collective (^: beyond the axis)" if j == 0 else None)
            over = blocking > NBC_TOP
            ax.plot(xs[over], np.full(int(over.sum()), NBC_TOP * 0.98), "^", color="black", ms=6)
        ax.set_ylim(0, NBC_TOP)
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.axhline(2.0, color="grey", lw=0.8, ls=":")
        ax.set_xticks(x, keys, rotation=45 if len(keys) > 10 else 0, fontsize=8)
        ax.set_ylabel("time / pure comm")
        ax.set_title(f"{op}: post + compute + wait; bars per {'grid' if pencil else 'size'}: "
                     f"{', '.join(map(str, tests))} MPI_Test calls (left to right)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    axes[-1, 0].set_xlabel("grid (doubles)" if pencil else "message size (bytes)")
    fig.suptitle(f"{run.name}: time breakdown (1 = pure comm; top at 1: fully hidden, at 2: not at all)", fontsize=9)
    return save_figure(fig, outdir, f"{run.name}-breakdown", "Non-blocking collectives: time breakdown")


def nbc(run: P2PRun, outdir: Path) -> list[Figure]:
    return [nbc_overlap(run, outdir), nbc_breakdown(run, outdir)]


def self_exchange(run: P2PRun, outdir: Path) -> Figure:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot([float(r["size"]) for r in run.results], [_median(r["latency"]) * 1e6 for r in run.results], "o-", ms=4,
            label="measured (median)")
    _size_axes(ax, "time of one self-exchange (us)", f"Self-exchange through MPI\n{run.name}", logy=True)
    return save_figure(fig, outdir, f"{run.name}-self", "Self-exchange")


def barrier(run: P2PRun, outdir: Path) -> Figure:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot([int(r["nprocs"]) for r in run.results], [_median(r["latency"]) * 1e6 for r in run.results], "o-", ms=4,
            label="measured (median)")
    _size_axes(ax, "MPI_Barrier latency, median (us)", f"Barrier\n{run.name}", xlabel="ranks")
    return save_figure(fig, outdir, f"{run.name}-barrier", "MPI_Barrier latency")


# Each returns a Figure, or a list of them.
P2P_PLOTS = {"pingpong": pingpong, "bw": bandwidth, "loggp": loggp, "datatype": datatype, "ring": ring, "nbc": nbc,
             "self": self_exchange, "barrier": barrier, "bibw": bandwidth, "mbw-mr": bandwidth, "coll": op_latency,
             "rma": op_latency}
