"""Tables built from results, rendered to the terminal (rich) or to HTML.

Every table is first built as plain strings (`Table`), so the terminal, the
HTML page and the tests all see the same numbers.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from checkmpi.model import MessageModel, Prediction
from checkmpi.results import HaloRun, P2PRun, Stats, StrategyResult, opt_float, x_join


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


STAT_ROWS = ("max", "mean", "min")


def halo_table(run: HaloRun) -> Table:
    """The seed's Table 2/3 for one run: per strategy max, mean and min over ranks."""
    ran = run.ran()
    # One unit per group of columns, so small pack times do not round to zero.
    groups = {"loop": ("loop",), "dir": ("x", "y", "z"), "copy": ("pack", "unpack")}
    units = {g: pick_unit(max((_timer(s, t).max for s in ran for t in timers), default=0.0))
             for g, timers in groups.items()}
    unit_of = {t: units[g] for g, timers in groups.items() for t in timers}
    headers = ["strategy", "ranks", f"loop ({unit_of['loop'][0]})", "%comp", "%MPI"] + [
        f"{t} ({unit_of[t][0]})" for t in ("x", "y", "z", "pack", "unpack")] + ["validation"]
    table = Table(f"{run.name}: {run.describe()}", headers, left_columns=2)
    notes = []  # validation errors and the tool's notes, under the table
    for s in run.strategies:
        if s.skipped is not None:
            table.rows.append([s.label, "-"] + ["-"] * 8 + [f"skipped: {s.skipped}"])
        else:
            for k, stat in enumerate(STAT_ROWS):
                times = [num(_timer(s, t).get(stat) * unit_of[t][1]) for t in ("loop", "x", "y", "z", "pack", "unpack")]
                loop = s.timers["loop"].get(stat)
                table.rows.append([
                    s.label if k == 0 else "", stat, times[0],
                    _pct(s.timers["compute"].get(stat), loop), _pct(s.timers["comm"].get(stat), loop),
                    *times[1:], ("valid" if s.valid else "INVALID") if k == 0 else ""])
            if not s.valid:
                notes.append(f"{s.id}: {s.error or 'failed validation'}")
            if s.raw.get("note"):  # what checkmpi-halo prints beside the verdict
                notes.append(f"{s.id}: {s.raw['note']}")
        table.section_after.add(len(table.rows) - 1)
    table.caption = ("times over the whole timed loop; max, mean and min over ranks; %comp and %MPI: compute "
                     "and comm (pack + MPI calls + unpack + barriers) as a share of the loop")
    if notes:
        table.caption += "\n" + "\n".join(notes)
    return table


def _timer(s: StrategyResult, name: str) -> Stats:
    return s.timers.get(name, Stats(0.0, 0.0, 0.0))


def comparison_table(runs: list[HaloRun]) -> Table:
    """Loop time per step of every strategy across runs; * marks each run's fastest."""
    ids: dict[str, str] = {}
    for run in runs:
        for s in sorted(run.ran(), key=lambda s: s.step):
            ids.setdefault(s.id, s.label)
    per_step = [{s.id: s.per_step("loop") for s in run.ran()} for run in runs]
    unit, scale = pick_unit(max((v for d in per_step for v in d.values()), default=0.0))
    headers = ["strategy"] + [f"{run.name}\n{run.nprocs} ranks {x_join(run.dims)}, local {x_join(run.local)}"
                              for run in runs]
    table = Table(f"Comparison: loop time per step ({unit}), max over ranks", headers,
                  caption="* fastest strategy of each run; - not run")
    for sid, label in ids.items():
        row = [label]
        for times in per_step:
            if sid in times:
                row.append(num(times[sid] * scale) + ("*" if times[sid] == min(times.values()) else ""))
            else:
                row.append("-")
        table.rows.append(row)
    return table


def prediction_table(predictions: list[Prediction], model: MessageModel, bandwidth: tuple[float, str],
                     title: str) -> Table:
    unit, scale = pick_unit(max((p.total for p in predictions), default=0.0))
    headers = ["strategy", "msgs", "KiB sent", f"MPI ({unit})", f"pack ({unit})", f"unpack ({unit})",
               f"compute ({unit})", f"overlapped ({unit})", f"total ({unit})"]
    table = Table(title, headers, caption=_model_caption(model, bandwidth, unit))
    for p in predictions:
        table.rows.append([f"{p.strategy.id} {p.strategy.alias}", str(p.messages), num(p.bytes / 1024, 1)]
                          + [num(v * scale) for v in (p.mpi, p.pack, p.unpack, p.compute, p.hidden, p.total)])
    return table


