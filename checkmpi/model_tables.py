"""Tables of the model: predictions by phase, predicted vs measured by phase
(explain), and the scale-up projection. Built as plain strings (tables.Table)
that fit 80 columns."""

from __future__ import annotations

import math

from checkmpi.machine import Machine, Memory
from checkmpi.model import Prediction
from checkmpi.projection import Point
from checkmpi.results import HaloRun, StrategyResult, x_join
from checkmpi.tables import Table, _short, measured_total, pick_unit


def _t(value: float, scale: float) -> str:
    return _short(value * scale, 2) if not math.isnan(value) else "-"


def machine_caption(m: Machine) -> str:
    ctx = m.context
    if ctx.get("derived_from") == "p2p":
        where = f"point-to-point fit from {m.intra.source}; {m.memory.source}"
    else:
        where = (f"machine profile {m.path} ({ctx.get('host', '?')}, {ctx.get('mpi_library', '?')[:40]}, "
                 f"{ctx.get('created', '?')})")
    extra = f"; datatype overhead from {m.datatype.source}" if m.datatype else ""
    return f"model: {where}{extra}; see docs/model.md"


def prediction_table(predictions: list[Prediction], machine: Machine, title: str) -> Table:
    unit, scale = pick_unit(max((p.total for p in predictions), default=0.0))
    headers = ["strategy", "pack", "MPI", "self", "unpack", "barrier", "compute", "hidden", "total"]
    table = Table(f"{title} ({unit})", headers,
                  caption=(f"per step on the busiest rank, in {unit}; MPI: messages to other ranks; self: to "
                           f"itself; hidden: MPI time overlapped by compute; total = the rest less hidden. "
                           + machine_caption(machine)))
    for p in predictions:
        t = p.terms
        table.rows.append([p.row.id] + [_t(t[k], scale) for k in
                          ("pack", "mpi", "self", "unpack", "barrier", "compute", "hidden")] + [_t(p.total, scale)])
    return table


def measured_phases(s: StrategyResult) -> dict[str, float]:
    """Per step, mean over ranks: checkmpi-halo's pack, mpi (comm less pack and unpack: MPI calls,
    self-exchanges, barriers, waits), unpack and compute timers, and the loop less diag."""
    return {"pack": s.per_step("pack", "mean"), "mpi": s.per_step("mpi", "mean"),
            "unpack": s.per_step("unpack", "mean"), "compute": s.per_step("compute", "mean"),
            "total": measured_total(s)}


def predicted_phases(p: Prediction) -> dict[str, float]:
    t = p.terms
    return {"pack": t["pack"], "mpi": p.visible_mpi, "barrier": t["barrier"], "unpack": t["unpack"],
            "compute": t["compute"], "total": p.total}


def explain_table(run: HaloRun, predictions: list[Prediction], machine: Machine) -> Table:
    """Two rows per strategy, predicted and measured, phase by phase."""
    measured = {s.id: s for s in run.ran()}
    pairs = [(p, measured[p.row.id]) for p in predictions if p.row.id in measured]
    unit, scale = pick_unit(max((max(p.total, measured_total(s)) for p, s in pairs), default=0.0))
    headers = ["strategy", "", "pack", "MPI", "of it barrier", "unpack", "compute", "total", "meas./ pred."]
    table = Table(f"{run.name}: where the time goes, predicted vs measured ({unit} per step)", headers,
                  caption=("measured: checkmpi-halo's timers, mean over ranks; MPI = comm less pack and unpack "
                           "(MPI calls, self-exchanges, barriers and waits; the barrier is not timed apart); "
                           "predicted MPI less what compute hides; total measured = loop - diag. "
                           + machine_caption(machine)), left_columns=2)
    for p, s in pairs:
        pred, meas = predicted_phases(p), measured_phases(s)
        ratio = meas["total"] / pred["total"] if pred["total"] > 0 else math.nan
        table.rows.append([s.id, "pred."] + [_t(pred[k], scale) for k in
                          ("pack", "mpi", "barrier", "unpack", "compute", "total")] + [""])
        table.rows.append(["", "meas."] + [_t(meas[k], scale) for k in ("pack", "mpi")] + [""]
                          + [_t(meas[k], scale) for k in ("unpack", "compute", "total")] + [_short(ratio, 2)])
        table.section_after.add(len(table.rows) - 1)
    return table


def placement_table(points: list[Point], ranks_per_node: int | None, local: tuple[int, int, int]) -> Table:
    nodes = f"{ranks_per_node} ranks per node" if ranks_per_node else "every count on one node"
    table = Table(f"Scale-up: grids and neighbours ({nodes}, local {x_join(local)})",
                  ["ranks", "grid", "nodes", "busiest rank", "self", "on node", "off node"],
                  caption="grid as MPI_Dims_create; ranks fill nodes in Cartesian order (last dimension fastest); "
                          "the busiest rank has the most off-node neighbours")
    for pt in points:
        c = pt.links
        table.rows.append([str(pt.nprocs), x_join(pt.procs), str(pt.nodes), str(pt.rank), str(c["self"]),
                           str(c["intra"]), str(c["inter"])])
    return table


