"""The expected wall time of a run, which its too-slow limit multiplies:
the first run of the same point and strategy that finished ok, else
checkmpi's model (`checkmpi predict`) fed by one short ping-pong per
campaign, plus that ping-pong job's wall time for the launch."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from checkmpi.campaign.launch import Launch
from checkmpi.campaign.plan import Point, Run, points
from checkmpi.atomic import make_folder, write_json
from checkmpi.campaign.records import CampaignDir, now_iso
from checkmpi.campaign.spec import Spec
from checkmpi.errors import CheckmpiError
from checkmpi.jobs import option_value
from checkmpi import halo_plan
from checkmpi.model import Case, Geometry, predict
from checkmpi.p2p_profile import DEFAULT_COPY_BANDWIDTH, machine_from_p2p
from checkmpi.native import Executable
from checkmpi.results import P2PRun, load, x_join

PINGPONG_TIMEOUT = 300.0  # seconds; the ping-pong takes about one
PINGPONG_ITERATIONS = 200  # per size: enough for a Hockney fit, short enough to add little to a campaign
PINGPONG_WARMUP = 10


def expected_time(cdir: CampaignDir, spec: Spec, run: Run, p2p: Executable, launch: Launch,
                  deadline: float | None) -> dict[str, Any]:
    """{"seconds": float | None, "kind": "run" | "predict" | "none", "source": text}; a ping-pong
    it has to run for that ends by `deadline` (epoch seconds) at the latest."""
    finished = []
    for k in range(1, spec.repetitions + 1):
        rec = cdir.read_record(Run(k, run.point, run.strategy).id)
        if rec is not None and rec["status"] == "ok":
            finished.append(rec)
    if finished:
        first = min(finished, key=lambda r: r["finished"])
        return {"seconds": first["elapsed_s"], "kind": "run",
                "source": f"run {first['run']}, the first of this point and strategy to finish"}
    pp = pingpong(cdir, spec, p2p, launch, deadline)
    if pp["error"]:
        return {"seconds": None, "kind": "none", "source": f"no prediction: the ping-pong failed: {pp['error']}"}
    try:
        p2p_run = load(cdir.root / pp["results"])
        assert isinstance(p2p_run, P2PRun)
        args = list(spec.halo_args)
        precision = option_value(args, "--precision") or "single"
        # checkmpi-halo sits beside checkmpi-p2p: its plan of the point gives the block and the strategy's row
        plan = point_plan(spec, run.point, str(p2p.path.parent))
        geometry = Geometry.of(plan.raw)
        machine = machine_from_p2p([p2p_run], (DEFAULT_COPY_BANDWIDTH, "default"), geometry.real_bytes)
    except CheckmpiError as e:
        return {"seconds": None, "kind": "none", "source": f"no prediction: {e.message}"}
    rows = [s.row for s in plan.strategies if s.row.id == run.strategy]
    case = Case(run.point.procs, run.point.local, geometry, precision,
                option_value(args, "--sync") or "barrier", int(option_value(args, "--border") or 10))
    per_step = predict(rows, case, machine)[0].total
    seconds = per_step * spec.itfin + pp["launch_s"]
    return {"seconds": round(seconds, 3), "kind": "predict",
            "source": (f"checkmpi predict from {pp['results']}: {per_step * 1e6:.1f} us per step x {spec.itfin} "
                       f"steps, plus {pp['launch_s']:.2f} s to launch an MPI job (the ping-pong job's wall time "
                       "less its round trips)")}


def pingpong(cdir: CampaignDir, spec: Spec, p2p: Executable, launch: Launch, deadline: float | None) -> dict[str, Any]:
    """DIR/p2p/pingpong.json and its record, made once per campaign (a failure is kept too:
    delete DIR/p2p to try again)."""
    folder = cdir.root / "p2p"
    record_path = folder / "pingpong.record.json"
    if record_path.exists():
        return json.loads(record_path.read_text(encoding="utf-8"))
    make_folder(folder)
    json_path = folder / "pingpong.json"
    largest = largest_message(spec, str(p2p.path.parent))
    argv = [str(p2p.path), "pingpong", "-m", f"1:{largest}", "-i", str(PINGPONG_ITERATIONS), "-x", str(PINGPONG_WARMUP),
            "--json", str(json_path)]
    job = launch.job(2, argv, "checkmpi-p2p-pingpong")
    timeout = PINGPONG_TIMEOUT if deadline is None else max(0.1, min(PINGPONG_TIMEOUT, deadline - time.time()))
    done = job.run(timeout, raise_on_timeout=False)
    error = None
    if done.timed_out:
        error = f"stopped after {done.seconds:.1f} s"
    elif done.returncode != 0 or not json_path.exists():
        tail = [line for line in done.stderr_tail if line.strip()][-1:]
        error = f"exit code {done.returncode}" + (f": {tail[0]}" if tail else "")
    record = {"results": cdir.rel(json_path) if error is None else None, "seconds": round(done.seconds, 3),
              "launch_s": round(launch_time(json_path, done.seconds), 3) if error is None else None,
              "exit_code": done.returncode, "command": job.command()[0], "error": error, "finished": now_iso()}
    write_json(record_path, record)
    return record


def launch_time(json_path: Path, wall: float) -> float:
    """The ping-pong job's wall time less its measured round trips: the cost of starting an MPI job."""
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    measured = sum(2 * (r["iterations"] + PINGPONG_WARMUP) * r["latency"]["mean"] for r in doc["results"])
    return max(0.0, wall - measured)


def point_plan(spec: Spec, point: Point, bin_dir: str) -> halo_plan.Plan:
    """checkmpi-halo's plan of a point with every strategy of the campaign (one launch per point: it is cached)."""
    precision = option_value(list(spec.halo_args), "--precision") or "single"  # the other args are the runs'
    return halo_plan.make(["--no-input", "--procs", x_join(point.procs), "--size", x_join(point.size), "--strategy",
                           ",".join(spec.strategies), "--precision", precision], bin_dir)


def largest_message(spec: Spec, bin_dir: str) -> int:
    """The largest halo message of the campaign's strategies at any of its points (checkmpi-halo's plans), as a
    power of two within 1 KiB..4 MiB."""
    largest = max(point_plan(spec, p, bin_dir).largest_message() for p in points(spec))
    size = 1024
    while size < largest and size < 4 * 1024 * 1024:
        size *= 2
    return size