def _model_caption(model: MessageModel, bandwidth: tuple[float, str], unit: str) -> str:
    kind = "Hockney (ping-pong)" if model.kind == "hockney" else "LogGP"
    text = (f"per step and rank, in {unit}; model: {kind} from {model.source}; copy bandwidth "
            f"{bandwidth[0] / 1e9:.2f} GB/s ({bandwidth[1]})")
    if model.datatype_source:
        text += f"; datatype overhead from {model.datatype_source}"
    return text + "; see docs/model.md"


def predicted_vs_measured_table(run: HaloRun, predictions: list[Prediction], model: MessageModel,
                                bandwidth: tuple[float, str]) -> Table:
    """Per step: the model's exchange and total next to the run's comm and loop - diag."""
    measured = {s.id: s for s in run.ran()}
    pairs = [(p, measured[p.strategy.id]) for p in predictions if p.strategy.id in measured]
    unit, scale = pick_unit(max((max(p.total, measured_comm(s), measured_total(s)) for p, s in pairs), default=0.0))
    headers = ["strategy", f"comm predicted ({unit})", f"comm measured ({unit})",
               f"total predicted ({unit})", f"total measured ({unit})", "predicted / measured"]
    table = Table(f"{run.name}: predicted vs measured time per step", headers,
                  caption=_model_caption(model, bandwidth, unit)
                  + "\nmeasured: mean over ranks; total measured = loop - diag (validation and profiles)")
    for p, s in pairs:
        total = measured_total(s)
        table.rows.append([s.label, num(p.exchange * scale), num(measured_comm(s) * scale),
                           num(p.total * scale), num(total * scale), num(p.total / total, 2) if total > 0 else "-"])
    return table


def measured_comm(s: StrategyResult) -> float:
    return s.per_step("comm", "mean")


def measured_total(s: StrategyResult) -> float:
    """Measured time per step without validation and profile output. Means
    over ranks: the mean of loop - diag is the difference of the means,
    which does not hold for maxima taken on different ranks."""
    return s.per_step("loop", "mean") - (s.per_step("diag", "mean") if "diag" in s.timers else 0.0)


# ---- point-to-point -------------------------------------------------------------------------------

US = 1e6
MBS = 1e-6


def p2p_tables(run: P2PRun) -> list[Table]:
    build = {"pingpong": _pingpong, "bw": _bw, "ring": _ring, "loggp": _loggp, "datatype": _datatype,
             "nbc": _nbc}[run.mode]
    tables = build(run)
    hockney = run.fits.get("hockney")
    if hockney and hockney.get("segments"):
        tables.append(hockney_table(run))
    return tables


def _stat(r: dict, key: str, stat: str) -> float:
    value = r[key].get(stat)
    return float(value if value is not None else r[key]["mean"])


def _pingpong(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: ping-pong ({_pair(run)})",
              ["Size (B)", "Latency min (us)", "median (us)", "mean (us)", "max (us)", "Bandwidth (MB/s)"],
              caption="latency: half round trip over iterations; bandwidth: size / median latency")
    for r in run.results:
        t.rows.append([str(int(r["size"]))] + [num(_stat(r, "latency", k) * US, 2) for k in ("min", "median",
                      "mean", "max")] + [num(float(r.get("bandwidth", 0.0)) * MBS, 2)])
    return [t]


def _bw(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: streaming bandwidth ({_pair(run)})",
              ["Size (B)", "Bandwidth (MB/s)", "window", "time per window median (us)"])
    for r in run.results:
        window = r.get("window", run.config.get("window", "-"))
        time = num(_stat(r, "time", "median") * US, 2) if isinstance(r.get("time"), dict) else "-"
        t.rows.append([str(int(r["size"])), num(float(r["bandwidth"]) * MBS, 2), str(window), time])
    return [t]


def _ring(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: ring exchange", ["ranks", "Size (B)", "time min (us)", "median (us)", "max (us)"],
              caption="time per ring iteration (every rank sends to both neighbours)")
    for r in run.results:
        t.rows.append([str(int(r["nprocs"])), str(int(r["size"]))]
                      + [num(_stat(r, "time", k) * US, 2) for k in ("min", "median", "max")])
    return [t]


