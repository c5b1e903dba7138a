"""The Slurm executor: one batch script per submission (its runs as job
steps, in order), submitted with sbatch, followed with squeue (sacct or
scontrol once it has left the queue), and collected: runs the job never
reached are recorded as not started, runs it was in when it ended as too
slow (TIMEOUT) or crashed (cancelled, failed).

Each job step is `checkmpi campaign step DIR RUN`, which launches the run
inside the allocation and writes its record itself, so nothing depends on
this process staying alive: killed and started again, it follows the jobs
it had submitted instead of submitting new ones."""

from __future__ import annotations

import json
import math
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from checkmpi.campaign.execute import ended_by_job, finish, new_record
from checkmpi.campaign.plan import Run, by_submission, max_ranks, nodes_for
from checkmpi.atomic import write_json, write_text
from checkmpi.campaign.records import CampaignDir, epoch_of, iso_of, needs_work, now_iso
from checkmpi.campaign.sharing import expand_hostlist
from checkmpi.campaign.spec import Spec
from checkmpi.campaign.status import Progress
from checkmpi.bounds import control_character
from checkmpi.errors import EXIT_FAILED, CheckmpiError
from checkmpi.native import say

SUBMISSION_SCHEMA = "checkmpi.campaign-submission/1"
SLURM_MARGIN_S = 60  # Slurm's own limit: the spec's, plus this, in whole minutes (Slurm counts minutes)
CANCEL_GRACE_S = 120  # a job past Slurm's limit by this much is cancelled here
GONE_AFTER_CANCEL_S = 300  # a cancelled job still queued after this is given up on
SQUEUE_SILENCE_S = 600  # squeue not answering this long ends `campaign run` (the jobs go on)


def slurm_minutes(limit_s: float) -> int:
    return math.ceil((limit_s + SLURM_MARGIN_S) / 60)


def sbatch_quote(option: str) -> str:
    """One option of an #SBATCH line as sbatch reads it: sbatch splits the line at blanks, takes '...' and "..."
    as quotes and \\ as an escape, and ends it at an unquoted '#'; an option holding any of them is written in
    double quotes, with \\ before '"' and '\\'. A control character cannot be written at all."""
    found = control_character(option.replace("\t", " ")) or ("U+000A" if "\n" in option else None)
    if found:
        raise CheckmpiError(f"#SBATCH option {option!r} holds a control character ({found}), which a batch "
                            "script cannot carry")
    if re.search(r"[\s\"'\\#]", option):
        return '"' + option.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return option


def sbatch_options(spec: Spec, submission: int) -> list[str]:
    """The #SBATCH lines of a submission (also shown by `campaign plan`)."""
    np = max_ranks(spec)
    opts = [f"--job-name=checkmpi-{spec.name}-s{submission}"]
    if spec.ranks_per_node:
        opts += [f"--nodes={nodes_for(np, spec.ranks_per_node)}", f"--ntasks-per-node={spec.ranks_per_node}"]
    else:
        opts.append(f"--ntasks={np}")
    opts.append(f"--time={slurm_minutes(spec.time_limit(submission))}")
    s = spec.slurm
    for key, value in (("partition", s.partition), ("account", s.account), ("constraint", s.constraint),
                       ("gpus-per-node", s.gpus_per_node)):
        if value is not None:
            opts.append(f"--{key}={value}")
    if s.exclusive and not any(a.startswith("--exclusive") for a in s.sbatch_args):  # sbatch_args' own form wins
        opts.append("--exclusive")
    return [sbatch_quote(o) for o in opts + list(s.sbatch_args)]