def projection_table(points: list[Point], machine: Machine) -> Table:
    ids = [p.row.id for p in points[0].predictions] if points else []
    unit, scale = pick_unit(max((p.total for pt in points for p in pt.predictions), default=0.0))
    table = Table(f"Scale-up: predicted time per step ({unit})", ["strategy"] + [str(pt.nprocs) for pt in points],
                  caption="columns: ranks; weak scaling (the same block per rank). " + machine_caption(machine))
    for i, sid in enumerate(ids):
        table.rows.append([sid] + [_t(pt.predictions[i].total, scale) for pt in points])
    return table


def machine_table(m: Machine) -> Table:
    """The profile in one table: what each parameter is and its value."""
    t = Table(f"Machine profile: {m.context['host']}, {m.context['nodes']} node(s), {m.context['ranks_per_node']} "
                f"rank(s) per node, backend {m.context['backend']}", ["parameter", "value"], left_columns=2)
    for name, link in (("intra-node", m.intra), ("inter-node", m.inter)):
        if link is None:
            t.rows.append([f"{name} link", "not measured (one node)"])
            continue
        for s in link.hockney:
            t.rows.append([f"{name} Hockney {s.min_size}-{s.max_size} B",
                           f"alpha {s.alpha * 1e6:.3f} us, beta {s.beta / 1e9:.2f} GB/s"])
        if link.loggp:
            g = link.loggp
            t.rows.append([f"{name} LogGP", f"L {g.L * 1e6:.3f}, o_s {g.o_s * 1e6:.3f}, o_r {g.o_r * 1e6:.3f}, "
                           f"g {g.g * 1e6:.3f} us, G {g.G * 1e9:.4f} ns/B"])
    t.rows.append(["self-exchange", f"alpha {m.self_exchange.alpha * 1e6:.3f} us, "
                   f"beta {m.self_exchange.beta / 1e9:.2f} GB/s"])
    t.rows.append(["barrier", ", ".join(f"{b.ranks}: {b.seconds * 1e6:.2f} us" for b in m.barrier)])
    if m.exchange:
        t.rows.append(["wait per completion", ", ".join(f"{w.ranks}: {w.by_direction * 1e6:.2f}/"
                                                        f"{w.all_at_once * 1e6:.2f} us" for w in m.exchange.points)
                       + " (by direction/all at once)"])
    if m.datatype:
        t.rows.append(["datatype overhead", f"o {m.datatype.o * 1e6:.3f} us, O {m.datatype.O * 1e9:.4f} ns/B"])
    t.rows.append(["memcpy per rank", _per_rank(m.memory)])
    if m.compute:
        for kind, rate in m.compute.rates.items():
            t.rows.append([f"compute {kind} per rank ({x_join(m.compute.local)})", _per_rank(rate)])
    for backend in ("host", "cuda"):
        p = m.pack(backend)
        if p is None:
            continue
        t.rows.append([f"pack/unpack {backend} ({x_join(p.local)})",
                       ", ".join(f"{d} {p.direction(d).pack / 1e9:.2f}/{p.direction(d).unpack / 1e9:.2f}"
                                 for d in "xyz") + " GB/s"])
        for name, keys in (("MPI_Pack/MPI_Unpack", ("mpi_pack", "mpi_unpack")), ("window reads", ("window",))):
            rates = [[getattr(p.direction(d), k) for k in keys] for d in "xyz"]
            if all(v is not None for r in rates for v in r):
                t.rows.append([f"{name} {backend}", ", ".join(
                    f"{d} " + "/".join(f"{v / 1e9:.2f}" for v in r) for d, r in zip("xyz", rates)) + " GB/s"])
        if p.window_wait is not None:
            t.rows.append(["window node barrier", ", ".join(
                f"{k}: {q.window_wait * 1e6:.1f} us" for k, q in p.by_ranks if q.window_wait is not None)])
    if m.blocks:
        for point in m.blocks.points:
            t.rows.append([f"block {x_join(point.local)} ({point.bytes / 2 ** 20:.1f} MiB of fields per rank)", "; ".join(
                f"{k} at once: copy {r.copy / 1e9:.1f}, in place {r.compute['in-place'] / 1e9:.1f}, one pass "
                f"{r.compute['one-pass'] / 1e9:.1f}, pack x {r.x.pack / 1e9:.2f} GB/s" for k, r in point.by_ranks)])
    if m.turns:
        for w in m.turns.points:
            t.rows.append([f"turns, {w.ranks} ranks (x own work)", ", ".join(
                f"{k} {v:.2f}" for k, v in w.factors.items())])
        for w in m.turns.across:
            t.rows.append([f"turns across nodes, {w.ranks} ranks per CPU (x own work)", ", ".join(
                f"{k} {v:.2f}" for k, v in w.factors.items())])
    return t


def _per_rank(rates: Memory) -> str:
    """Bandwidth per rank versus ranks at once: "1 at once: 20.10 GB/s, 2 at once: ..."."""
    return ", ".join(f"{c.ranks} at once: {c.bandwidth / 1e9:.2f} GB/s" for c in rates.copy)
