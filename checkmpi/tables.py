"""Tables built from results, rendered to the terminal (rich) or to HTML.

Every table is first built as plain strings (`Table`), so the terminal, the
HTML page and the tests all see the same numbers.
"""

from __future__ import annotations

import math
import os
import sys
import textwrap
from dataclasses import dataclass, field

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from checkmpi.results import HaloRun, P2PRun, StrategyResult, x_join


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    caption: str = ""
    section_after: set[int] = field(default_factory=set)  # row indices followed by a rule
    left_columns: int = 1  # leading columns of names, left-aligned


def pick_unit(seconds: float) -> tuple[str, float]:
    """A time unit that keeps the largest value of a table readable."""
    if seconds >= 1.0:
        return "s", 1.0
    if seconds >= 1e-3:
        return "ms", 1e3
    return "us", 1e6


def num(value: float, digits: int = 3) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def _pct(part: float, whole: float) -> str:
    return num(100.0 * part / whole, 1) if whole > 0 else "-"


def _short(value: float, digits: int) -> str:
    """At most `digits` decimals, and no more than three significant digits' worth."""
    if not value > 0:
        return num(value, digits)
    return f"{value:.{max(0, min(digits, 2 - math.floor(math.log10(value))))}f}"


def range_text(ci: tuple[float, float] | None, scale: float, digits: int) -> str:
    """A confidence interval as 'lo-hi', short enough for an 80-column table."""
    return f"{_short(ci[0] * scale, digits)}-{_short(ci[1] * scale, digits)}" if ci else "-"


def _ratio(value: float) -> str:
    return num(value, 2 if value < 10 else 1 if value < 100 else 0)


def _gbs(value: float) -> str:
    """GB/s in at most four characters below 10000 GB/s."""
    return _ratio(value / 1e9)


def _kib(value: float) -> str:
    return num(value / 1024, 1)


