"""The machine profile's entries from the native tools' results (`checkmpi calibrate`, calibrate.py runs them):
which strategies measure what, and each rate, fit, wait and turns factor, the best over the separate runs of its
measurement where noise only ever slows a run down."""

from __future__ import annotations

import math
import statistics
from typing import Any

from checkmpi import catalog, placement
from checkmpi import tables as T
from checkmpi.errors import EXIT_FAILED, CheckmpiError
from checkmpi.grid import Triple
from checkmpi.machine import OVERLAPS, Machine
from checkmpi.model import completions, kernel_of, messages, predict
from checkmpi.report import case_of
from checkmpi.results import HaloRun, P2PRun, StrategyResult

# The strategies timed for each schedule of the exchange (calibrate.py's tiny block).
EXCHANGE_STRATEGIES = {"by_direction": "step3", "all_at_once": "step7"}
# The compute kernels' streaming rate, per kind (machine.KERNELS): step2 shifting the fields in place, step3 into a
# second buffer, step8 and step10 splitting either around the messages (interior and masked overlap), each composed
# with its compute named, whatever checkmpi-halo's default. A composition's result carries it as its alias.
_OVERLAP = "pack=kernel,transport=isend-irecv,overlap="
COMPUTE_STRATEGIES = {"in-place": "pack=hand,transport=sendrecv,compute=in-place",
                      "one-pass": "pack=kernel,buffers=host,transport=sendrecv,compute=one-pass",
                      "interior": f"{_OVERLAP}interior,compute=in-place", "masked": f"{_OVERLAP}masked,compute=in-place",
                      "interior-one-pass": f"{_OVERLAP}interior,compute=one-pass",
                      "masked-one-pass": f"{_OVERLAP}masked,compute=one-pass", "window": "shm-window"}
# The pack and unpack kernels' rates.
PACK_STRATEGY = "step3"
# Timed in the same runs, at each direction's plane shape: MPI_Pack and MPI_Unpack of the planes' datatypes (what
# MPI's datatype engine costs there), and the reads from a neighbour's shared-memory window with its node barrier.
DATATYPE_STRATEGY = "mpi-pack"
WINDOW_STRATEGY = "shm-window"
# On a node with more ranks than cores, the others' turns a rank waits through, per kernel and schedule
# (machine.TURN_KINDS): the compute kernels' strategies in place and one-pass without overlap, each overlap in
# place, step7 for all at once without overlap, and mock (the turns that land in its phases, its exchange being
# untimed).
TURN_STRATEGIES = {**{k: COMPUTE_STRATEGIES[k] for k in ("in-place", "one-pass", "interior", "masked")},
                   "all-at-once": "step7", "mock": "mock"}
HALO_STRATEGIES = ",".join(dict.fromkeys([*COMPUTE_STRATEGIES.values(), *TURN_STRATEGIES.values(), PACK_STRATEGY,
                                          DATATYPE_STRATEGY, WINDOW_STRATEGY]))


def wait_of(run: HaloRun, sid: str, row: catalog.Row, base: Machine) -> dict[str, float]:
    """Strategy `sid`'s MPI time per step in `run` (mean over ranks: `seconds`), what `base` predicts for its
    catalog row (`links`), its completions on the busiest rank (model.completions) and the wait per completion,
    max(0, seconds - links) over them."""
    case = case_of(run)
    seconds = result_of(run, sid).per_step("mpi", "mean")
    links = predict([row], case, base)[0].visible_mpi
    rank, kinds = placement.busiest(case.procs, case.rpn)
    n = completions(row, messages(row, case, kinds, rank))
    return {"seconds": seconds, "links": links, "completions": n, "wait": max(0.0, seconds - links) / n if n else 0.0}


def block_waits(doc: dict[str, Any], base: Machine,
                 runs: dict[tuple[Triple, int], list[tuple[HaloRun, str]]]) -> None:
    """Per block and rank count (2 or more), the wait per completion of each schedule, as _exchange finds it on the
    tiny block, from the block's own runs: the partner a completion waits for is late by a part of its step, so
    the wait grows with the block. EXCHANGE_STRATEGIES' MPI time per step less what `base` predicts for it without
    waits, per completion, the least over the runs (like every rate here, the best: a late partner only ever adds);
    into doc's blocks."""
    for point in doc["blocks"]["points"]:
        for entry in point["by_ranks"]:
            halos = [halo for halo, _ in runs.get((tuple(point["local"]), entry["ranks"]), [])]  # type: ignore[misc]
            if entry["ranks"] < 2 or not halos:
                continue
            rows = catalog.rows_of_run(halos[0])
            entry["waits"] = {schedule: min(wait_of(run, sid, rows[result_of(run, sid).id], base)["wait"]
                                            for run in halos)
                              for schedule, sid in EXCHANGE_STRATEGIES.items()}


