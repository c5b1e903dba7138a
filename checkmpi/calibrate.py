"""`checkmpi calibrate`: runs the native tools' measurements the model needs
and writes them as a machine profile (schema checkmpi.machine/2, docs/model.md,
"Calibration"). The tools' own JSON results are kept in the profile's folder;
every parameter names the command and file it came from."""

from __future__ import annotations

import argparse
import math
import os
import shlex
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkmpi import __version__, bounds, catalog
from checkmpi.calibrate_entries import (COMPUTE_STRATEGIES, EXCHANGE_STRATEGIES, HALO_STRATEGIES, TURN_STRATEGIES,
                                        WINDOW_STRATEGY, best_pack, block_waits, datatype_entry, kernel_rates, link,
                                        overlap_hides, pack_entry, self_entry, turn_factors, turns, wait_of)
from checkmpi.calibrate_nodes import Nodes, barriers_across, doubling, nodes_of
from checkmpi import tables as T
from checkmpi.atomic import refuse_odd_target, write_json, write_text
from checkmpi.errors import EXIT_FAILED, EXIT_USAGE, CheckmpiError
from checkmpi.grid import Triple, parse_triple, physical_cores
from checkmpi.jobs import RANKS_PER_CPU, ProgressLine
from checkmpi.machine import MACHINE_SCHEMA, Machine, load_machine, machine_of
from checkmpi.model import load_of
from checkmpi.model_tables import machine_table
from checkmpi.native import Job, Launcher, failure, find_executable, find_launcher, say
from checkmpi.report import case_of
from checkmpi.results import HaloRun, P2PRun, load, new_path, run_folder, x_join


@dataclass(frozen=True)
class Sizes:
    """What each measurement runs: checkmpi-p2p options per mode, and the halo block and steps."""

    p2p: dict[str, list[str]]
    local: Triple
    steps: int
    exchange_steps: int  # of the tiny-block exchange (EXCHANGE_LOCAL)
    halo_runs: int  # separate runs of the memory, compute and packing measurement per rank count: the best
    blocks: tuple[Triple, ...]  # where the rates that depend on the caches are measured too (besides `local`)


# A few minutes on a laptop-class node (memory, compute and packing from blocks inside L2 to blocks far past the
# caches); --quick: seconds, for tests.
FULL = Sizes({"pingpong": ["-m", "1:4194304", "-i", "1000", "-x", "50"],
              "loggp": ["-m", "1:1048576", "-i", "200", "-x", "10"],
              "datatype": ["-m", "4:1048576", "-i", "200", "-x", "10"],
              "self": ["-m", "1:4194304", "-i", "1000", "-x", "50"],
              "barrier": ["-i", "1000", "-x", "200"]}, (128, 128, 128), 50, 1000, 5,
             # From inside L2 (32^3: 0.5 MB of fields per rank) to far beyond a 32 MiB L3 (256^3: 206 MB).
             ((32, 32, 32), (64, 64, 64), (128, 128, 128), (256, 256, 256)))
QUICK = Sizes({"pingpong": ["-m", "1:16384", "-i", "50", "-x", "5"],
               "loggp": ["-m", "1:4096", "-i", "10", "-x", "2"],
               "datatype": ["-m", "4:4096", "-i", "10", "-x", "2"],
               "self": ["-m", "1:16384", "-i", "50", "-x", "5"],
               "barrier": ["-i", "50", "-x", "5"]}, (16, 16, 16), 10, 20, 2, ((8, 8, 8), (16, 16, 16)))
# The exchange's block: messages of about a kilobyte, so that what its time holds beyond the link
# latencies is the ranks waiting for each other (the strategies timed: calibrate_entries.EXCHANGE_STRATEGIES).
EXCHANGE_LOCAL: Triple = (8, 8, 8)