def halo_table(run: HaloRun, wide: bool = False) -> Table:
    """One row per strategy: the median time per step with its 95% confidence
    interval, how it stands against the fastest (checkmpi-halo's ranking; =
    marks the fastest group), the tail and the bandwidth per direction; fits
    80 columns. `wide` adds every other figure, all per step."""
    ran = run.ran()
    # The unit of the medians, the table's figure (one slow step, in the wide table's max column only, once put
    # 27 us medians in ms, two digits, coarser than the ties they are ranked by).
    unit, scale = pick_unit(max((s.step_time.median for s in ran if s.step_time and math.isfinite(s.step_time.median)),
                                default=0.0))
    digits = 2 if scale == 1e6 else 3
    repeats = any(s.runs > 1 for s in ran)  # the runs' spread: a column only when there are runs to spread
    if wide:
        headers = (["strategy", f"median ({unit})", "95% CI", "vs best", "vs best 95% CI", "tail"]
                   + [f"{d} GB/s" for d in "xyz"] + [f"{d} msg KiB" for d in "xyz"]
                   + [f"p5 ({unit})", f"p95 ({unit})", f"min ({unit})", f"max ({unit})", f"mean ({unit})"]
                   + (["spread"] if repeats else []) + ["loop (s)", "%comp", "%MPI"]
                   + [f"{t} ({unit})" for t in ("x", "y", "z", "pack", "unpack")] + ["check"])
    else:
        headers = ["strategy", "median", "95% CI", "vs best", "tail", "x GB/s", "y GB/s", "z GB/s", "check"]
    table = Table(f"{run.name}: {run.describe()}; time per step in {unit}", headers)
    notes = []  # validation errors, noise, the tool's notes: under the table
    if run.oversubscribed:
        notes.append(f"warning: {oversubscribed_text(run)}")
    if run.context.get("placement_advice"):
        notes.append(f"warning: placement: {run.context['placement_advice']}")
    for s in run.strategies:
        label = s.label if wide else s.id
        if s.skipped is not None:
            table.rows.append([label] + ["-"] * (len(headers) - 2) + ["skipped"])
            notes.append(f"{s.id}: skipped: {s.skipped}")
            continue
        d = s.step_time
        loop = s.timers["loop"].max
        tail = _ratio(d.tail) + ("!" if s.noise else "")
        verdict = "valid" if s.valid else "INVALID"
        gbs = [_gbs(s.bandwidth(x)) for x in "xyz"]
        vs = s.vs_fastest
        vs_text = "-" if vs is None else _ratio(vs.ratio) + ("=" if s.id in run.fastest_group else "")
        if wide:
            table.rows.append([label, num(d.median * scale, digits), range_text(d.ci, scale, digits), vs_text,
                               range_text(vs.ci if vs else None, 1.0, 3), tail] + gbs
                              + [_kib(s.message_bytes(x)) for x in "xyz"]
                              + [num(v * scale, digits) for v in (d.p5, d.p95, d.min, d.max, d.mean)]
                              + ([num(100 * s.repeat_spread, 1) + "%" if s.runs > 1 else "-"] if repeats else [])
                              + [num(loop, 4), _pct(s.timers["compute"].max, loop), _pct(s.timers["comm"].max, loop)]
                              + [num(s.per_step(t) * scale, digits) for t in ("x", "y", "z", "pack", "unpack")]
                              + [verdict])
        else:
            table.rows.append([label, num(d.median * scale, digits), range_text(d.ci, scale, digits), vs_text, tail,
                               *gbs, verdict])
        if not s.valid:
            notes.append(f"{s.id}: {s.error or 'failed validation'}")
        if s.noise:
            notes.append(f"warning: {s.id} is noisy: {'; '.join(s.noise)}")
        if s.raw.get("note"):  # what checkmpi-halo prints beside the verdict
            notes.append(f"{s.id}: {s.raw['note']}")
    table.caption = (f"time per step over {pooled_text(run)}, validation excluded: median, its 95% confidence "
                     + ("interval (bootstrap over launches, rounds and steps, at least Student's t over the launches"
                        if run.launches > 1 else "interval (bootstrap over runs, rounds and steps")
                     + ("; INVALID rows: order statistics" if any(not s.valid for s in ran) else "")
                     + "); vs best: median over the fastest's"
                     + (", its 95% CI" if wide else "")
                     + f"; = the fastest and those tied with it (ratio's CI includes 1, or within "
                     f"{100 * run.config['tie_threshold']:.1f}%), - not ranked; "
                     f"tail: p95/median (! = noisy: it or mean/median above "
                     f"{run.noise_thresholds['p95_over_median']:g}, or runs spread above "
                     f"{100 * run.noise_thresholds['repeat_spread']:.0f}%); "
                     + ("%MPI: exchange share of the loop; " if wide else "")
                     + "GB/s: payload sent in that direction over its time, slowest "
                     "rank" + ("" if wide else "; --wide for every figure"))
    sizes = message_sizes(ran)
    if sizes:
        table.caption += "\nmessage size x/y/z (KiB): " + "; ".join(sizes)
    if notes:
        table.caption += "\n" + "\n".join(notes)
    return table


def pooled_text(run: HaloRun) -> str:
    """What a run's medians pool: 'ranks, steps, 4 rounds and 3 runs'."""
    runs = max((s.runs for s in run.ran()), default=1)
    return (f"ranks, steps, {run.rounds} round{'' if run.rounds == 1 else 's'}"
            + (f" and {runs} runs" if runs > 1 else "")
            + (f" per launch, {run.launches} launches" if run.launches > 1 else ""))


def message_sizes(ran: list[StrategyResult]) -> list[str]:
    """'1.3/1.3/0.8 (step0, step1)': strategies grouped by their message sizes."""
    groups: dict[str, list[str]] = {}
    for s in ran:
        key = "/".join(_kib(s.message_bytes(x)) for x in "xyz")
        groups.setdefault(key, []).append(s.id)
    return [f"{key} ({_ids(ids)})" for key, ids in groups.items()]