def _loggp(run: P2PRun) -> list[Table]:
    n = run.fits.get("loggp", {}).get("n", run.config.get("n", "n"))
    t = Table(f"{run.name}: LogGP measurements ({_pair(run)})",
              ["Size (B)", "PRTT(1,0) (us)", f"PRTT({n},0) (us)", f"PRTT({n},d) (us)", "o_s (us)", "o_r (us)",
               "g+G*s (us)"])
    for r in run.results:
        t.rows.append([str(int(r["size"]))] + [num(float(r.get(k, float("nan"))) * US, 3) for k in (
            "prtt_1_0", "prtt_n_0", "prtt_n_d", "o_s", "o_r", "g_plus_Gs")])
    tables = [t]
    fit = run.fits.get("loggp")
    if fit:
        p = Table(f"{run.name}: LogGP parameters", ["L (us)", "o_s (us)", "o_r (us)", "g (us)", "G (ns/B)", "R^2"],
                  left_columns=0, caption="\n".join(f"warning: {w}" for w in fit.get("warnings", [])))
        p.rows.append([num(float(fit[k]) * US, 3) for k in ("L", "o_s", "o_r", "g")]
                      + [num(float(fit["G"]) * 1e9, 4), num(float(fit.get("r2", float("nan"))), 4)])
        tables.append(p)
    return tables


def _datatype(run: P2PRun) -> list[Table]:
    t = Table(f"{run.name}: MPI_Type_vector vs hand packing ({_pair(run)})",
              ["count", "blocklen", "stride", "bytes", "contiguous", "datatype median (us)", "packed median (us)",
               "overhead (us)"], left_columns=0,
              caption="half round trip: vector datatype vs hand pack + contiguous send of the same bytes")
    for r in run.results:
        dt = num(_stat(r, "datatype", "median") * US, 3) if isinstance(r.get("datatype"), dict) else "-"
        pk = num(_stat(r, "packed", "median") * US, 3) if isinstance(r.get("packed"), dict) else "-"
        t.rows.append([str(r["count"]), str(r["blocklen"]), str(r["stride"]), str(int(r["bytes"])),
                       "yes" if r.get("contiguous") else "no", dt, pk, num(opt_float(r.get("overhead")) * US, 3)])
    tables = [t]
    fit = run.fits.get("datatype")
    if fit:
        f = Table(f"{run.name}: datatype overhead fit", ["O (ns/B)", "o (us)", "R^2"], left_columns=0)
        f.rows.append([num(opt_float(fit.get("O")) * 1e9, 4), num(opt_float(fit.get("o")) * US, 3),
                       num(opt_float(fit.get("r2")), 4)])
        tables.append(f)
    return tables


NBC_COLUMNS = ("blocking", "pure comm", "compute", "init", "MPI_Test", "MPI_Wait", "overall")


def nbc_means(r: dict) -> list[float]:
    """OSU's columns (seconds): blocking, pure comm, compute without its
    MPI_Test calls, init, MPI_Test, MPI_Wait, overall; means over iterations and ranks."""
    mean = {k: _stat(r, k, "mean") for k in ("blocking", "pure_comm", "compute", "init", "test", "wait", "overall")}
    return [mean["blocking"], mean["pure_comm"], mean["compute"] - mean["test"], mean["init"], mean["test"],
            mean["wait"], mean["overall"]]


def _nbc(run: P2PRun) -> list[Table]:
    """One OSU-style table per operation (pencil: per transpose)."""
    note = (run.context.get("progress_thread") or {}).get("note", "not recorded")
    out = []
    for op in dict.fromkeys(r["op"] for r in run.results):
        rows = [r for r in run.results if r["op"] == op]
        pencil = "grid" in rows[0]
        unit, scale = pick_unit(max(max(nbc_means(r)) for r in rows))
        lead = ["grid", "Bytes"] if pencil else ["Size (B)"]
        where = (f"{op} transpose on {x_join(rows[0]['pencil'])} pencils (MPI_Ialltoallv over {rows[0]['comm_size']} "
                 "ranks)" if pencil else f"{op} on {rows[0]['nprocs']} ranks")
        t = Table(f"{run.name}: {where}", lead + ["MPI_Test calls"] + [f"{c} ({unit})" for c in NBC_COLUMNS]
                  + ["overlap (%)"],
                  caption="means over iterations and ranks, as OSU; overall = init + compute + MPI_Test + MPI_Wait; "
                  "compute ran for each rank's mean pure comm time; overlap = max(0, 100 - (overall - compute) / "
                  "pure comm x 100)" + ("; Bytes: the most one rank sends" if pencil else "")
                  + f"\nprogress thread: {note}")
        for r in rows:
            first = [x_join(r["grid"]), str(int(r["size"]))] if pencil else [str(int(r["size"]))]
            t.rows.append(first + [str(int(r["tests"]))] + [num(v * scale, 2) for v in nbc_means(r)]
                          + [num(opt_float(r.get("overlap")), 1)])
        out.append(t)
    return out


