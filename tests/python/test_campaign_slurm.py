"""Campaigns through a real Slurm cluster that these tests start on this
machine (scripts/slurm-local.sh: two nodes of 8 CPUs, its own munge): the
issue's spec with the orchestrator killed and started again, a scancel and
resume, a submission whose time limit is too short, one that never leaves the
queue, a step that cannot launch, `checkmpi run --launcher srun` inside an
allocation, and MPICH through srun's PMI2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from campaign_helpers import (check_record, interrupt, leftover_processes, records, rendered_table, start,
                              validate_report, wait_for_records, why_not_ok)
from conftest import MPICH_BIN, REPO, checkmpi
from test_campaign_spec import ISSUE_SPEC

from checkmpi.campaign.plan import plan
from checkmpi.campaign.records import RUN_SCHEMA, CampaignDir
from checkmpi.campaign.slurm import SlurmCampaign
from checkmpi.campaign.spec import load_spec

# Starts a machine-wide resource (a Slurm cluster, emulated nodes): scripts/test.sh runs the modules marked
# so one after the other, beside the rest.
pytestmark = pytest.mark.machine

TIMEOUT = 300  # seconds for any one campaign command here


SLURM_LOCAL = REPO / "scripts" / "slurm-local.sh"


def _start_cluster(state: Path) -> dict[str, str]:
    """scripts/slurm-local.sh start STATE: the environment pointing at it, or the test skipped saying why."""
    r = subprocess.run(["bash", str(SLURM_LOCAL), "start", str(state)], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        why = " / ".join(line for line in r.stderr.strip().splitlines()[-3:] if line.strip())
        pytest.skip(f"the local Slurm cluster did not start (scripts/slurm-local.sh exited {r.returncode}): {why}")
    return {"SLURM_CONF": next(line.split("=", 1)[1] for line in r.stdout.splitlines()
                               if line.startswith("SLURM_CONF="))}


def _stop_cluster(state: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SLURM_LOCAL), "stop", str(state)], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory) -> dict[str, str]:
    state = tmp_path_factory.mktemp("slurm")
    yield _start_cluster(state)
    _stop_cluster(state)


def _slurm(env: dict[str, str], *argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env={**os.environ, **env})


def _jobs(folder: Path, k: int) -> list[dict]:
    return json.loads((folder / "slurm" / f"s{k}.json").read_text())["jobs"]


def _spec(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'[campaign]\nname = "{name}"\nexecutor = "slurm"\n{body}')
    return path


def test_issue_spec_through_slurm_with_the_campaign_killed_halfway(slurm, tmp_path, halo_bin):
    spec = tmp_path / "tiny.toml"
    spec.write_text(ISSUE_SPEC.replace('executor = "local" ', 'executor = "slurm" '))
    folder = tmp_path / "campaign"
    proc = start("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm)
    wait_for_records(folder, 3, proc, TIMEOUT)
    code, _, err = interrupt(proc)
    assert code == 130, err
    assert "the submitted jobs keep running: run the same command again to follow them" in err
    before = {p.name: p.read_bytes() for p in (folder / "runs").glob("*.json")}
    assert 3 <= len(before) < 20

    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert [len(_jobs(folder, k)) for k in (1, 2)] == [1, 1]  # followed, not submitted again
    for name, text in before.items():
        assert (folder / "runs" / name).read_bytes() == text
    recs = records(folder)
    assert len(recs) == 20
    for rec in recs.values():
        check_record(folder, rec)
        assert rec["status"] == "ok" and rec["attempt"] == 1, why_not_ok(folder, rec)
        job = _jobs(folder, rec["submission"])[0]
        assert rec["slurm"] == {"job_id": job["job_id"], "state": "RUNNING"}
        assert rec["launch"]["launcher"] == "srun --mpi=pmix" and rec["launch"]["executor"] == "slurm"
        cmd = rec["command"]
        nodes = 2 if rec["point"]["np"] > 2 else 1
        assert Path(cmd[0]).name == "srun" and "--label" in cmd and "--ntasks-per-node=2" in cmd
        assert cmd[cmd.index("-N") + 1] == str(nodes) and cmd[cmd.index("-J") + 1] == rec["run"]
        assert rec["nodes"] == ["node1", "node2"]  # the allocation: 4 ranks, 2 per node
    for k in (1, 2):
        job = _jobs(folder, k)[0]
        assert job["collected"] and job["state"] == "COMPLETED" and job["cancelled"] is None
        script = (folder / job["script"]).read_text()
        assert "#SBATCH --nodes=2" in script and "#SBATCH --ntasks-per-node=2" in script
        assert "#SBATCH --exclusive" in script
        assert script.count(" campaign step ") == 10
    doc = json.loads((folder / "report.json").read_text())
    validate_report(doc)
    assert doc["counts"]["ok"] == 20 and doc["campaign"]["executor"] == "slurm"
    # Exclusive jobs of both nodes: one after the other, so no run shared a node.
    assert doc["counts"]["shared"] == 0 and all(r["in_stats"] for r in doc["runs"])
    assert [s["label"] for s in doc["submissions"]] == [f"s{k} (job {_jobs(folder, k)[0]['job_id']})" for k in (1, 2)]
    assert "report.json" in r.stderr and (folder / "report.html").read_text().count("<img") == 4


def test_scancel_of_a_running_submission_then_resume(slurm, tmp_path, halo_bin):
    spec = _spec(tmp_path, "cancel", '[launch]\nranks_per_node = 2\n[halo]\nstrategies = ["step2", "step7"]\n'
                 'itfin = 200\n[[sweep]]\nprocs = "2x1x1"\nsize = ["32x32x32", "48x48x48", "64x64x64"]\n'
                 '[slurm]\npoll_s = 0.5\n')
    folder = tmp_path / "campaign"
    proc = start("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm)
    assert wait_for_records(folder, 1, proc, TIMEOUT) >= 1
    job_id = _jobs(folder, 1)[0]["job_id"]
    assert _slurm(slurm, "scancel", job_id).returncode == 0
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 1, err
    assert f"submission 1: job {job_id} ended CANCELLED" in err
    first = records(folder)
    failed = {name for name, rec in first.items() if rec["status"] != "ok"}
    assert len(first) == 6 and failed
    for name in failed:
        rec = first[name]
        assert rec["status"] in ("crashed", "not_started") and f"job {job_id} ended CANCELLED" in rec["note"]
    assert sum(1 for name in failed if first[name]["status"] == "crashed") <= 1  # the one in flight

    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    jobs = _jobs(folder, 1)
    assert len(jobs) == 2 and sorted(jobs[1]["runs"]) == sorted(failed)
    for name, rec in records(folder).items():
        assert rec["status"] == "ok", why_not_ok(folder, rec)
        if name in failed:
            assert rec["attempt"] == 2 and rec["previous"][0]["status"] == first[name]["status"]
            assert rec["previous"][0]["job_id"] == job_id and rec["slurm"]["job_id"] == jobs[1]["job_id"]
        else:
            assert rec == first[name]
    doc = json.loads((folder / "report.json").read_text())
    assert doc["counts"]["retried_runs"] == len(failed) and doc["counts"]["attempts"] == 6 + len(failed)
    assert doc["submissions"][0]["label"] == f"s1 (jobs {job_id}, {jobs[1]['job_id']})"


def test_a_step_that_ends_after_the_campaign_recorded_its_cancelled_job(tmp_path):
    """The race behind the test above: the campaign sees the cancelled job end and records the run in flight
    (crashed) before the job's step, whose srun the ended job refused, writes its own record. The step's
    record stands (it saw what happened: never started), and says the job's end was the cause."""
    from checkmpi.campaign.execute import finish, finish_step, new_record
    from checkmpi.campaign.plan import plan
    from checkmpi.campaign.spec import parse_spec

    spec = parse_spec('[campaign]\nname = "x"\n[halo]\nstrategies = ["step0"]\nitfin = 40\n[[sweep]]\n'
                      'procs = "2x1x1"\nsize = "32x32x16"\n', tmp_path / "s.toml", resolved=["step0"])
    (run,) = plan(spec)
    cdir = CampaignDir(tmp_path / "c")
    cdir.create_or_check(spec)
    job = {"job_id": "7", "state": "RUNNING"}
    step = new_record(cdir, spec, run, None, ["n0"], job)  # the step starts its run
    why = "job 7 ended CANCELLED"
    finish(cdir, new_record(cdir, spec, run, None, ["n0"], {"job_id": "7", "state": "CANCELLED", "ended": why}),
           "crashed", f"{why} while this run was running")  # the campaign collects the job
    srun = "the job never started checkmpi-halo: srun: error: Expired or invalid job 7"
    rec = finish_step(cdir, step, "not_started", srun, job)
    assert rec == cdir.read_record(run.id)
    assert rec["status"] == "not_started" and rec["note"] == f"{why}: {srun}"
    assert rec["slurm"] == {"job_id": "7", "state": "CANCELLED", "ended": why} and rec["attempt"] == 1
    # A run that finished is ok whatever the job did next; another job's record is not this run's cause.
    assert finish_step(cdir, dict(step), "ok", None, job)["note"] is None
    finish(cdir, new_record(cdir, spec, run, None, ["n0"], {"job_id": "6", "state": "CANCELLED", "ended": "job 6 "
                            "ended CANCELLED"}), "crashed", "job 6 ended CANCELLED while this run was running")
    assert finish_step(cdir, dict(step), "not_started", srun, job)["note"] == srun
    # A job that ended on its own (its script failed) stopped no step: the step's failure is its own.
    finish(cdir, new_record(cdir, spec, run, None, ["n0"], {"job_id": "7", "state": "FAILED", "ended": "job 7 "
                            "ended FAILED"}), "crashed", "job 7 ended FAILED while this run was running")
    assert finish_step(cdir, dict(step), "crashed", "killed by signal 9", job)["note"] == "killed by signal 9"