def _ids(ids: list[str]) -> str:
    return f"{ids[0]}-{ids[-1]}" if len(ids) > 2 else ", ".join(ids)


def headline(run: HaloRun) -> str:
    """checkmpi-halo's ranking, said as it says it (the fastest group and the
    closest strategy outside it, read from the JSON, never recomputed), then
    where the fastest's loop goes, validation excluded; oversubscription flagged."""
    by_id = {s.id: s for s in run.ran()}
    group = [by_id[i] for i in run.fastest_group if i in by_id]
    if not group:
        text = f"{run.name}: no valid strategy to rank"
    else:
        best = group[0]
        median = per_step_text(best.step_time.median)
        widest = max([1.0] + [s.vs_fastest.ratio for s in group if s.vs_fastest])
        if len(group) == 1:
            text = f"{run.name}: fastest {best.id}, {median} per step"
        elif not run.separable:  # the binary ties every ranked strategy (docs/halo.md, "How checkmpi decides")
            text = (f"{run.name}: not separated (oversubscribed): {names_of([s.id for s in group])} are within "
                    f"{percent(widest)} (fastest median {median} per step); one launch cannot see how the placement "
                    "of ranks on CPUs, fixed for a launch, changes each strategy")
        else:
            text = (f"{run.name}: {names_of([s.id for s in group])} are tied within {percent(widest)} "
                    f"(fastest median {median} per step)")
        outside = [s for s in run.ran() if s.valid and s.vs_fastest and not s.vs_fastest.tied
                   and not math.isnan(s.vs_fastest.ratio)]
        if outside:
            nxt = min(outside, key=lambda s: s.vs_fastest.ratio)
            vs = nxt.vs_fastest
            text += (f"; next {nxt.id} is {percent(vs.ratio)} slower "
                     f"(95% CI {percent(vs.ci[0])}-{percent(vs.ci[1])})")
        shares = phase_shares(best)
        if shares:
            parts = [("compute", shares["compute"]), ("MPI", shares["mpi"]),
                     ("pack+unpack", shares["pack"] + shares["unpack"])]
            text += f"; {best.id}'s loop without validation: " + ", ".join(f"{100 * v:.0f}% {name}"
                                                                           for name, v in parts)
            slowest = max("xyz", key=lambda x: best.timers[x].mean)
            if math.isfinite(best.bandwidth(slowest)):  # null where one call carries every direction
                text += f"; slowest direction {slowest} ({_gbs(best.bandwidth(slowest))} GB/s)"
        text += "; noisy" if best.noise else ""
    return text + (f"; {oversubscribed_text(run)}" if run.oversubscribed else "")


def per_step_text(seconds: float) -> str:
    """'1.234 ms', '14.27 us': a time per step as checkmpi-halo writes it."""
    if math.isnan(seconds):
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.3f} s"
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.2f} us"


def percent(ratio: float) -> str:
    """'12%' or '1.2%': a ratio's distance from 1, as checkmpi-halo writes it."""
    p = abs(ratio - 1.0) * 100.0
    return f"{p:.{1 if p < 10 else 0}f}%"


def names_of(ids: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]


PHASES = ("compute", "mpi", "pack", "unpack")  # the loop's timed phases (docs/halo.md, "Timers"), validation apart


def phase_shares(s: StrategyResult) -> dict[str, float]:
    """Each phase's share of the loop without validation (means over ranks, so
    that they add up), and 'other' the untimed rest; empty without a loop."""
    parts = {t: max(0.0, s.timers[t].mean) for t in PHASES}
    whole = max(s.timers["loop"].mean - s.timers["diag"].mean, sum(parts.values()))
    if not whole > 0:
        return {}
    shares = {t: v / whole for t, v in parts.items()}
    shares["other"] = 1.0 - sum(shares.values())
    return shares