def batch_script(cdir: CampaignDir, spec: Spec, submission: int, attempt: int, run_ids: list[str],
                 bin_dir: Path, output: Path) -> str:
    # The output first: sbatch reads the #SBATCH lines as one argument list, so an option of sbatch_args left
    # without its value at the end takes no option of ours for it. '%' starts a file name pattern (%j, %x): %%.
    lines = ["#!/bin/bash", f"#SBATCH {sbatch_quote('--output=' + str(output).replace('%', '%%'))}"]
    lines += [f"#SBATCH {o}" for o in sbatch_options(spec, submission)]
    lines += [f"# checkmpi campaign '{spec.name}', submission {submission}, attempt {attempt}: {len(run_ids)} runs,",
              "# in order, each one job step; `checkmpi campaign step` launches it and writes its record.",
              "export CHECKMPI_SUBMISSION_START=$(date +%s.%N)",
              f"cd {shlex.quote(str(Path.cwd()))}", "rc=0"]
    step = [sys.executable, "-m", "checkmpi", "campaign", "step", str(cdir.root)]
    for run_id in run_ids:
        lines.append(" ".join(map(shlex.quote, [*step, run_id, "--bin", str(bin_dir)])) + " || rc=1")
    return "\n".join(lines + ["exit $rc", ""])


def _submission_path(cdir: CampaignDir, k: int) -> Path:
    return cdir.root / "slurm" / f"s{k}.json"


def load_submission(cdir: CampaignDir, k: int) -> dict[str, Any]:
    path = _submission_path(cdir, k)
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"schema": SUBMISSION_SCHEMA, "submission": k, "jobs": []}


def _cmd(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"{argv[0]} did not answer within {timeout:g} s")
    except OSError as e:
        return subprocess.CompletedProcess(argv, 127, "", f"cannot run {argv[0]}: {e.strerror}")


def queue(job_ids: list[str]) -> dict[str, dict[str, str]] | None:
    """The jobs still in the queue (pending, running, completing), by id; None when squeue
    did not answer (the controller may be restarting: ask again later)."""
    if not job_ids:
        return {}
    out = _cmd(["squeue", "-h", "-j", ",".join(job_ids), "-o", "%i|%T|%S|%V|%R|%N"])
    if out.returncode != 0:
        # squeue fails on an unknown id only when every id it was given is unknown.
        return {} if "Invalid job id" in out.stderr else None
    jobs = {}
    for line in out.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 6:
            jobs[parts[0]] = dict(zip(("id", "state", "start", "submit", "reason", "nodes"), parts))
    return jobs


def final_state(job_id: str) -> tuple[str, str | None]:
    """The state of a job that left the queue and when it ended (UTC, as records say times; None where
    unknown): sacct where accounting exists, else scontrol."""
    out = _cmd(["sacct", "-j", job_id, "-X", "-n", "-P", "-o", "State,End"])
    if out.returncode == 0 and out.stdout.strip():
        state, _, end = out.stdout.splitlines()[0].partition("|")
        return (state.split() or ["UNKNOWN"])[0], _utc(end.strip())
    out = _cmd(["scontrol", "-o", "show", "job", job_id])
    fields = dict(w.split("=", 1) for w in out.stdout.split() if "=" in w)
    return fields.get("JobState", "UNKNOWN"), _utc(fields.get("EndTime", ""))


def _at_end(record: dict[str, Any], job_ended: str | None) -> bool:
    """Whether a step's record ended when its job did or later (sacct's End is whole seconds): a step that
    failed earlier failed on its own. True where either time is unknown."""
    job, at = epoch_of(job_ended), epoch_of(record.get("ended") or record.get("finished"))
    return job is None or at is None or at >= job - 2.0


def _utc(text: str) -> str | None:
    """Slurm's local time (2024-05-01T12:00:00) as records say times; None for Unknown."""
    epoch = epoch_of(text)
    return None if epoch is None else iso_of(epoch)


