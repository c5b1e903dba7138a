"""One run of a campaign, as both executors do it: work out its expected
time, launch checkmpi-halo (mpirun here, srun inside a Slurm allocation),
stop it at its limit, classify the outcome and write its record."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from checkmpi.campaign.expected import expected_time
from checkmpi.campaign.launch import Launch
from checkmpi.campaign.plan import Run
from checkmpi.atomic import make_folder, write_text
from checkmpi.campaign.records import RUN_SCHEMA, CampaignDir, attempt_history, now_iso
from checkmpi.campaign.sharing import expand_hostlist
from checkmpi.campaign.spec import Spec
from checkmpi.errors import EXIT_FAILED, EXIT_INVALID, CheckmpiError
from checkmpi.jobs import HaloPlan, halo_argv
from checkmpi.native import WATCHDOG_LINE, Executable, NativeRun
from checkmpi.results import HaloRun, load, x_join

ERROR_LINES = 10  # kept per rank that printed any


def execute(cdir: CampaignDir, spec: Spec, run: Run, halo: Executable, p2p: Executable, launch: Launch,
            deadline: float | None, job: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs `run` once and writes its record; `deadline` (epoch seconds) ends
    the submission: a run not started by then is not started, one still
    running then is stopped as too slow. A step of a Slurm job that has
    recorded the run already returns that record."""
    nodes = [socket.gethostname()] if launch.executor == "local" else slurm_nodes()  # scontrol: not under the lock
    with cdir.records_locked():
        # A cancelled job's batch script may go on to its next step after the campaign saw the job end and
        # recorded its runs: that record is this job's attempt, and the step leaves it as it is.
        earlier = cdir.read_record(run.id)
        if job and earlier and (earlier.get("slurm") or {}).get("job_id") == job["job_id"]:
            return earlier
        record = new_record(cdir, spec, run, launch.as_json(), nodes, job)
    attempt = record["attempt"]
    if deadline is not None and time.time() >= deadline:
        return finish(cdir, record, "not_started", f"the submission's time limit "
                       f"({spec.time_limit(run.submission):g} s) was reached before this run started")
    expected = expected_time(cdir, spec, run, p2p, launch, deadline)
    record["expected"] = expected
    limit = None
    if expected["seconds"] is not None:
        limit = max(spec.too_slow * expected["seconds"], spec.too_slow_min_s)
    expected["limit_s"] = limit
    left = deadline - time.time() if deadline is not None else None
    stop_at, by_deadline = limit, False
    if left is not None and (stop_at is None or left < stop_at):
        stop_at, by_deadline = max(left, 0.1), True

    out = cdir.output_dir(run.id, attempt)
    shutil.rmtree(out, ignore_errors=True)  # a half-written attempt of a killed campaign
    make_folder(out)
    json_path = out / "halo.json"
    plan = HaloPlan(run.point.np, ["--size", x_join(run.point.size), "--procs", x_join(run.point.procs)],
                    spec.itfin, ["--icheck", str(spec.icheck), *spec.halo_args])
    mpi_job = launch.job(run.point.np, halo_argv(halo.path, plan, json_path, out, spec.itfin, run.strategy), run.id)
    record["command"] = mpi_job.command()[0]
    record["started"] = now_iso()
    cdir.mark_running(run.id, attempt, (job or {}).get("job_id"))
    # Interrupted (Ctrl-C, SIGTERM, the scheduler), the marker stays: a Slurm
    # collection then knows the run had started; locally `campaign status` and the next `campaign run` call
    # the run interrupted.
    try:
        done = mpi_job.run(stop_at, raise_on_timeout=False, stderr_lines_kept=20000)
    except CheckmpiError as e:  # the launcher itself could not start (no marker left: it did not run)
        if e.code != EXIT_FAILED:
            raise
        record["ended"] = now_iso()
        return finish_step(cdir, record, "not_started", e.message, job)
    record["ended"] = now_iso()
    write_text(out / "checkmpi-halo.log", done.stdout)
    record.update(elapsed_s=round(done.seconds, 3), exit_code=done.returncode, signal=_signal_of(done),
                  log=cdir.rel(out / "checkmpi-halo.log"), errors=rank_tails(done.stderr_tail))
    results, problem = _results(json_path)
    if json_path.exists():
        record["results"] = cdir.rel(json_path)
    if results is not None:
        record["hostnames"] = list(dict.fromkeys(results.context.get("hostnames", [])))
    status, note = classify(done, results, problem)
    if status == "ok" and results is not None:
        wrong = mismatch(spec, run, results)
        if wrong:
            status, note = "invalid", wrong
    if done.timed_out:
        why = (f"at the submission's time limit ({spec.time_limit(run.submission):g} s) after {done.seconds:.1f} s"
               if by_deadline else f"after {done.seconds:.1f} s, its limit: {spec.too_slow:g} x the expected "
               f"{expected['seconds']:.2f} s, at least {spec.too_slow_min_s:g} s")
        # Stopped before checkmpi-halo said a word, the launch itself hung (e.g. srun waiting for a step).
        status = "not_started" if status == "not_started" else "too_slow"
        note = f"stopped {why}" + (" before checkmpi-halo started" if status == "not_started" else "")
    return finish_step(cdir, record, status, note, job)