def cpus_text(context: dict) -> str:
    """'4 ranks x 1 thread on 2 CPUs' on the busiest node, as checkmpi-halo's header says it."""
    cpus, ranks = context.get("cpus_per_node") or [], context.get("ranks_on_node") or []
    if not cpus or len(cpus) != len(ranks):
        return "unknown"
    worst = max(range(len(cpus)), key=lambda n: ranks[n] / max(cpus[n], 1))  # the first of the busiest

    def plural(n: int, what: str) -> str:
        return f"{n} {what}{'' if n == 1 else 's'}"

    return (f"{plural(ranks[worst], 'rank')} x {plural(int(context.get('omp_threads', 1)), 'thread')} on "
            f"{plural(cpus[worst], 'CPU')}" + (f" (the busiest node, {worst})" if len(cpus) > 1 else ""))


def oversubscribed_text(run: HaloRun) -> str:
    return f"oversubscribed: {cpus_text(run.context)}, timings include the scheduler's time slices"


def comparison_table(runs: list[HaloRun]) -> Table:
    """Runs of any size side by side, normalised: median time per step, and
    the exchange's time per byte of halo payload; * marks each run's fastest
    group (its fastest and those tied with it, as checkmpi-halo ranked them)."""
    ids: dict[str, str] = {}
    for run in runs:
        for s in sorted(run.ran(), key=lambda s: s.step):
            ids.setdefault(s.id, s.id)
    per_step = [{s.id: s.step_time.median for s in run.ran() if s.step_time} for run in runs]
    per_byte = [{s.id: s.per_step("comm", "mean") / s.bytes_per_step for s in run.ran() if s.bytes_per_step}
                for run in runs]
    unit, scale = pick_unit(max((v for d in per_step for v in d.values()), default=0.0))
    headers = ["strategy"]
    for k, run in enumerate(runs):
        headers += [f"run {k + 1} ({unit})", f"run {k + 1} ns/B"]
    legend = "; ".join(f"run {k + 1}: {run.name}, {run.nprocs} ranks {x_join(run.dims)}, local {x_join(run.local)}"
                       for k, run in enumerate(runs))
    table = Table(f"Comparison: median time per step ({unit}) and exchange time per byte (ns/B)", headers,
                  caption=f"{legend}\nns/B: comm time per step (mean over ranks) over the payload a rank sends "
                          "per step; * fastest strategy of each run and those tied with it; - not run")
    for sid in ids:
        row = [sid]
        for run, times, bytes_ in zip(runs, per_step, per_byte):
            if sid in times:
                row.append(num(times[sid] * scale) + ("*" if sid in run.fastest_group else ""))
                row.append(num(bytes_.get(sid, math.nan) * 1e9, 3))
            else:
                row += ["-", "-"]
        table.rows.append(row)
    return table


def measured_total(s: StrategyResult) -> float:
    """Measured time per step without validation and profile output. Means
    over ranks: the mean of loop - diag is the difference of the means,
    which does not hold for maxima taken on different ranks."""
    return s.per_step("loop", "mean") - (s.per_step("diag", "mean") if "diag" in s.timers else 0.0)


def pair_text(run: P2PRun) -> str:
    """Where the two measuring ranks ran, for titles."""
    same = run.context.get("same_node")
    return {True: "same node", False: "different nodes"}.get(same, f"{run.context.get('nprocs', '?')} ranks")


# ---- context --------------------------------------------------------------------------------------

def neighbours_text(neighbours: dict) -> str:
    """checkmpi-halo's header line from its JSON: "x off node, y on node, z self" (mixed: "x 4 of 8 off node")."""
    parts = []
    for d in ("x", "y", "z"):
        n = neighbours.get(d, {})
        where = n.get("where", "?")
        if where == "mixed":
            messages = sum(int(n.get(k, 0)) for k in ("self", "on_node", "off_node"))
            where = f"{n.get('off_node', '?')} of {messages} off node"
        parts.append(f"{d} {where}")
    return ", ".join(parts)