def test_submissions_that_share_a_node_are_flagged(slurm, tmp_path, halo_bin):
    # Not exclusive, the two submissions (2 ranks, one node each) start at once and run side by side on the
    # one host the pretend nodes are: every run overlapping one of the other submission is flagged.
    spec = _spec(tmp_path, "shared", 'repetitions = 2\n[launch]\nranks_per_node = 2\n[halo]\nstrategies = ["step2"]\n'
                 'itfin = 10000\n[[sweep]]\nprocs = "2x1x1"\nsize = ["32x32x32", "48x48x48", "32x32x16"]\n'
                 '[slurm]\nexclusive = false\npoll_s = 0.5\n')
    folder = tmp_path / "campaign"
    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert all("#SBATCH --exclusive" not in (folder / _jobs(folder, k)[0]["script"]).read_text() for k in (1, 2))
    recs = records(folder)
    assert all(rec["started"] < rec["ended"] < rec["finished"] for rec in recs.values())
    doc = json.loads((folder / "report.json").read_text())
    validate_report(doc)
    flagged = {run["run"]: run for run in doc["runs"] if run["shared_node_with"]}
    assert doc["counts"]["shared"] == len(flagged) >= 2, [(r["started"], r["ended"]) for r in recs.values()]
    host = {h.split(".")[0] for rec in recs.values() for h in rec["hostnames"]}
    for name, run in flagged.items():
        assert run["shared_nodes"] == sorted(host) and not run["in_stats"]
        assert all(other[:2] != name[:2] for other in run["shared_node_with"])  # the other submission's
    assert any(f"runs that shared a node with another of the campaign's runs at the same time: {len(flagged)}" in line
               for line in r.stderr.splitlines())
    n = {stat["point"]: stat["n"] for stat in doc["stats"]}
    assert n == {p: 2 - sum(1 for name in flagged if p in name) for p in n}
    r = checkmpi("campaign", "report", str(folder), "--include-shared", "--json", str(tmp_path / "all.json"),
                 timeout=120)
    assert r.returncode == 0, r.stderr
    assert [stat["n"] for stat in json.loads((tmp_path / "all.json").read_text())["stats"]] == [2, 2, 2]


