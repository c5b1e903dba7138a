"""`checkmpi campaign plan|run|status|report|step`."""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

from checkmpi import tables as T
from checkmpi.atomic import refuse_odd_target
from checkmpi.campaign.plan import Run, by_submission, nodes_for, plan, sweep_points
from checkmpi.campaign.records import CampaignDir
from checkmpi.campaign.spec import Spec, load_spec
from checkmpi.errors import EXIT_FAILED, CheckmpiError
from checkmpi.native import Executable, find_executable, say
from checkmpi.results import x_join


def add_parser(sub: argparse._SubParsersAction) -> None:
    camp = sub.add_parser("campaign", allow_abbrev=False, help="many runs: sweeps, strategies, repeated "
                          "submissions, here or through Slurm (docs/campaign.md)",
                          description="Campaigns of checkmpi-halo runs from a TOML spec (docs/campaign.md).")
    verbs = camp.add_subparsers(dest="verb", metavar="VERB", required=True,
                                help="plan, run, status, report (step: what a Slurm batch script calls)")
    p = verbs.add_parser("plan", allow_abbrev=False, help="list every run and the submissions")
    p.add_argument("spec", metavar="SPEC.toml", help="the campaign's spec (TOML, docs/campaign.md)")
    p.add_argument("--bin", metavar="DIR", help="folder of checkmpi-halo, which resolves the strategies (else "
                   "$CHECKMPI_BIN, ./build/bin, PATH)")
    p.set_defaults(func=_plan)
    r = verbs.add_parser("run", allow_abbrev=False, help="run (or resume) the campaign into DIR")
    r.add_argument("spec", metavar="SPEC.toml", help="the campaign's spec (TOML, docs/campaign.md)")
    r.add_argument("--dir", required=True, metavar="DIR", help="where the records go; run again to resume")
    r.add_argument("--bin", metavar="DIR", help="folder of the native executables (else $CHECKMPI_BIN, "
                   "./build/bin, PATH)")
    r.set_defaults(func=_run)
    s = verbs.add_parser("status", allow_abbrev=False, help="done / running / failed / pending / interrupted, per run")
    s.add_argument("dir", metavar="DIR", help="the campaign's folder (campaign run --dir)")
    s.set_defaults(func=_status)
    rep = verbs.add_parser("report", allow_abbrev=False, help="the campaign's tables, plots, HTML and JSON")
    rep.add_argument("dir", metavar="DIR", help="the campaign's folder (campaign run --dir)")
    rep.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page")
    rep.add_argument("--json", metavar="FILE", help="also write the report as JSON (checkmpi.campaign/1)")
    rep.add_argument("--plots", metavar="DIR", help="folder for the plots of --html (default DIR/plots)")
    rep.add_argument("--include-shared", action="store_true", help="keep runs that shared a node with another of "
                     "the campaign's runs at the same time in the statistics (default: flagged and left out)")
    rep.set_defaults(func=_report)
    st = verbs.add_parser("step", allow_abbrev=False, help="run one run of DIR and record it (what a Slurm "
                          "batch script calls for each job step)")
    st.add_argument("dir", metavar="DIR", help="the campaign's folder")
    st.add_argument("run", metavar="RUN", help="the run's id, as the plan names it")
    st.add_argument("--bin", metavar="DIR", help="folder of the native executables")
    st.set_defaults(func=_step)


def _executables(bin_dir: str | None) -> tuple[Executable, Executable]:
    """checkmpi-halo and checkmpi-p2p, by absolute path: records and batch scripts name them."""
    found = [find_executable(name, bin_dir) for name in ("checkmpi-halo", "checkmpi-p2p")]
    return Executable(found[0].path.resolve(), found[0].source), Executable(found[1].path.resolve(), found[1].source)


def _sigterm_interrupts() -> None:
    """SIGTERM (a scheduler, kill) and SIGHUP (a closed terminal) stop the MPI job in flight like Ctrl-C does."""
    def handler(signum, frame):  # noqa: ARG001
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


def _plan(args: argparse.Namespace, extra: list[str]) -> int:
    spec = load_spec(args.spec, args.bin)
    runs = plan(spec)
    out = T.console()
    for table in plan_tables(spec, runs):
        T.render(table, out)
    return 0


PLAN_ROWS = 1000  # rows a plan's table shows (a table of 10^5 runs took minutes to draw and nobody reads it)