def context_rows(run: HaloRun | P2PRun) -> list[tuple[str, str]]:
    """The context block: what ran where, with which MPI."""
    c = run.context
    hosts = list(dict.fromkeys(c.get("hostnames", [])))
    rows = [
        ("results", str(run.path)),
        ("tool", f"{c.get('tool', '?')} {c.get('version', '?')} (revision {c.get('git_revision', '?')})"),
        ("date", str(c.get("date", "?"))),
        ("machine", ", ".join(hosts[:8]) + (f" and {len(hosts) - 8} more" if len(hosts) > 8 else "") or "?"),
        ("MPI library", str(c.get("mpi_library", "?"))),
        ("MPI standard", str(c.get("mpi_standard", "?"))),
        ("CPU (rank 0)", _cpu_text(c.get("cpu"))),
        ("ranks", (f"{c.get('nprocs', '?')} on {c.get('nodes', '?')} node(s), at most "
                   f"{c.get('ranks_per_node', '?')} per node")),
        ("backend / GPU-aware MPI", _gpu_text(c)),
    ]
    if isinstance(c.get("neighbours"), dict):  # halo: where each direction's messages go, as checkmpi-halo found
        rows.append(("neighbours", neighbours_text(c["neighbours"])))
    if "cpus_per_node" in c:  # the tool's header line: threads on the busiest node's CPUs, and the binding
        rows.append(("CPUs", cpus_text(c) + (": OVERSUBSCRIBED, timings include the scheduler's time slices"
                                             if c.get("oversubscribed") else "")
                     + f"; binding {c.get('binding', '?')}"))
    if "omp_threads" in c:
        rows.append(("OpenMP threads per rank", str(c["omp_threads"])))
    if isinstance(run, P2PRun):
        rows.append(("mode", run.mode))
        if run.context.get("same_node") is not None:
            rows.append(("placement", pair_text(run)))
    else:
        rows.append(("run", run.describe()))
        buffers = sorted({str(s.raw["mpi_buffers"]) for s in run.ran() if s.raw.get("mpi_buffers")})
        if buffers:  # host, device (GPU-aware MPI) or staged through host memory
            rows.append(("buffers handed to MPI", ", ".join(buffers)))
    return rows


def _cpu_text(cpu: dict | None) -> str:
    """"AMD EPYC; L2 1 MiB, L3 32 MiB shared by 2 CPUs", as the tool's header says it; "?" for older files."""
    if not cpu:
        return "?"

    def size(b: int) -> str:
        return f"{b >> 20} MiB" if b and b % (1 << 20) == 0 else f"{b >> 10} KiB"

    levels = ", ".join(f"L{x['level']} {size(x['bytes'])}" + (f" shared by {x['shared_by']} CPUs"
                                                              if x["shared_by"] > 1 else "")
                       for x in cpu["caches"] if x["level"] >= 2)
    model = cpu["model"] or "unknown CPU"
    return f"{model}; {levels}" if levels else model


def _gpu_text(c: dict) -> str:
    backend = c.get("backend", "host")
    if isinstance(backend, dict):
        backend = backend.get("name", "host")
    aware = c.get("gpu_aware_mpi")
    if backend == "host":
        return "host (no GPU)"
    if aware is None:
        return f"{backend}; GPU-aware MPI: cannot tell (treated as not aware)"
    return f"{backend}; GPU-aware MPI: {'yes' if aware else 'no'}"


def contexts_summary(runs: list[HaloRun | P2PRun]) -> Table:
    """One line of context per results file, for the terminal."""
    t = Table("Context", ["results", "tool, date, machine, MPI library, ranks, backend"])
    for run in runs:
        rows = dict(context_rows(run))
        what = [rows["tool"].split(" (")[0], rows["date"], rows["machine"], rows["MPI library"].split(",")[0],
                rows["ranks"], rows["backend / GPU-aware MPI"]]
        what += ["OVERSUBSCRIBED"] if run.context.get("oversubscribed") else []
        t.rows.append([run.path.name if not run.label else f"{run.path.name} ({run.label})", "; ".join(what)])
    t.left_columns = 2
    return t


