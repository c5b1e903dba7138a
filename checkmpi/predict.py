"""`checkmpi predict`: the model's prediction for a case, or a projection over
rank counts, as tables and as JSON of schema checkmpi.predict/1
(schemas/checkmpi.predict-1.schema.json)."""

from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path
from typing import Callable

from checkmpi.atomic import refuse_inputs, refuse_odd_target, write_json
from checkmpi import bounds
from checkmpi.errors import CheckmpiError
from checkmpi.machine import STAND_IN_WARNING
from checkmpi.results import HaloRun, load

PREDICT_SCHEMA = "checkmpi.predict/1"


def predict_command(args: argparse.Namespace) -> int:
    """`checkmpi predict`: the model's time per step of each strategy for one case, or a weak scale-up."""
    from checkmpi import catalog
    from checkmpi import model_tables as MT
    from checkmpi import tables as T
    from checkmpi.grid import parse_triple
    from checkmpi.model import predict
    from checkmpi.projection import MAX_RANKS, parse_scale, project

    inputs = [Path(p) for p in (args.p2p or [])] + [Path(p) for p in (args.machine, args.halo) if p]
    bounds.at_most(args.ranks_per_node, "--ranks-per-node", bounds.MAX_NP)
    if args.ranks_per_node is not None and args.ranks_per_node < 1:
        raise CheckmpiError(f"--ranks-per-node must be positive, got {args.ranks_per_node}")
    if not args.strategy.strip(" ,"):
        raise CheckmpiError(f"--strategy needs at least one name, got {args.strategy!r}")
    local = parse_triple(args.local, "--local")
    counts = parse_scale(args.scale) if args.scale else []
    procs = parse_triple(args.procs, "--procs") if args.procs else (1, 1, 1)
    if math.prod(procs) > MAX_RANKS:
        raise CheckmpiError(f"--procs {args.procs} is {math.prod(procs)} ranks; at most {MAX_RANKS} (the model "
                            "searches the busiest rank rank by rank)")
    if args.json:  # checked before anything is written (the projection's plot)
        refuse_inputs(Path(args.json), inputs, "--json")
        refuse_odd_target(Path(args.json))
    if args.plots and not counts:
        raise CheckmpiError("--plots goes with --scale: the projection over rank counts is what it draws")
    if args.halo and args.copy_bandwidth is not None:
        raise CheckmpiError("--halo and --copy-bandwidth both give the copy bandwidth; give one")
    # The block in bytes comes from the binary's plan, asked once and only once the inputs have been read.
    geometry = functools.cache(lambda: _geometry(args, procs, local))
    machine = _machine(args, lambda: geometry().real_bytes)
    rpn = args.ranks_per_node
    if counts and rpn is None:
        rpn = int(machine.context.get("cores_per_node") or 0) or None
        if rpn is None:
            raise CheckmpiError("--scale needs --ranks-per-node (the inputs do not say how many cores a node has)")
    case = _case(args, procs, local, rpn, geometry())
    rows = catalog.load(args.strategy, args.bin)
    out = T.console()
    doc: dict = {"schema": PREDICT_SCHEMA, "case": {
        "procs": None if counts else case.procs, "local": case.local, "precision": case.precision,
        "sync": case.sync, "compute": case.compute, "self_copy": case.self_copy, "border": case.border,
        "ranks_per_node": case.rpn if not counts else rpn, "backend": case.backend},
        "model": {"machine": str(machine.path), "derived_from": machine.context.get("derived_from", "machine")}}
    if counts:
        points = project(counts, case, rows, machine, args.bin)
        link = machine.off_node_link(sum(pt.links["inter"] for pt in points))
        T.render(MT.placement_table(points, rpn, local), out)
        T.render(MT.projection_table(points, machine), out)
        doc["projection"] = [{"ranks": pt.nprocs, "procs": pt.procs, "nodes": pt.nodes, "busiest_rank": pt.rank,
                              "links": pt.links, "predictions": [_prediction_json(p) for p in pt.predictions]}
                             for pt in points]
        if args.plots:
            from checkmpi import plots

            fig = plots.projection(points, {}, Path(args.plots), stand_in=link == "on-node stand-in")
            print(f"checkmpi: plot: {fig.png}", file=sys.stderr)
    else:
        predictions = predict(rows, case, machine)
        link = machine.off_node_link(max((p.links["inter"] for p in predictions), default=0))
        title = (f"Predicted time per step: {'x'.join(map(str, case.procs))} ranks ({case.rpn} per node), local "
                 f"{'x'.join(map(str, case.local))}, {case.precision}, sync {case.sync}")
        T.render(MT.prediction_table(predictions, machine, title), out)
        doc["predictions"] = [_prediction_json(p) for p in predictions]
    doc["off_node_link"] = link
    if link == "on-node stand-in":
        print(f"checkmpi: warning: {STAND_IN_WARNING}", file=sys.stderr)
    if args.json:
        write_json(Path(args.json), doc)
    return 0