class SlurmCampaign:
    def __init__(self, cdir: CampaignDir, spec: Spec, runs: list[Run], bin_dir: Path):
        for tool in ("sbatch", "squeue", "scancel", "scontrol"):
            if shutil.which(tool) is None:
                raise CheckmpiError(f"executor slurm needs Slurm's {tool} on PATH", EXIT_FAILED)
        self.cdir, self.spec, self.runs, self.bin_dir = cdir, spec, runs, bin_dir
        self.by_id = {r.id: r for r in runs}
        self.subs = {k: load_submission(cdir, k) for k in range(1, spec.repetitions + 1)}
        self.live: dict[str, int] = {}  # job id -> submission
        self.silent_since: float | None = None  # when squeue stopped answering

    def _save(self, k: int) -> None:
        write_json(_submission_path(self.cdir, k), self.subs[k])

    def _job(self, job_id: str) -> dict[str, Any]:
        return next(j for j in self.subs[self.live[job_id]]["jobs"] if j["job_id"] == job_id)

    def run(self) -> None:
        in_queue = queue([j["job_id"] for s in self.subs.values() for j in s["jobs"] if not j["collected"]])
        if in_queue is None:
            raise CheckmpiError("squeue does not answer; is Slurm up (SLURM_CONF)? Run the same command again "
                                "once it is", EXIT_FAILED)
        for k, sub in self.subs.items():
            for job in sub["jobs"]:
                if not job["collected"]:
                    if job["job_id"] in in_queue:
                        self.live[job["job_id"]] = k
                        say(f"submission {k}: following job {job['job_id']} ({in_queue[job['job_id']]['state']})")
                    else:
                        self.collect(k, job, *final_state(job["job_id"]))
        busy = {r for job_id in self.live for r in self._job(job_id)["runs"]}
        self.cdir.drop_stale_markers(self.runs)
        todo = [r for r in self.runs if r.id not in busy and needs_work(self.cdir.read_record(r.id))]
        progress = Progress(self.runs, sum(1 for r in self.runs if not needs_work(self.cdir.read_record(r.id))))
        groups = by_submission(todo)
        for k in self.subs:
            mine = [r.id for r in groups.get(k, [])]
            if mine:
                self.submit(k, mine)
        seen = {r.id: self._stamp(r.id) for r in self.runs}
        while self.live:
            self.poll()
            for run in self.runs:
                stamp = self._stamp(run.id)
                if stamp != seen[run.id] and stamp is not None:
                    seen[run.id] = stamp
                    record = self.cdir.read_record(run.id)
                    if record is not None:
                        progress.finished(record)
            if self.live:
                time.sleep(self.spec.slurm.poll_s)

    def _stamp(self, run_id: str) -> tuple | None:
        record = self.cdir.read_record(run_id)
        return None if record is None else (record["attempt"], record["finished"])

    def submit(self, k: int, run_ids: list[str]) -> None:
        sub = self.subs[k]
        attempt = len(sub["jobs"]) + 1
        folder = self.cdir.root / "slurm"
        script = folder / f"s{k}-a{attempt}.sbatch"
        output = folder / f"s{k}-a{attempt}.out"
        write_text(script, batch_script(self.cdir, self.spec, k, attempt, run_ids, self.bin_dir, output))
        out = _cmd(["sbatch", "--parsable", str(script)])
        if out.returncode != 0 or not out.stdout.strip():
            raise CheckmpiError(f"sbatch refused submission {k}: {(out.stderr or out.stdout).strip()}", EXIT_FAILED)
        job_id = out.stdout.strip().split(";")[0]
        sub["jobs"].append({"job_id": job_id, "attempt": attempt, "runs": run_ids, "script": self.cdir.rel(script),
                            "output": self.cdir.rel(output), "submitted": now_iso(), "state": "SUBMITTED",
                            "nodes": None, "cancelled": None, "cancelled_at": None, "collected": False})
        self._save(k)
        self.live[job_id] = k
        say(f"submission {k}: job {job_id} submitted ({len(run_ids)} runs; {script})")

    def poll(self) -> None:
        states = queue(list(self.live))
        now = time.time()
        if states is None:
            self.silent_since = self.silent_since or now
            if now - self.silent_since > SQUEUE_SILENCE_S:
                raise CheckmpiError(f"squeue has not answered for {SQUEUE_SILENCE_S} s; the jobs go on without "
                                    "this command: run it again to follow them", EXIT_FAILED)
            return
        self.silent_since = None
        for job_id in list(self.live):
            k = self.live[job_id]
            job = self._job(job_id)
            q = states.get(job_id)
            if q is None:
                del self.live[job_id]
                self.collect(k, job, *final_state(job_id))
                continue
            if q["state"] != job["state"]:
                job["state"], job["nodes"] = q["state"], q["nodes"] or job["nodes"]
                say(f"submission {k}: job {job_id} {q['state']}"
                    + (f" on {q['nodes']}" if q["state"] == "RUNNING" else f" {q['reason']}"))
                self._save(k)
            self._bound(k, job, q, now)

    def _bound(self, k: int, job: dict[str, Any], q: dict[str, str], now: float) -> None:
        """Nothing waits forever: a job pending past [slurm] pending_limit_s, or running past
        Slurm's own limit plus a grace, is cancelled; one still queued long after that is given up."""
        if job["cancelled"]:
            if now - job["cancelled_at"] > GONE_AFTER_CANCEL_S:
                del self.live[job["job_id"]]
                self.collect(k, job, f"{q['state']} (still queued {GONE_AFTER_CANCEL_S} s after scancel)")
            return
        reason = None
        submitted, started = epoch_of(q["submit"]), epoch_of(q["start"])
        if q["state"] == "PENDING" and submitted and now - submitted > self.spec.slurm.pending_limit_s:
            reason = f"pending for more than {self.spec.slurm.pending_limit_s:g} s"
        limit = slurm_minutes(self.spec.time_limit(k)) * 60 + CANCEL_GRACE_S
        if q["state"] == "RUNNING" and started and now - started > limit:
            reason = f"still running {limit} s after it started"
        if reason:
            _cmd(["scancel", job["job_id"]])
            job["cancelled"], job["cancelled_at"] = reason, now
            say(f"submission {k}: job {job['job_id']} cancelled: {reason}")
            self._save(k)

    def collect(self, k: int, job: dict[str, Any], state: str, ended: str | None = None) -> None:
        """Records every run of the ended job that its steps did not record; the run it was in ended
        when the job did (`ended`; else now, the latest it can have)."""
        job_id = job["job_id"]
        job["state"] = state
        say(f"submission {k}: job {job_id} ended {state}" + (f" (cancelled: {job['cancelled']})"
                                                              if job.get("cancelled") else ""))
        why = f"job {job_id} ended {state}" + (f" ({job['cancelled']})" if job.get("cancelled") else "")
        for run_id in job["runs"]:
            with self.cdir.records_locked():  # a step of the job may still be writing its record
                record = self.cdir.read_record(run_id)
                if record is not None and (record.get("slurm") or {}).get("job_id") == job_id:  # its step recorded it
                    note = record.get("note") or ""
                    if ended_by_job(record["status"], state) and why not in note and _at_end(record, ended):
                        # A step that failed as the job ended (srun refused by a cancelled job, a step killed
                        # at the time limit) says so in its own words; the job's end was the cause.
                        finish(self.cdir, record, record["status"], f"{why}: {note}" if note else why)
                    continue
                marker = self.cdir.marker(run_id)
                started = marker is not None and str(marker.get("job_id")) == job_id
                rec = new_record(self.cdir, self.spec, self.by_id[run_id], None, expand_hostlist(job["nodes"] or ""),
                                 {"job_id": job_id, "state": state, "ended": why})
                if started:
                    assert marker is not None
                    rec["started"], rec["ended"] = marker.get("started"), ended or now_iso()
                    status = "too_slow" if state.startswith("TIMEOUT") else "crashed"
                    finish(self.cdir, rec, status, f"{why} while this run was running")
                else:
                    finish(self.cdir, rec, "not_started", f"{why} before this run started")
        job["collected"] = True
        self._save(k)