def plan_tables(spec: Spec, runs: list[Run]) -> list[T.Table]:
    slurm = spec.executor == "slurm"
    sweeps = {p: [sw.index for sw in spec.sweeps if p in sweep_points(sw)] for p in {r.point for r in runs}}
    table = T.Table(f"Campaign '{spec.name}': {len(runs)} runs = {spec.repetitions} submissions x "
                    f"{len(runs) // spec.repetitions // len(spec.strategies)} points x {len(spec.strategies)} "
                    f"strategies, {spec.itfin} steps each",
                    ["run", "sweep", "ranks", "local size"] + (["nodes"] if slurm else []), left_columns=1)
    for i, r in enumerate(runs[:PLAN_ROWS]):
        p = r.point
        table.rows.append([r.id, ",".join(map(str, sweeps[p])), str(p.np), x_join(p.local)]
                          + ([str(nodes_for(p.np, spec.ranks_per_node))] if slurm else []))
        if i + 1 < len(runs) and runs[i + 1].submission != r.submission:
            table.section_after.add(i)
    order = ("each submission's runs in the order its job runs them (the submissions' jobs may run at the same time)"
             if slurm else "in execution order, one submission after another")
    table.caption = (f"{order}; run: s<submission>-<grid of ranks>-<global size>-<strategy>; "
                     + "; ".join(f"sweep {sw.index}: {sw.name}" for sw in spec.sweeps)
                     + (f"; the first {PLAN_ROWS} of {len(runs)} runs" if len(runs) > PLAN_ROWS else ""))
    subs = T.Table("Submissions", ["submission", "runs", "time limit (s)", "first run", "last run"], left_columns=1)
    options = []  # sbatch's, under the table: a line each
    groups = by_submission(runs)
    for k in range(1, min(spec.repetitions, PLAN_ROWS) + 1):
        mine = groups.get(k, [])
        subs.rows.append([str(k), str(len(mine)), f"{spec.time_limit(k):g}", mine[0].id, mine[-1].id])
        if slurm:
            from checkmpi.campaign.slurm import sbatch_options

            options.append(f"submission {k}: sbatch {' '.join(sbatch_options(spec, k))}")
    if slurm:
        nodes = nodes_for(max(r.point.np for r in runs), spec.ranks_per_node)
        subs.caption = (f"each submission is one batch job of {nodes} node{'s' if nodes > 1 else ''} (its sbatch "
                        f"options below), and all {spec.repetitions} are submitted at once: Slurm starts each when "
                        "its nodes are free, so submissions may run at the same time or wait for one another (and "
                        "for other jobs); "
                        + ("each job has its nodes to itself (sbatch --exclusive; [slurm] exclusive = false lets "
                           "other jobs share them); " if spec.slurm.exclusive else
                           "other jobs may share its nodes ([slurm] exclusive = false; the report flags runs that "
                           "shared a node with another of the campaign's at the same time); ")
                        + "a job pending longer than "
                        f"{spec.slurm.pending_limit_s:g} s is cancelled and its runs recorded as not started. "
                        "Inside a job the runs are job steps, one after another, each started with "
                        + ("srun and the PMI plugin its MPI needs (PMIx for Open MPI, PMI2 for MPICH) where Slurm "
                           "offers it, else with mpirun" if spec.launcher in ("auto", "srun") else spec.launcher))
    else:
        launcher = "mpirun" if spec.launcher == "auto" else spec.launcher
        subs.caption = (f"one submission after another on this machine, each run with {launcher} when the one "
                        "before has ended") + (f"; ranks_per_node = {spec.ranks_per_node} applies to Slurm only"
                                               if spec.ranks_per_node else "")
    subs.caption += (f"; a run is stopped as too slow after {spec.too_slow:g} x its expected time, or at the "
                     "submission's time limit")
    if spec.repetitions > PLAN_ROWS:
        subs.caption += f"; the first {PLAN_ROWS} of {spec.repetitions} submissions"
    subs.caption = "\n".join([subs.caption, *options])
    return [table, subs]


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    if not args.dir:
        raise CheckmpiError("--dir is empty; give the campaign's folder (a new one, or a campaign's to resume it)")
    spec = load_spec(args.spec, args.bin)
    cdir = CampaignDir(args.dir)
    runs = plan(spec)
    halo, p2p = _executables(args.bin)
    cdir.refuse_foreign()
    lock = cdir.lock()
    cdir.create_or_check(spec)
    _sigterm_interrupts()
    say(f"campaign '{spec.name}' ({spec.executor}): {len(runs)} runs into {cdir.root}; checkmpi-halo: {halo.path}")
    try:
        if spec.executor == "local":
            from checkmpi.campaign.local import run_local

            run_local(cdir, spec, runs, halo, p2p)
        else:
            from checkmpi.campaign.slurm import SlurmCampaign

            SlurmCampaign(cdir, spec, runs, halo.path.parent).run()
    except KeyboardInterrupt:
        if spec.executor == "slurm":
            say("interrupted; the submitted jobs keep running: run the same command again to follow them")
        raise
    finally:
        lock.close()
    return _summarise(cdir, spec, runs)