def _machine(args: argparse.Namespace, real_bytes: Callable[[], int]):
    from checkmpi.machine import load_machine
    from checkmpi.p2p_profile import copy_bandwidth_for, machine_from_p2p
    from checkmpi.results import P2PRun

    if args.machine:
        if args.copy_bandwidth is not None or args.halo:
            raise CheckmpiError("--copy-bandwidth and --halo go with --p2p; --machine has its own copy bandwidth")
        return load_machine(args.machine)
    runs = [load(p) for p in args.p2p]
    if not all(isinstance(r, P2PRun) for r in runs):
        raise CheckmpiError("--p2p needs checkmpi-p2p results (schema checkmpi.p2p/2)")
    halo = load(args.halo) if args.halo else None
    if halo is not None and not isinstance(halo, HaloRun):
        raise CheckmpiError(f"--halo needs checkmpi-halo results; '{args.halo}' is a checkmpi-p2p file")
    bandwidth = copy_bandwidth_for(halo, gbs(args.copy_bandwidth))
    return machine_from_p2p(runs, bandwidth, real_bytes())  # type: ignore[arg-type]


def _geometry(args: argparse.Namespace, procs, local):
    """The block in bytes, from the binary's plan of the case."""
    from checkmpi import halo_plan
    from checkmpi.model import Geometry
    from checkmpi.results import x_join

    plan = halo_plan.make(["--no-input", "--local", x_join(local), "--procs", x_join(procs), "--precision",
                           args.precision], args.bin)
    return Geometry.of(plan.raw)


def _case(args: argparse.Namespace, procs, local, rpn, geometry):
    from checkmpi import catalog
    from checkmpi.model import Case

    if args.border < 1:
        raise CheckmpiError(f"--border must be positive, got {args.border}")
    bounds.at_most(args.border, "--border", 1 << 30)  # checkmpi-halo's limit
    compute = catalog.default_compute(args.backend, args.bin) if args.compute == "auto" else args.compute
    if compute == "in-place" and compute != catalog.default_compute(args.backend, args.bin):
        raise CheckmpiError(f"--compute in-place works on host memory, not on the {args.backend} backend")
    return Case(procs, local, geometry, args.precision, args.sync, args.border, rpn, compute,
                args.self_copy, args.backend)


def _prediction_json(p) -> dict:
    return {"strategy": p.row.id, "alias": p.row.alias, "total": p.total, "terms": p.terms, "work": p.work,
            "turns": p.turns, "messages": p.messages, "bytes": p.bytes, "busiest_rank": p.rank, "links": p.links}


def gbs(value: float | None) -> float | None:
    if value is None:
        return None
    if value <= 0:
        raise CheckmpiError(f"--copy-bandwidth must be positive, got {value:g}")
    return value * 1e9