def test_a_time_limit_too_short_for_one_submission(slurm, tmp_path, halo_bin):
    # Each run takes 2 to 3 s here (30000 steps; one of 40 steps ends within 1.5 s): submission 2
    # can finish none of them. Submission 1's 240 s hold its four runs on a loaded machine too, where two
    # busy-polling ranks among other jobs on 2 CPUs can wait a scheduler tick a step (over 120 s in one CI run).
    spec = _spec(tmp_path, "short", 'repetitions = 2\n[launch]\nranks_per_node = 2\ntime_limit_s = [240, 1.5]\n'
                 '[halo]\nstrategies = ["step2", "step7"]\nitfin = 30000\n[[sweep]]\nprocs = "2x1x1"\n'
                 'size = ["32x32x32", "48x48x48"]\n[slurm]\npoll_s = 0.5\n')
    folder = tmp_path / "campaign"
    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 1, r.stderr
    recs = records(folder)
    assert [recs[n]["status"] for n in sorted(recs) if n.startswith("s1-")] == ["ok"] * 4
    short = [recs[n] for n in sorted(recs) if n.startswith("s2-")]
    assert all(rec["status"] in ("too_slow", "not_started") for rec in short)
    assert any(rec["status"] == "not_started" for rec in short)
    assert all("time limit (1.5 s)" in rec["note"] for rec in short)
    assert "#SBATCH --time=2" in (folder / _jobs(folder, 2)[0]["script"]).read_text()
    doc = json.loads((folder / "report.json").read_text())
    validate_report(doc)
    assert doc["submissions"][0]["verdict"].startswith("every run ok")
    rows = rendered_table(checkmpi("campaign", "report", str(folder), timeout=120).stdout, "Loop time")
    assert rows[1][1:3] in (["n.a.", "-"], ["-", "-"]) and rows[1][3] != "-"