def _summarise(cdir: CampaignDir, spec: Spec, runs: list[Run]) -> int:
    from checkmpi.campaign import plots as CP
    from checkmpi.campaign import report as CR

    rep = CR.build(cdir, spec, runs)
    rep.figures = CP.all_plots(spec, rep.cells, cdir.root / "plots")
    CR.write_json_report(rep, cdir.root / "report.json")
    CR.write_html_report(rep, cdir.root / "report.html")
    for line in rep.summary:
        say(line)
    say(f"report: {cdir.root / 'report.html'} and report.json ('checkmpi campaign report {cdir.root}' prints it)")
    bad = rep.counts["runs"] - rep.counts["ok"]
    if bad:
        raise CheckmpiError(f"{bad} of {rep.counts['runs']} runs are not ok ('checkmpi campaign status {cdir.root}'); "
                            "run the same command again to redo them", EXIT_FAILED)
    return 0


def _status(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.campaign.status import status_table

    cdir = CampaignDir(args.dir)
    spec = cdir.load_spec()
    table, _ = status_table(cdir, plan(spec))
    T.render(table, T.console())
    return 0


def _report(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.campaign import plots as CP
    from checkmpi.campaign import report as CR

    cdir = CampaignDir(args.dir)
    spec = cdir.load_spec()
    plots = Path(args.plots) if args.plots else cdir.root / "plots"
    targets = [(option, Path(value)) for option, value in (("--json", args.json), ("--html", args.html)) if value]
    for option, target in targets:  # before anything is written
        if cdir.reads(target):
            raise CheckmpiError(f"{option} '{target}' is one of the campaign's own files; write the report elsewhere")
        refuse_odd_target(target)
    if len(targets) == 2 and targets[0][1].resolve() == targets[1][1].resolve():
        raise CheckmpiError(f"--json and --html name the same file '{args.json}'")
    rep = CR.build(cdir, spec, plan(spec), args.include_shared)
    if args.html:
        rep.figures = CP.all_plots(spec, rep.cells, plots)
    CR.print_report(rep, T.console())
    if args.json:
        CR.write_json_report(rep, Path(args.json))
        say(f"JSON: {args.json}")
    if args.html:
        CR.write_html_report(rep, Path(args.html))
        say(f"report: {args.html} (plots in {plots})")
    return 0


def _step(args: argparse.Namespace, extra: list[str]) -> int:
    from checkmpi.campaign.execute import execute
    from checkmpi.campaign.launch import resolve_launch
    from checkmpi.campaign.status import outcome

    cdir = CampaignDir(args.dir)
    spec = cdir.load_spec()
    run = next((r for r in plan(spec) if r.id == args.run), None)
    if run is None:
        raise CheckmpiError(f"campaign '{spec.name}' in '{cdir.root}' has no run '{args.run}'")
    record = cdir.read_record(run.id)
    if record is not None and record["status"] == "ok":
        say(f"{run.id}: done already")
        return 0
    halo, p2p = _executables(args.bin)
    _sigterm_interrupts()
    start = os.environ.get("CHECKMPI_SUBMISSION_START")
    deadline = float(start) + spec.time_limit(run.submission) if start else None
    job = {"job_id": os.environ["SLURM_JOB_ID"], "state": "RUNNING"} if os.environ.get("SLURM_JOB_ID") else None
    record = execute(cdir, spec, run, halo, p2p, resolve_launch(spec, halo.path), deadline, job)
    say(f"{run.id}: {outcome(record)}")
    return 0