def hockney_table(run: P2PRun) -> Table:
    fit = run.fits["hockney"]
    t = Table(f"{run.name}: Hockney fit T(s) = alpha + s/beta", ["segment", "sizes (B)", "alpha (us)",
              "beta (MB/s)", "R^2"],
              caption="breakpoints (B): " + (", ".join(str(int(b)) for b in fit.get("breakpoints", [])) or "none"))
    for i, s in enumerate(fit["segments"]):
        t.rows.append([str(i + 1), f"{int(s['min_size'])}-{int(s['max_size'])}", num(float(s["alpha"]) * US, 3),
                       num(opt_float(s["beta"]) * MBS, 1), num(opt_float(s.get("r2")), 4)])
    return t


def _pair(run: P2PRun) -> str:
    same = run.context.get("same_node")
    return {True: "same node", False: "different nodes"}.get(same, f"{run.context.get('nprocs', '?')} ranks")


# ---- context --------------------------------------------------------------------------------------

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
        ("ranks", (f"{c.get('nprocs', '?')} on {c.get('nodes', '?')} node(s), at most "
                   f"{c.get('ranks_per_node', '?')} per node")),
        ("backend / GPU-aware MPI", _gpu_text(c)),
    ]
    if "omp_threads" in c:
        rows.append(("OpenMP threads per rank", str(c["omp_threads"])))
    if isinstance(run, P2PRun):
        rows.append(("mode", run.mode))
        if run.context.get("same_node") is not None:
            rows.append(("placement", _pair(run)))
    else:
        rows.append(("run", run.describe()))
        buffers = sorted({str(s.raw["mpi_buffers"]) for s in run.ran() if s.raw.get("mpi_buffers")})
        if buffers:  # host, device (GPU-aware MPI) or staged through host memory
            rows.append(("buffers handed to MPI", ", ".join(buffers)))
    return rows


def _gpu_text(c: dict) -> str:
    backend = c.get("backend", "host")
    if isinstance(backend, dict):
        backend = backend.get("name", "host")
    aware = c.get("gpu_aware")
    if aware is None:
        return f"{backend}; GPU-aware MPI not reported" if backend != "host" else "host (no GPU)"
    return f"{backend}; GPU-aware MPI: {'yes' if aware else 'no'}"


def contexts_summary(runs: list[HaloRun | P2PRun]) -> Table:
    """One line of context per results file, for the terminal."""
    t = Table("Context", ["results", "tool", "date", "machine", "MPI library", "ranks", "backend"], left_columns=7)
    for run in runs:
        rows = dict(context_rows(run))
        t.rows.append([str(run.path), rows["tool"].split(" (")[0], rows["date"], rows["machine"],
                       rows["MPI library"].split(",")[0], rows["ranks"], rows["backend / GPU-aware MPI"]])
    return t


def context_table(run: HaloRun | P2PRun) -> Table:
    t = Table(f"Context: {run.name}", ["", ""])
    t.rows = [[k, v] for k, v in context_rows(run)]
    t.left_columns = 2
    return t


# ---- rendering --------------------------------------------------------------------------------------

def console() -> Console:
    # Not a terminal (a file, a pipe, a test): wide enough that no table wraps.
    return Console() if sys.stdout.isatty() else Console(width=240, color_system=None)


def render(table: Table, out: Console) -> None:
    rich = RichTable(title=table.title, box=box.SIMPLE_HEAD, title_justify="left", show_header=any(table.headers))
    for i, header in enumerate(table.headers):
        rich.add_column(header, justify="left" if i < table.left_columns else "right")
    for i, row in enumerate(table.rows):
        rich.add_row(*row, end_section=i in table.section_after and i != len(table.rows) - 1)
    out.print(rich)
    if table.caption:  # below the table, unwrapped: the terminal wraps it, logs keep it whole
        out.print(Text(table.caption, style="dim"), soft_wrap=True)
    out.print()