def turns(runs: dict[int, tuple[list[HaloRun], str]], base: Machine, cores: int,
           local: list[int]) -> dict[str, Any]:
    """With more ranks on the node than cores: per kernel and schedule, the others' turns a rank waits through per
    step in units of its own work, from the memory and compute runs: TURN_STRATEGIES' measured step (loop less diag,
    mean over ranks) less what `base` predicts for it without turns, over the work it predicts; the fewest over
    the separate runs, not below 0."""
    points, source = [], ""
    for k, (halos, src) in runs.items():
        if k <= cores:
            continue
        points.append({"ranks": k, **turn_factors(halos, base)})
        source += ("; " if source else "") + src
    return {"local": local, "points": points, "source": source or "the node was not oversubscribed"}


def turn_factors(halos: list[HaloRun], base: Machine) -> dict[str, float]:
    """Per TURN_KINDS: TURN_STRATEGIES' measured step less what `base` predicts for it without turns, over the
    work it predicts; the fewest over `halos`, not below 0."""
    rows = [catalog.rows_of_run(run) for run in halos]
    factors: dict[str, float] = {}
    for kind, sid in TURN_STRATEGIES.items():
        values = []
        for run, by_id in zip(halos, rows):
            result = result_of(run, sid)
            p = predict([by_id[result.id]], case_of(run), base)[0]
            values.append((T.measured_total(result) - (p.total - p.turns)) / p.work)
        factors[kind] = max(0.0, min(values))
    return factors


def pack_entry(run: HaloRun, source: str, sync: float = 0.0, node_barriers: int = 1) -> dict[str, Any]:
    """Payload bytes per second per direction (mean over ranks) of step3's pack and unpack kernels, and where the run
    has them, mpi-pack's MPI_Pack and MPI_Unpack and shm-window's reads (its direction timer), with one of the
    window's `node_barriers` node barriers a step: shm-window's MPI time per step less its reads and `sync`
    (seconds of --sync's barriers), over them."""
    ran = {r.id: r for r in run.ran()}
    if not (r := ran.get(PACK_STRATEGY)) or not r.steps:
        raise CheckmpiError(f"no {PACK_STRATEGY} result in '{run.path}'", EXIT_FAILED)
    timers = {"pack": (r, "pack_{}"), "unpack": (r, "unpack_{}")}
    if (dt := ran.get(DATATYPE_STRATEGY)) is not None:
        timers.update({"mpi_pack": (dt, "pack_{}"), "mpi_unpack": (dt, "unpack_{}")})
    if (win := ran.get(WINDOW_STRATEGY)) is not None:
        timers["window"] = (win, "{}")
    entry: dict[str, Any] = {}
    for d in "xyz":
        entry[d] = {}
        for op, (result, name) in timers.items():
            seconds = result.timers[name.format(d)].mean
            if not seconds > 0:
                raise CheckmpiError(f"'{run.path}': {result.id}'s {name.format(d)} timer is zero", EXIT_FAILED)
            entry[d][op] = float(result.raw["traits"]["halo_bytes"][d]) * result.steps / seconds
    if win is not None:
        reads = sum(win.per_step(d, "mean") for d in "xyz")
        entry["window_wait"] = max(0.0, win.per_step("mpi", "mean") - reads - sync) / max(1, node_barriers)
    entry.update({"local": list(run.local), "source": source, "ranks": run.nprocs, "precision": run.precision})
    return entry


def best_pack(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Pack entries of separate runs of one measurement: the best of each measured value (the highest rate, the
    shortest wait)."""
    out = {**entries[0], **{d: {op: max(e[d][op] for e in entries) for op in entries[0][d]} for d in "xyz"}}
    if "window_wait" in out:
        out["window_wait"] = min(e["window_wait"] for e in entries)
    return out


def kernel_rates(halos: list[HaloRun]) -> dict[str, float]:
    """Each compute kernel's best rate (machine.KERNELS), over every strategy of the runs that runs it (as the model
    says: model.kernel_of): a strategy's compute timer holds its kernel alone, and on a VM the same kernel moves by
    a third from one strategy's loop to the next, so the more loops the surer the best."""
    rates: dict[str, float] = {}
    for run in halos:
        rows = catalog.rows_of_run(run)
        for r in run.ran():
            if r.id in rows and (rate := compute_bandwidth(run, r.id)) > rates.get(
                    kind := kernel_of(rows[r.id], str(run.config["compute"])), 0.0):
                rates[kind] = rate
    missing = [k for k in COMPUTE_STRATEGIES if k not in rates]
    if missing:
        raise CheckmpiError(f"no strategy ran the {', '.join(missing)} kernel in '{halos[0].path}'", EXIT_FAILED)
    return {k: rates[k] for k in COMPUTE_STRATEGIES}