def context_table(run: HaloRun | P2PRun) -> Table:
    t = Table(f"Context: {run.name}", ["", ""])
    t.rows = [[k, v] for k, v in context_rows(run)]
    t.left_columns = 2
    return t


# ---- rendering --------------------------------------------------------------------------------------

def console(wide: bool = False) -> Console:
    """The terminal's width (COLUMNS when set); not a terminal: 80 columns,
    which the default tables fit. `wide` tables get room to be whole."""
    if wide:
        return Console(width=300, color_system=None if not sys.stdout.isatty() else "auto")
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return Console(width=int(columns), color_system=None if not sys.stdout.isatty() else "auto")
    return Console() if sys.stdout.isatty() else Console(width=80, color_system=None)


def _fitted_headers(table: Table, widest: list[int], width: int) -> list[str]:
    """The headers, those of number columns wrapped to their numbers' width
    when the table would be wider than `width` (rich, left to itself,
    narrows the widest columns first, which cuts names)."""
    natural = sum(max(len(h), w) for h, w in zip(table.headers, widest)) + 2 * (len(table.headers) - 1)
    if natural <= width:
        return table.headers
    return [h if i < table.left_columns or len(h) <= w else
            textwrap.fill(h, max([w] + [len(word) for word in h.split()]))
            for i, (h, w) in enumerate(zip(table.headers, widest))]


def fit_columns(table: Table, width: int) -> tuple[Table, list[str]]:
    """The table without the columns, from the right, that do not fit `width`
    even at their narrowest (numbers whole, headers and names wrapped at
    words, two spaces between columns), and the headers of those left out."""
    def narrowest(i: int) -> int:
        cells = [row[i] for row in table.rows if i < len(row)]
        header = max((len(w) for w in table.headers[i].split()), default=0)
        if i >= table.left_columns:
            return max(header, max((len(c) for c in cells), default=0))
        word = max((len(w) for c in cells for w in c.split()), default=0)
        return max(header, min(word, width // 2) if i == 0 else word)

    keep = list(range(len(table.headers)))
    while len(keep) > table.left_columns + 1 and sum(map(narrowest, keep)) + 2 * (len(keep) - 1) > width:
        keep.pop()
    if len(keep) == len(table.headers):
        return table, []
    fitted = Table(table.title, [table.headers[i] for i in keep],
                   [[row[i] for i in keep if i < len(row)] for row in table.rows], table.caption, table.section_after,
                   table.left_columns)
    return fitted, table.headers[len(keep):]


def render(table: Table, out: Console) -> None:
    table, dropped = fit_columns(table, out.width)
    # No padding at the outer edges: every column counts on an 80-column terminal.
    rich = RichTable(title=table.title, box=box.SIMPLE_HEAD, title_justify="left", show_header=any(table.headers),
                     pad_edge=False, show_edge=False, collapse_padding=True)
    widest = [max((len(row[i]) for row in table.rows if i < len(row)), default=0) for i in range(len(table.headers))]
    for i, header in enumerate(_fitted_headers(table, widest, out.width)):
        # Numbers are never cut or wrapped: their column is as wide as its widest cell; headers and
        # names wrap instead, and the first column's words (strategy ids, sizes) are not cut either.
        name = i < table.left_columns
        if name and i == 0:  # up to half the width: a longer word (a path) may still be cut
            min_width = min(max((len(w) for row in table.rows if row for w in row[0].split()), default=0),
                            out.width // 2)
        else:
            min_width = None if name else widest[i]
        rich.add_column(header, justify="left" if name else "right", min_width=min_width)
    for i, row in enumerate(table.rows):
        rich.add_row(*row, end_section=i in table.section_after and i != len(table.rows) - 1)
    out.print(rich)
    if dropped:
        out.print(Text(f"left out to fit {out.width} columns: {', '.join(' '.join(h.split()) for h in dropped)} "
                       "(a wider terminal, or COLUMNS, shows them)", style="bold"))
    if table.caption:  # below the table after a blank line (where its rows end), wrapped to the width
        out.print()
        out.print(Text(table.caption, style="dim"))
    out.print()
