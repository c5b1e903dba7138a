"""A campaign's plots: scale-up curves, per-size variability with every
submission shown, and the failure matrix; each as PNG and SVG, written whole
or not at all."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from checkmpi.campaign.plan import Run, points, sweep_points
from checkmpi.campaign.report import UNRECORDED, Cell, point_label, scaleup, status_text, sweep_unit
from checkmpi.campaign.spec import Spec, Sweep
from checkmpi.plots import Figure, id_ticks, save_figure
from checkmpi.tables import pick_unit

matplotlib.use("Agg")
matplotlib.rcParams["text.parse_math"] = False  # names are text: "$a$" in a file name is no formula

STATUS_COLOURS = {"ok": "#55a868", "invalid": "#dd8452", "too_slow": "#8172b3", "crashed": "#c44e52",
                  "not_started": "#8c8c8c", "interrupted": "#e8d36a", "running": "#a6cee3", "missing": "#ffffff"}


def all_plots(spec: Spec, cells: dict[str, Cell], outdir: Path) -> list[Figure]:
    figures = [scaleup_plot(spec, cells, sw, outdir) for sw in spec.sweeps if sw.kind == "scale"]
    figures += [variability_plot(spec, cells, sw, outdir) for sw in spec.sweeps]
    figures.append(failure_matrix(spec, cells, outdir))
    return figures


def scaleup_plot(spec: Spec, cells: dict[str, Cell], sweep: Sweep, outdir: Path) -> Figure:
    """Loop time against ranks (every ok run as a dot, the median as a line) and efficiency."""
    pts = sweep_points(sweep)
    rows = scaleup(spec, cells, sweep)
    unit, scale = pick_unit(max((c.loop for c in cells.values() if c.loop is not None and c.run.point in pts),
                                default=0.0))
    fig, (ax, ax_eff) = plt.subplots(1, 2, figsize=(11, 4.2))
    nps = [p.np for p in pts]
    for i, s in enumerate(spec.strategies):
        colour = f"C{i}"
        for p in pts:
            times = [cells[Run(k, p, s).id].loop for k in range(1, spec.repetitions + 1)]
            ok = [t * scale for t in times if t is not None]
            ax.scatter([p.np] * len(ok), ok, color=colour, alpha=0.35, s=18)
        med = [r["strategies"][s]["median_s"] for r in rows]
        eff = [r["strategies"][s]["efficiency"] for r in rows]
        ax.plot(nps, [np.nan if m is None else m * scale for m in med], "-o", color=colour, label=s)
        ax_eff.plot(nps, [np.nan if e is None else 100 * e for e in eff], "-o", color=colour, label=s)
    for a in (ax, ax_eff):
        a.set_xscale("log", base=2)
        a.set_xticks(nps, [f"{p.np}\n{'x'.join(map(str, p.procs))}" for p in pts])
        a.set_xlabel("ranks (grid)")
        a.grid(alpha=0.3)
    ax.set_ylabel(f"loop time ({unit}), max over ranks")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Scale-up, {sweep.name}\nlines: median over submissions; dots: every ok run", fontsize=10)
    ax_eff.axhline(100, color="#999999", lw=0.8, ls="--")
    ax_eff.set_ylim(bottom=0)
    ax_eff.set_ylabel("weak-scaling efficiency (%)")
    ax_eff.set_title("Efficiency: time at the first point / time", fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(fig, outdir, f"scaleup-sweep{sweep.index}", f"Scale-up, {sweep.name}")


def variability_plot(spec: Spec, cells: dict[str, Cell], sweep: Sweep, outdir: Path) -> Figure:
    """Per point, the loop time of every submission (one colour each) and the median; failed
    runs as crosses on the bottom edge."""
    pts = sweep_points(sweep)
    n = len(spec.strategies)
    fig, axes = plt.subplots(1, n, figsize=(max(3.5, 0.9 * len(pts) + 2) * n + 1.5, 4.6), squeeze=False,
                             constrained_layout=True)  # the suptitle above the subplots' titles, never on them
    x = np.arange(len(pts))
    for ax, s in zip(axes[0], spec.strategies):
        unit, scale = sweep_unit(spec, cells, sweep, s)
        medians = []
        for k in range(1, spec.repetitions + 1):
            row = [cells[Run(k, p, s).id] for p in pts]
            times = [np.nan if c.loop is None else c.loop * scale for c in row]
            ax.plot(x, times, "o-", lw=0.7, ms=5, alpha=0.8, color=f"C{(k - 1) % 10}",
                    label=f"s{k}" if spec.repetitions <= 12 else None)
            bad = [i for i, c in enumerate(row) if c.status not in ("ok", *UNRECORDED)]
            ax.scatter(bad, [0] * len(bad), marker="x", color=[STATUS_COLOURS[row[i].status] for i in bad],
                       s=60, clip_on=False, zorder=5)
        for p in pts:
            ok = [c.loop for k in range(1, spec.repetitions + 1)
                  if (c := cells[Run(k, p, s).id]).loop is not None and not c.left_out]  # as the tables' median
            medians.append(float(np.median(ok)) * scale if ok else np.nan)
        ax.plot(x, medians, "_", color="black", ms=22, mew=2, label="median")
        id_ticks(ax, [point_label(sweep, p) for p in pts])
        ax.set_xlim(-0.5, len(pts) - 0.5)
        ax.set_title(s, fontsize=10)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(f"loop time ({unit}), max over ranks")
        ax.grid(axis="y", alpha=0.3)
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.suptitle(f"Variability across submissions, {sweep.name}\n(crosses at 0: runs not ok, coloured as in the "
                 "failure matrix)", fontsize=10)
    return save_figure(fig, outdir, f"variability-sweep{sweep.index}", f"Variability across submissions, {sweep.name}")


def failure_matrix(spec: Spec, cells: dict[str, Cell], outdir: Path) -> Figure:
    """Submissions x runs, coloured by status, with the note letters."""
    order = list(STATUS_COLOURS)
    cols = [(p, s) for p in points(spec) for s in spec.strategies]
    grid = np.array([[order.index(cells[Run(k, p, s).id].status) for p, s in cols]
                     for k in range(1, spec.repetitions + 1)])
    fig, ax = plt.subplots(figsize=(max(6.0, 0.3 * len(cols) + 3), 0.42 * spec.repetitions + 2.4))
    ax.imshow(grid, cmap=ListedColormap([STATUS_COLOURS[s] for s in order]), vmin=0, vmax=len(order) - 1,
              aspect="auto")
    for k in range(spec.repetitions):
        for j, (p, s) in enumerate(cols):
            letter = cells[Run(k + 1, p, s).id].letter
            if letter:
                ax.text(j, k, letter, ha="center", va="center", fontsize=8, color="white")
    id_ticks(ax, [f"{p.id} {s}" for p, s in cols], fontsize=7)  # each label ends at its column
    ax.set_yticks(np.arange(spec.repetitions), [f"s{k}" for k in range(1, spec.repetitions + 1)], fontsize=8)
    ax.set_xticks(np.arange(len(cols) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(spec.repetitions + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="#dddddd", lw=0.8)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("point (grid-size) and strategy")
    ax.set_ylabel("submission")
    ax.set_title("Outcome of every run (letters: notes in the report)", fontsize=10)
    ax.legend(handles=[Patch(facecolor=STATUS_COLOURS[s], edgecolor="#999999", label=status_text(s))
                       for s in order], loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    return save_figure(fig, outdir, "failure-matrix", "Outcome of every run")