def test_a_submission_pending_past_its_limit_did_not_start(slurm, tmp_path, halo_bin):
    spec = _spec(tmp_path, "pending", '[halo]\nstrategies = ["step2"]\nitfin = 10\n[[sweep]]\nlocal = "8x8x8"\n'
                 'np = 2\n[slurm]\nsbatch_args = ["--begin=now+3600"]\npending_limit_s = 2\npoll_s = 0.5\n')
    folder = tmp_path / "campaign"
    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 1, r.stderr
    rec = records(folder)["s1-2x1x1-16x8x8-step2"]
    assert rec["status"] == "not_started"
    assert "pending for more than 2 s" in rec["note"] and "before this run started" in rec["note"]
    job = _jobs(folder, 1)[0]
    assert job["state"] == "CANCELLED" and job["cancelled"] == "pending for more than 2 s"
    doc = json.loads((folder / "report.json").read_text())
    assert "1/1 submissions (100%) did not start at all" in doc["summary"]


def test_a_step_that_cannot_launch_did_not_start(slurm, tmp_path, halo_bin):
    # srun waits for a node with a feature no node has: the launch hangs until the time limit.
    spec = _spec(tmp_path, "hang", '[launch]\ntime_limit_s = 4\n[halo]\nstrategies = ["step2"]\nitfin = 10\n'
                 '[[sweep]]\nlocal = "8x8x8"\nnp = 2\n[slurm]\nsrun_args = ["--constraint=nosuch"]\npoll_s = 0.5\n')
    folder = tmp_path / "campaign"
    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 1, r.stderr
    pingpong = json.loads((folder / "p2p" / "pingpong.record.json").read_text())
    assert pingpong["error"].startswith("stopped after") and pingpong["results"] is None
    # Again: no ping-pong this time (its failure is kept), so the run has the whole limit to hang in.
    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 1, r.stderr
    rec = records(folder)["s1-2x1x1-16x8x8-step2"]
    assert rec["status"] == "not_started" and rec["attempt"] == 2 and rec["expected"]["kind"] == "none"
    assert rec["note"].startswith("stopped at the submission's time limit (4 s)")
    assert rec["note"].endswith("before checkmpi-halo started") and 3 < rec["elapsed_s"] < 30
    assert any("Unable to create step" in line or "pending job step" in line for line in rec["errors"]["launcher"])