# Slurm's job states that stop the job's steps still running (sacct's State column).
STEP_STOPPING_STATES = ("CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "DEADLINE", "OUT_OF_MEMORY")


def ended_by_job(status: str, job_state: str) -> bool:
    """Whether a run of a job that ended `job_state`, failing with `status` as the job ended, failed because
    the job ended: the campaign's record and the step's, whichever is written first, name the job's end."""
    return status != "ok" and job_state.startswith(STEP_STOPPING_STATES)


def finish_step(cdir: CampaignDir, record: dict[str, Any], status: str, note: str | None,
                job: dict[str, Any] | None) -> dict[str, Any]:
    """finish() for a run of Slurm job `job` (None: not in one), holding the records' lock. Where the campaign
    saw the job end while the run was under way (a cancelled job refuses srun) and recorded the run then, a
    failed run says both: the job's end caused what the step saw, and the step saw what happened."""
    with cdir.records_locked():
        slurm = ((cdir.read_record(record["run"]) or {}).get("slurm") or {}) if job else {}
        if (job and slurm.get("ended") and slurm.get("job_id") == job["job_id"]
                and ended_by_job(status, slurm.get("state") or "")):
            record["slurm"] = {**job, "state": slurm["state"], "ended": slurm["ended"]}
            note = f"{slurm['ended']}: {note}" if note else slurm["ended"]
        return finish(cdir, record, status, note)


def new_record(cdir: CampaignDir, spec: Spec, run: Run, launch: dict[str, Any] | None, nodes: list[str],
               job: dict[str, Any] | None) -> dict[str, Any]:
    """A record of the next attempt of `run`, every key present, outcome still empty."""
    attempt, previous = attempt_history(cdir.read_record(run.id))
    return {"schema": RUN_SCHEMA, "campaign": spec.name, "run": run.id, "submission": run.submission,
            "point": run.point.as_json(), "strategy": run.strategy, "attempt": attempt, "previous": previous,
            "status": None, "note": None, "exit_code": None, "signal": None, "started": None, "ended": None,
            "finished": None, "elapsed_s": None, "expected": None, "launch": launch, "command": None,
            "nodes": nodes, "hostnames": None, "slurm": job, "results": None, "log": None, "errors": {}}


def finish(cdir: CampaignDir, record: dict[str, Any], status: str, note: str | None) -> dict[str, Any]:
    """Completes the record, writes it (atomically) and drops the run's marker."""
    record["status"], record["note"] = status, note
    record["finished"] = now_iso()
    cdir.write_record(record)
    cdir.clear_marker(record["run"])
    return record


def _results(json_path: Path) -> tuple[HaloRun | None, str | None]:
    """The run's results, or why there are none."""
    if not json_path.exists():
        return None, None
    try:
        loaded = load(json_path)
    except CheckmpiError as e:
        return None, e.message
    return (loaded, None) if isinstance(loaded, HaloRun) else (None, f"'{json_path}' is not checkmpi-halo's")


def classify(done: NativeRun, results: HaloRun | None, problem: str | None) -> tuple[str, str | None]:
    """ok, invalid, crashed or not_started from the exit status, output and results."""
    # Started: rank 0 printed its header, or some rank printed anything (the launcher tags it with
    # the rank: a rank that crashed in MPI_Init still ran). Only the launcher spoke: it never started.
    ranks = rank_tails(done.stderr_tail + done.stdout.splitlines())
    started = re.search(r"checkmpi-halo \d", done.stdout) is not None or any(k != "launcher" for k in ranks)
    if done.returncode != 0 and not started:
        tail = ranks.get("launcher", [])
        return "not_started", "the job never started checkmpi-halo" + (f": {tail[-1]}" if tail else "")
    invalid = [s for s in results.ran() if not s.valid] if results else []
    if done.returncode == EXIT_INVALID or invalid:
        return "invalid", "; ".join(f"{s.id}: {s.error or 'failed validation'}" for s in invalid) or \
            "checkmpi-halo exited with 3 (validation failed)"
    if done.returncode != 0:
        sig = _signal_of(done)
        what = f"killed by signal {sig} ({_signal_name(sig)})" if sig else f"exit code {done.returncode}"
        dog = next((m.string[m.end():] for line in done.stderr_tail if (m := WATCHDOG_LINE.match(line))), None)
        if dog is not None:  # the tool's own diagnosis first: who made no progress, waiting for whom
            what = f"the watchdog aborted the job ({dog})" + (
                "; its launcher did not end it, checkmpi stopped it" if done.stopped_after_watchdog else f"; {what}")
        return "crashed", what
    if results is None:
        return "crashed", problem or "exit code 0 but no results written"
    return "ok", None


def mismatch(spec: Spec, run: Run, results: HaloRun) -> str | None:
    """How the results a record points to differ from its run (strategy, ranks, grid, size, steps), or None."""
    p = run.point
    for what, got, wanted in (("strategies", ",".join(s.id for s in results.ran()) or "none", run.strategy),
                              ("ranks", results.nprocs, p.np), ("grid", x_join(results.dims), x_join(p.procs)),
                              ("size", x_join(results.global_size), x_join(p.size)),
                              ("steps", results.config.get("itfin"), spec.itfin)):
        if got != wanted:
            return f"the results ({results.path.name}) hold {what} {got}, the run {wanted}"
    return None


def _signal_of(done: NativeRun) -> int | None:
    """The signal that ended the job: the launcher's own, or 128 + N as launchers report a rank's."""
    rc = done.returncode
    if rc < 0:
        return -rc
    if 128 < rc < 128 + 65:
        return rc - 128
    return None


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


# Rank prefixes of tagged output: Open MPI --tag-output, MPICH -prepend-rank, srun --label.
_TAGS = (re.compile(r"^\[\d+,(\d+)\]<std(?:err|out)>:(.*)$"), re.compile(r"^\[(\d+)\] (.*)$"),
         re.compile(r"^\s*(\d+): (.*)$"))


def rank_tails(lines: list[str]) -> dict[str, list[str]]:
    """The last error lines of every rank that printed any ("launcher": lines without a rank)."""
    tails: dict[str, deque[str]] = defaultdict(lambda: deque(maxlen=ERROR_LINES))
    for line in lines:
        key, text = "launcher", line
        for tag in _TAGS:
            m = tag.match(line)
            if m:
                key, text = m.group(1), m.group(2)
                break
        if text.strip() and not re.fullmatch(r"\s*-+\s*", text):
            tails[key].append(text.rstrip())
    order = sorted((k for k in tails if k != "launcher"), key=int) + (["launcher"] if "launcher" in tails else [])
    return {k: list(tails[k]) for k in order}


def slurm_nodes() -> list[str]:
    """The allocation's nodes, one name each (scontrol show hostnames expands c[1-2])."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST")
    if not nodelist:
        return [socket.gethostname()]
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                             timeout=30, check=False)
        names = out.stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        names = []
    return names or expand_hostlist(nodelist)