class Runner:
    """Launches the native tools one after another under a shared deadline; keeps their results in `folder`."""

    def __init__(self, args: argparse.Namespace, folder: Path):
        self.folder = folder
        self.bin_dir = args.bin
        self.p2p_exe = find_executable("checkmpi-p2p", args.bin).path
        self.halo_exe = find_executable("checkmpi-halo", args.bin).path
        self.launcher: Launcher = find_launcher(args.launcher, self.p2p_exe)
        try:
            self.launcher_args = shlex.split(args.mpi_args)
        except ValueError as e:
            raise CheckmpiError(f"--mpi-args: {e}") from None
        self.deadline = time.monotonic() + args.timeout if args.timeout else None
        # On other nodes /tmp is each node's own: the jobs' temporary files (--events) go to the results' folder.
        self.scratch = folder if nodes_of(args.hosts, getattr(args, "hostfile", None)).named else None

    def _left(self) -> float | None:
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CheckmpiError("calibration ran past --timeout", EXIT_FAILED)
        return left

    def run(self, tool: str, np: int, argv: list[str], name: str, what: str, per_node: int | None = None,
            extra_launcher: list[str] | None = None, allowed: tuple[int, ...] = (0,)) -> tuple[Any, str, int]:
        """(loaded results or None, source text, exit code) of `tool argv --json folder/name.json`."""
        path = self.folder / f"{name}.json"
        exe = self.p2p_exe if tool == "checkmpi-p2p" else self.halo_exe
        job = Job(self.launcher, np, [str(exe), *argv, "--json", str(path)],
                  tuple((extra_launcher or []) + self.launcher_args), per_node=per_node, scratch=self.scratch)
        with ProgressLine(f"{what} ({tool} on {np} rank{'s' if np > 1 else ''})") as progress:
            done = job.run(self._left(), progress.update)
        write_text(self.folder / f"{name}.log", done.stdout + "\n".join(done.stderr_tail) + "\n")
        if done.returncode not in allowed:
            raise failure(tool, done)
        if done.returncode != 0:  # an allowed refusal: the tool's own error line says why
            why = [line for line in done.stderr_tail if line.startswith(f"{tool}: error:")]
            return None, (why or done.stderr_tail or ["no error message"])[-1], done.returncode
        if not path.exists():
            raise CheckmpiError(f"{tool} finished but wrote no results to '{path}'", EXIT_FAILED)
        source = f"{tool} {' '.join(argv)} on {np} rank{'s' if np > 1 else ''} ({path})"
        return load(path), source, 0