def overlap_hides(halos: list[HaloRun], barrier: float) -> dict[str, float]:
    """Per overlap, the part of the MPI time it could hide that it does: 1 - its composition's MPI time per step over
    step7's (mean over ranks, both less their --sync barrier), in [0, 1], the median over the runs (a ratio of two
    strategies in one run: its best would be its noisiest)."""
    out = {}
    for kind in OVERLAPS:
        parts = []
        for run in halos:
            plain = result_of(run, "step7").per_step("mpi", "mean") - barrier
            split = result_of(run, COMPUTE_STRATEGIES[kind]).per_step("mpi", "mean") - barrier
            parts.append(min(1.0, max(0.0, 1.0 - split / plain)) if plain > 0 else 0.0)
        out[kind] = statistics.median(parts)
    return out


def compute_bandwidth(run: HaloRun, sid: str) -> float:
    """The compute's bytes per second per rank: the bytes the tool credits a step's compute with
    (compute_bytes_per_step) over the strategy's compute timer per step (mean over ranks)."""
    r = result_of(run, sid)
    seconds = r.per_step("compute", "mean")
    if not seconds > 0:
        raise CheckmpiError(f"'{run.path}': no compute time for {sid}", EXIT_FAILED)
    return r.compute_bytes_per_step / seconds


def result_of(run: HaloRun, sid: str) -> StrategyResult:
    """The result of strategy `sid` (an id, or a composition its result carries as alias) in `run`."""
    r = next((s for s in run.ran() if sid in (s.id, s.alias)), None)
    if r is None:
        raise CheckmpiError(f"no {sid} result in '{run.path}'", EXIT_FAILED)
    return r


def nonnegative(value: Any, where: str, notes: list[str]) -> float:
    """A fitted parameter; a negative one (noise around zero) becomes 0 with a note."""
    v = float("nan") if value is None else float(value)
    if not math.isfinite(v):
        raise CheckmpiError(f"the fit of {where} is not a number ({value!r}); run calibrate again", EXIT_FAILED)
    if v < 0:
        notes.append(f"{where} fitted {v:.3g}, set to 0")
        return 0.0
    return v


def segments(run: P2PRun, where: str, notes: list[str]) -> list[dict[str, Any]]:
    """Hockney segments of a sweep; the first covers sizes from 0; a flat one (beta null) gets the bandwidth
    its largest size reached."""
    fitted = (run.fits.get("hockney") or {}).get("segments") or []
    if not fitted:
        raise CheckmpiError(f"'{run.path}' has no Hockney fit", EXIT_FAILED)
    by_size = {int(r["size"]): r for r in run.results}
    out = []
    for i, s in enumerate(fitted):
        alpha = nonnegative(s["alpha"], f"{where}.hockney[{i}].alpha", notes)
        beta = s["beta"]
        if beta is None or not float(beta) > 0:
            r = by_size[int(s["max_size"])]
            beta = int(s["max_size"]) / float(r["latency"]["median"])
            notes.append(f"{where}.hockney[{i}]: times flat over its sizes; beta = size / time at "
                         f"{int(s['max_size'])} B")
        out.append({"min_size": 0 if i == 0 else int(s["min_size"]), "max_size": int(s["max_size"]),
                    "alpha": alpha, "beta": float(beta), "r2": s.get("r2")})
    return out


def link(ping: P2PRun, loggp: P2PRun, source: str, notes: list[str], where: str) -> dict[str, Any]:
    fit = loggp.fits.get("loggp")
    lg = None
    if fit:
        lg = {k: nonnegative(fit.get(k), f"{where}.loggp.{k}", notes) for k in ("L", "o_s", "o_r", "g", "G")}
        lg["r2"] = fit.get("r2")
    return {"hockney": segments(ping, where, notes), "loggp": lg, "source": source,
            "buffer": ping.config.get("buffer", "host")}


def self_entry(run: P2PRun, source: str, notes: list[str]) -> dict[str, Any]:
    """alpha of the smallest messages' regime, beta of the largest's; the segments kept as well."""
    fitted = segments(run, "self", notes)
    return {"alpha": fitted[0]["alpha"], "beta": fitted[-1]["beta"], "hockney": fitted, "source": source}


def datatype_entry(run: P2PRun, source: str, notes: list[str]) -> dict[str, Any] | None:
    fit = run.fits.get("datatype")
    if not fit:
        notes.append(f"datatype: no fit in '{run.path}'")
        return None
    return {"o": nonnegative(fit.get("o"), "datatype.o", notes), "O": nonnegative(fit.get("O"), "datatype.O", notes),
            "r2": fit.get("r2"), "source": source}