def test_checkmpi_run_with_srun_inside_an_allocation(slurm, tmp_path, halo_bin):
    out = tmp_path / "run.json"
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n{sys.executable} -m checkmpi run --launcher srun --bin {halo_bin} --np 4 "
                      f"--local 8x8x8 --iters 10 --strategy step2,step7 --no-report --json {out} --timeout 120\n")
    r = _slurm(slurm, "sbatch", "--wait", "-N", "2", "--ntasks-per-node=2", "-t", "3",
               "-o", str(tmp_path / "job.out"), str(script), timeout=240)
    log = (tmp_path / "job.out").read_text()
    assert r.returncode == 0, log
    assert "launcher /usr/bin/srun --mpi=pmix" in log
    doc = json.loads(out.read_text())
    assert doc["context"]["nprocs"] == 4 and all(s["valid"] for s in doc["results"])


@pytest.mark.skipif(not (MPICH_BIN / "checkmpi-halo").exists(), reason="no MPICH build (bash scripts/setup.sh --tests)")
def test_mpich_runs_start_with_srun_and_pmi2(slurm, tmp_path):
    spec = _spec(tmp_path, "mpich", '[launch]\nranks_per_node = 2\n[halo]\nstrategies = ["step7"]\nitfin = 20\n'
                 '[[sweep]]\nlocal = "8x8x8"\nnp = [2, 4]\n[slurm]\npoll_s = 0.5\n')
    folder = tmp_path / "campaign"
    r = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(MPICH_BIN), env=slurm,
                 timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    for rec in records(folder).values():
        check_record(folder, rec)
        assert rec["launch"]["launcher"] == "srun --mpi=pmi2" and rec["launch"]["mpi"] == "mpich"


def test_a_step_that_failed_as_its_job_was_cancelled_is_told_so(tmp_path):
    # The race the scancel test above can meet: the cancellation lands while a step's srun starts, and the
    # step records srun's refusal itself. Collecting the job still names the cancellation, once.
    cdir = CampaignDir(tmp_path)
    cdir.runs_dir.mkdir(parents=True)
    refused = {"schema": RUN_SCHEMA, "run": "a", "status": "not_started", "slurm": {"job_id": "7"},
               "note": "srun: error: Unable to create step for job 7: Expired or invalid job"}
    ok = {"schema": RUN_SCHEMA, "run": "b", "status": "ok", "note": None, "slurm": {"job_id": "7"}}
    for rec in (refused, ok):
        cdir.write_record(rec)
    fake = SimpleNamespace(cdir=cdir, spec=None, by_id={}, _save=lambda k: None)
    for _ in range(2):  # a resumed campaign collects it again
        SlurmCampaign.collect(fake, 1, {"job_id": "7", "runs": ["a", "b"], "nodes": ""}, "CANCELLED")
        rec = cdir.read_record("a")
        assert (rec["status"], rec["note"]) == ("not_started", "job 7 ended CANCELLED: " + refused["note"])
        assert cdir.read_record("b") == ok