def calibrate(args: argparse.Namespace) -> int:
    sizes = QUICK if args.quick else FULL
    if args.np is not None and args.np < 2:
        raise CheckmpiError(f"--np must be at least 2 (a ping-pong needs two ranks), got {args.np}")
    bounds.at_most(args.np, "--np", bounds.MAX_NP)
    local = parse_triple(args.local, "--local") if args.local else sizes.local
    where = nodes_of(args.hosts, getattr(args, "hostfile", None))
    blocks = _blocks(args.blocks) if getattr(args, "blocks", None) else sizes.blocks
    np = args.np or max(2, physical_cores())
    nodes = where.count
    most = RANKS_PER_CPU * (os.cpu_count() or 1) * nodes  # the barrier runs every count up to np
    if np > most and not args.force:
        raise CheckmpiError(f"--np {np} is more ranks than {nodes} node(s) of {os.cpu_count() or 1} CPUs place: at "
                            f"most {most} ({RANKS_PER_CPU} per CPU; --force runs it anyway)")
    out = Path(args.json) if args.json else new_path("machine", ".json")
    if out.is_dir():
        raise CheckmpiError(f"-o '{out}' is a directory")
    refuse_odd_target(out)  # before the measurements, not after them
    folder = measurement_folder(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckmpiError(f"cannot create folder '{folder}': {e.strerror}", EXIT_FAILED) from None
    runner = Runner(args, folder)
    nodes_allocated = where.count
    launcher = runner.launcher
    pair_at, pair_per_node = where.on_one(launcher, 2)  # everything measured on one node: on the first
    one_at, _ = where.on_one(launcher, 1)

    # The GPU first: with one, messages go from device buffers, as the cuda backend's halo exchange sends them.
    steps = halo_steps(sizes, local)
    pack_cuda, cuda_note = _pack(runner, "cuda", local, steps, one_at)
    backend = "cuda" if pack_cuda else "host"
    buffer = ["--buffer", "cuda"] if backend == "cuda" else []

    ping, ping_src, _ = runner.run("checkmpi-p2p", 2, ["pingpong", *sizes.p2p["pingpong"], *buffer], "pingpong",
                                   "intra-node ping-pong", pair_per_node, pair_at)
    loggp, loggp_src, _ = runner.run("checkmpi-p2p", 2, ["loggp", *sizes.p2p["loggp"], *buffer], "loggp",
                                     "intra-node LogGP", pair_per_node, pair_at)
    _same_node(ping, True)
    _same_node(loggp, True)
    notes: list[str] = []
    intra = link(ping, loggp, f"{ping_src}; {loggp_src}", notes, "links.intra")
    inter = None
    if nodes_allocated > 1:
        launch, per_node = where.across(launcher, 2, 1)
        iping, iping_src, _ = runner.run("checkmpi-p2p", 2, ["pingpong", *sizes.p2p["pingpong"], *buffer],
                                         "inter-pingpong", "inter-node ping-pong", per_node, launch)
        ilog, ilog_src, _ = runner.run("checkmpi-p2p", 2, ["loggp", *sizes.p2p["loggp"], *buffer], "inter-loggp",
                                       "inter-node LogGP", per_node, launch)
        _same_node(iping, False)
        _same_node(ilog, False)
        inter = link(iping, ilog, f"{iping_src}; {ilog_src}", notes, "links.inter")
    dt, dt_src, _ = runner.run("checkmpi-p2p", 2, ["datatype", *sizes.p2p["datatype"], *buffer], "datatype",
                               "derived datatypes", pair_per_node, pair_at)
    selfx, self_src, _ = runner.run("checkmpi-p2p", 1, ["self", *sizes.p2p["self"], *buffer], "self",
                                    "self-exchange", extra_launcher=one_at)
    barriers = []  # each on k ranks with no others: idle ranks would take their cores' time
    for k in doubling(np)[1:]:
        at, per_node = where.on_one(launcher, k)
        barrier, bar_src, _ = runner.run("checkmpi-p2p", k, ["barrier", *sizes.p2p["barrier"]], f"barrier-{k}",
                                         "barrier", per_node, at)
        r = next(r for r in barrier.results if int(r["nprocs"]) == k)
        barriers.append({"ranks": k, "seconds": float(r["latency"]["median"]), "source": bar_src})
    ranks_per_node = int(barrier.context["ranks_per_node"])
    # Named nodes may have other CPUs than this one (an emulated node has one): the node's, as its ranks saw them.
    cores = int(barrier.context["cpus_per_node"][0]) if where.named else physical_cores()
    across = barriers_across(runner, where, np, sizes.p2p["barrier"]) if nodes_allocated > 1 else None

    copies, pack_host, packs, halo_runs = [], None, [], {}
    kernels: dict[str, list[dict[str, Any]]] = {kind: [] for kind in COMPUTE_STRATEGIES}
    mem_src = ""
    # Separate runs, and the best of them (as STREAM reports its best rate): what disturbs a run (a slow spell of
    # the VM's memory, a neighbour, a preemption) only ever slows it down, and on a VM a run's memory rate can sit
    # a third off the others' for its whole life. Slow spells last seconds to a minute, so the rounds go over
    # every block and rank count in turn: a spell hits one round of a case, not all of them. A block the node's
    # memory cannot hold with that many ranks (checkmpi-halo refuses it) is left out at that rank count.
    counts = doubling(ranks_per_node)
    blocks = sorted({*blocks, local}, key=math.prod)
    runs: dict[tuple[Triple, int], list[tuple[HaloRun, str]]] = {(b, k): [] for b in blocks for k in counts}
    for i in range(1, sizes.halo_runs + 1):
        for block in blocks:
            for k in counts:
                if (block, k) not in runs:
                    continue
                name = "x".join(map(str, block))
                argv = _halo_argv("host", k, block, halo_steps(sizes, block), folder, HALO_STRATEGIES,
                                  f"halo-{name}-{i}") + ["--memcpy-probe"]
                at, per_node = where.on_one(launcher, k)
                halo, src, code = runner.run("checkmpi-halo", k, argv, f"halo-host-{name}-{k}-{i}",
                                             f"memory, compute and packing, {name}, {k} rank{'s' if k > 1 else ''} "
                                             f"at once, run {i}", per_node, at,
                                             allowed=(0,) if block == local else (0, EXIT_USAGE))
                if code != 0:
                    notes.append(f"blocks: {name} on {k} ranks left out: {src}")
                    del runs[(block, k)]
                    continue
                if halo.memcpy_bandwidth is None or not halo.memcpy_bandwidth.mean > 0:
                    raise CheckmpiError(f"checkmpi-halo wrote no memcpy probe to '{halo.path}'", EXIT_FAILED)
                runs[(block, k)].append((halo, src))
    points: list[dict[str, Any]] = []
    for block in blocks:
        by_ranks = []
        for k in counts:
            if (block, k) not in runs:
                continue
            halos = [halo for halo, _ in runs[(block, k)]]
            src = "; ".join(src for _, src in runs[(block, k)])
            copy = max(h.memcpy_bandwidth.mean for h in halos)
            rates = kernel_rates(halos)
            # --sync's barrier, as the barrier measurement costs it, is neither the window's own wait nor hideable.
            window = catalog.rows_of_run(halos[0]).get(WINDOW_STRATEGY)
            barrier = next((b["seconds"] for b in barriers if b["ranks"] == k), 0.0)
            sync = (window.traits["barriers"] if window else 0) * barrier
            node_barriers = window.traits["node_barriers"][str(halos[0].config["compute"])] if window else 0
            pack = best_pack([pack_entry(h, src, sync, node_barriers) for h in halos])
            by_ranks.append({"ranks": k, "copy": copy, "compute": rates, **{d: pack[d] for d in "xyz"},
                             "overlap": overlap_hides(halos, barrier),
                             **({"window_wait": pack["window_wait"]} if "window_wait" in pack else {})})
            if block == local:  # the reference block: the profile's own memory, compute and pack entries
                halo_runs[k] = (halos, src)
                copies.append({"ranks": k, "bandwidth": copy})
                for kind, rate in rates.items():
                    kernels[kind].append({"ranks": k, "bandwidth": rate})
                mem_src += ("; " if mem_src else "") + src
                pack_host = pack  # the last: every rank at once
                packs.append({"ranks": k, **{d: v for d, v in pack.items() if d in ("x", "y", "z", "window_wait")}})
        if by_ranks:
            points.append({"local": list(block), "bytes": int(halos[0].config["field_bytes"]), "by_ranks": by_ranks})
    assert pack_host is not None
    doc = {
        "schema": MACHINE_SCHEMA,
        "tool": {"name": "checkmpi calibrate", "version": __version__},
        "context": {"host": socket.gethostname(), "mpi_library": str(ping.context.get("mpi_library", "")),
                    "nodes": nodes, "ranks": np, "ranks_per_node": ranks_per_node,
                    "cores_per_node": cores, "backend": backend,
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "command": _command(args), "quick": bool(args.quick), "cuda": cuda_note,
                    "results": str(folder)},
        "links": {"intra": intra, "inter": inter},
        "self": self_entry(selfx, self_src, notes),
        "barrier": barriers,
        **({"barrier_across": across} if across else {}),
        "datatype": datatype_entry(dt, dt_src, notes),
        "memory": {"copy": copies, "source": mem_src},
        "compute": {**kernels, "local": list(local), "source": mem_src},
        "pack": {"host": {**pack_host, "by_ranks": packs}, "cuda": pack_cuda},
        "blocks": {"points": points, "source": "checkmpi-halo at blocks " + ", ".join("x".join(map(str, b))
                                                                                     for b in blocks)},
        "notes": notes,
    }
    base = machine_of(doc, out)  # no waits in it yet: each wait is what the rest leaves unexplained
    doc["exchange"] = _exchange(runner, base, ranks_per_node, where, sizes)
    block_waits(doc, base, runs)
    turnless = machine_of(doc, out)
    doc["turns"] = turns(halo_runs, turnless, cores, list(local))
    if nodes_allocated > 1:
        across = _turns_across(runner, where, turnless, cores, local, counts, sizes)
        if across:
            doc["turns"]["across"] = across
    write_json(out, doc)
    machine = load_machine(out)  # what predict will read: refuse to leave a profile it cannot
    T.render(machine_table(machine), T.console())
    say(f"machine profile: {out} (the tools' results in {folder})")
    return 0


def _blocks(text: str) -> tuple[Triple, ...]:
    """--blocks LxMxN,...: the blocks the rates that depend on the caches are measured at."""
    blocks = tuple(parse_triple(b, "--blocks") for b in text.split(","))
    if len(blocks) > 16:
        raise CheckmpiError(f"--blocks names {len(blocks)} blocks; at most 16")
    return blocks


def _command(args: argparse.Namespace) -> str:
    """The command line that made the profile, from its options."""
    argv = ["checkmpi", "calibrate"]
    for option, value in (("--np", args.np), ("--local", args.local), ("--blocks", getattr(args, "blocks", None)),
                          ("--hosts", args.hosts), ("--hostfile", getattr(args, "hostfile", None)), ("-o", args.json),
                          ("--bin", args.bin), ("--launcher", args.launcher if args.launcher != "mpirun" else None),
                          ("--mpi-args", args.mpi_args or None), ("--timeout", args.timeout)):
        if value is not None:
            argv += [option, str(value)]
    return shlex.join(argv + (["--quick"] if args.quick else []))


def measurement_folder(profile: Path) -> Path:
    """Where a calibration keeps the tools' results: the profile's folder (run_folder), or, when that already
    holds files (an earlier calibration's, which an earlier profile cites), the first free NAME-2, NAME-3, ...
    beside it: a calibration stopped halfway then leaves the earlier profile's evidence as it was."""
    folder = run_folder(profile)
    k = 2
    while folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        folder = run_folder(profile).with_name(f"{run_folder(profile).name}-{k}")
        k += 1
    return folder


def _same_node(run: P2PRun, want: bool) -> None:
    if run.context.get("same_node") is not want:
        where = "one node" if want else "two nodes"
        raise CheckmpiError(f"the two ranks of '{run.path}' were meant to be on {where} but are not "
                            "(see its placement); check --hosts or the allocation", EXIT_FAILED)


def _exchange(runner: Runner, base: Machine, ranks_per_node: int, where: Nodes,
              sizes: Sizes) -> dict[str, Any] | None:
    """Per-completion waits: with k = 2, 4, ... ranks of one node exchanging (every rank, a tiny
    block, no barriers), each schedule's MPI time per step (mean over ranks) less what the link, self
    and barrier terms of `base` predict for it, per completion (model.completions). Across nodes also
    `across`: the same with one rank on each of two nodes, whose partner is on another node (and CPU): a
    node's 2 ranks wait for each other's turns on a CPU they share (an emulated node has one), which one rank
    per node does not."""
    points = []
    source = ""
    cases = [(f"exchange-{k}", k, *where.on_one(runner.launcher, k)) for k in doubling(ranks_per_node)[1:]]
    if where.count > 1:
        cases.append(("exchange-2n", 2, *where.across(runner.launcher, 2, 1)))
    across = None
    for name, k, at, per_node in cases:
        argv = _halo_argv("host", k, EXCHANGE_LOCAL, sizes.exchange_steps, runner.folder,
                          ",".join(EXCHANGE_STRATEGIES.values()), "exchange") + ["--sync", "none"]
        what = f"neighbour exchange, {k} ranks" + (" on 2 nodes" if name.endswith("n") else "")
        run, src, _ = runner.run("checkmpi-halo", k, argv, name, what, per_node, at)
        source += ("; " if source else "") + src
        rows = catalog.rows_of_run(run)
        point: dict[str, Any] = {"ranks": k}
        for schedule, sid in EXCHANGE_STRATEGIES.items():
            if sid not in rows:
                raise CheckmpiError(f"no {sid} result in '{run.path}'", EXIT_FAILED)
            point[schedule] = {"strategy": sid, **wait_of(run, sid, rows[sid], base)}
        if name.endswith("n"):
            if int(run.context["nodes"]) != 2:
                raise CheckmpiError(f"the exchange of '{run.path}' was meant to span 2 nodes but ran on "
                                    f"{run.context['nodes']}; check the nodes given", EXIT_FAILED)
            across = {"nodes": 2, "ranks_per_node": 1, **{s: point[s] for s in EXCHANGE_STRATEGIES}}
        else:
            points.append(point)
    if not points and across is None:
        return None
    return {"local": list(EXCHANGE_LOCAL), "points": points, "source": source,
            **({"across": across} if across else {})}


def _turns_across(runner: Runner, where: Nodes, base: Machine, cores: int, local: Triple, counts: list[int],
                  sizes: Sizes) -> dict[str, Any] | None:
    """The turns as calibrate_entries.turns finds them, measured across nodes: k ranks on each of the first two
    nodes for each oversubscribed count k (run in turns, sizes.halo_runs times). A rank's partners are then on its
    node and off it, and where emulated nodes share the machine's CPUs, other nodes' ranks take turns on its CPU
    too: each waits for partners that wait for their own CPU, which ranks of one node do not (docs/cluster.md,
    "The model across nodes"). Points by load, the ranks taking turns on a CPU as the model counts them
    (model.load_of)."""
    ks = [k for k in counts if k > cores]
    if not ks:
        return None
    runs: dict[int, list[tuple[HaloRun, str]]] = {k: [] for k in ks}
    strategies = ",".join(dict.fromkeys(TURN_STRATEGIES.values()))
    for i in range(1, sizes.halo_runs + 1):
        for k in ks:
            at, per_node = where.across(runner.launcher, 2, k)
            argv = _halo_argv("host", 2 * k, local, halo_steps(sizes, local), runner.folder, strategies,
                              f"turns-2n-{k}-{i}")
            run, src, _ = runner.run("checkmpi-halo", 2 * k, argv, f"turns-2n-{k}-{i}",
                                     f"turns across nodes, {k} ranks on each of 2, run {i}", per_node, at)
            if int(run.context["nodes"]) != 2:
                raise CheckmpiError(f"the turns run '{run.path}' was meant to span 2 nodes but ran on "
                                    f"{run.context['nodes']}; check the nodes given", EXIT_FAILED)
            runs[k].append((run, src))
    by_load: dict[int, list[tuple[HaloRun, str]]] = {}
    for k in ks:
        load = load_of(case_of(runs[k][0][0]), cores)
        if load > 1:
            by_load.setdefault(load, []).extend(runs[k])
    points = [{"ranks": load, "ranks_per_node": int(halos[0][0].context["ranks_per_node"]),
               **turn_factors([h for h, _ in halos], base)} for load, halos in sorted(by_load.items())]
    if not points:
        return None
    return {"nodes": 2, "points": points,
            "source": "; ".join(src for load in sorted(by_load) for _, src in by_load[load])}


def halo_steps(sizes: Sizes, local: Triple) -> int:
    """Steps of the memory, compute and packing runs: sizes.steps at its own block, more on a smaller one (up to
    20 times), so that each run's timers hold about as much work and one preemption of a few milliseconds
    cannot shift a small block's mean; fewer on a larger one (down to a fifth: each step then takes long)."""
    scaled = round(sizes.steps * math.prod(sizes.local) / math.prod(local))
    return max(max(1, sizes.steps // 5), min(20 * sizes.steps, scaled))


def _halo_argv(backend: str, np: int, local: Triple, steps: int, folder: Path, strategy: str,
               name: str = "halo") -> list[str]:
    return ["--no-input", "--backend", backend, "--strategy", strategy, "--local", x_join(local),
            "--iters", str(steps), "--icheck", str(steps), "--rounds", "1",  # rates from timer means: one round
            "--warmup", str(max(1, steps // 10)), "--outdir", str(folder / f"{name}-{backend}-{np}")]


def _pack(runner: Runner, backend: str, local: Triple, steps: int,
          at: list[str]) -> tuple[dict | None, str | None]:
    """The cuda backend's pack entry (one rank: one per GPU), or None and why not (no CUDA in the build, no GPU)."""
    halo, src, code = runner.run("checkmpi-halo", 1, _halo_argv(backend, 1, local, steps, runner.folder, "step3"),
                                 f"halo-{backend}", f"packing on the {backend} backend", extra_launcher=at,
                                 allowed=(0, EXIT_USAGE))
    if code != 0:
        return None, src
    return pack_entry(halo, src), None