def test_stop_ends_the_jobs_still_running(tmp_path):
    # A cluster stopped while a job runs (an interrupted test run, a user): stop cancels its jobs first, so
    # that no batch script or what it started outlives the daemons.
    env = _start_cluster(tmp_path / "c")
    try:
        job = tmp_path / "job.sh"
        job.write_text(f"#!/bin/bash\nsrun -n 1 {sys.executable} -c 'import time; time.sleep(600)' {tmp_path}\n")
        assert _slurm(env, "sbatch", "-o", str(tmp_path / "job.out"), str(job)).returncode == 0
        def running() -> bool:  # the job step's own process, not only srun on its way
            return any(cmd.startswith(sys.executable) for cmd in leftover_processes(tmp_path))
        deadline = time.time() + 60
        while not running() and time.time() < deadline:
            time.sleep(0.2)
        assert running()
    finally:
        stop = _stop_cluster(tmp_path / "c")
    assert stop.returncode == 0, stop.stderr
    deadline = time.time() + 10
    while leftover_processes(tmp_path) and time.time() < deadline:
        time.sleep(0.2)
    assert leftover_processes(tmp_path) == []


def test_a_step_after_the_campaign_collected_its_job_leaves_the_record(tmp_path, halo_bin):
    # The other race of a cancellation: Slurm drops the job from squeue before its batch script is gone, the
    # campaign records the job's runs, and the script starts its next step. That step is the same job's
    # attempt, recorded already: it leaves the record as it is (it made a second attempt of the job, and the
    # resumed campaign's retry attempt 3).
    spec = load_spec(_spec(tmp_path, "late", '[halo]\nstrategies = ["step2"]\nitfin = 10\n[[sweep]]\n'
                                             'local = "8x8x8"\nnp = 2\n'))
    cdir = CampaignDir(tmp_path / "campaign")
    cdir.create_or_check(spec)
    run = plan(spec)[0]
    fake = SimpleNamespace(cdir=cdir, spec=spec, by_id={run.id: run}, _save=lambda k: None)
    SlurmCampaign.collect(fake, 1, {"job_id": "7", "runs": [run.id], "nodes": ""}, "CANCELLED")
    before = cdir.record_path(run.id).read_bytes()
    assert json.loads(before)["status"] == "not_started" and json.loads(before)["attempt"] == 1
    r = checkmpi("campaign", "step", str(cdir.root), run.id, "--bin", str(halo_bin), env={"SLURM_JOB_ID": "7"},
                 timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"{run.id}: not_started: job 7 ended CANCELLED before this run started" in r.stderr
    assert cdir.record_path(run.id).read_bytes() == before
    assert cdir.marker(run.id) is None and not cdir.output_dir(run.id, 2).exists()


def test_a_job_end_names_itself_in_the_steps_it_stopped_only(tmp_path):
    # The same rule for every end that stops a job's steps (a time limit, a node lost), and none for a step
    # that failed on its own: before the job's end (sacct's End, whole seconds), or in a job that merely ended.
    cdir = CampaignDir(tmp_path)
    cdir.runs_dir.mkdir(parents=True)
    fake = SimpleNamespace(cdir=cdir, spec=None, by_id={}, _save=lambda k: None)
    killed = {"schema": RUN_SCHEMA, "run": "a", "status": "crashed", "slurm": {"job_id": "7"},
              "ended": "2026-11-28T10:00:03.500000Z", "note": "checkmpi-halo was killed by signal 15"}
    early = {**killed, "run": "b", "ended": "2026-11-28T09:59:50.000000Z", "status": "invalid",
             "note": "validation failed"}
    end = "2026-11-28T10:00:04.000000Z"
    cases = [("TIMEOUT", end, True, False), ("NODE_FAIL", None, True, True), ("CANCELLED by 0", end, True, False),
             ("FAILED", end, False, False), ("COMPLETED", None, False, False)]
    for state, ended, named, named_early in cases:
        for rec in (killed, early):
            cdir.write_record(dict(rec))
        SlurmCampaign.collect(fake, 1, {"job_id": "7", "runs": ["a", "b"], "nodes": ""}, state, ended)
        why = f"job 7 ended {state}: "
        assert cdir.read_record("a")["note"] == (why if named else "") + killed["note"], state
        assert cdir.read_record("b")["note"] == (why if named_early else "") + early["note"], state
