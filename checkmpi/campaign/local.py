"""The local executor: every run on this machine, one after another, each
submission (repetition) with its own time limit."""

from __future__ import annotations

import time

from checkmpi.campaign.execute import execute
from checkmpi.campaign.launch import resolve_launch
from checkmpi.campaign.plan import Run, by_submission
from checkmpi.campaign.records import CampaignDir, needs_work
from checkmpi.campaign.spec import Spec
from checkmpi.campaign.status import Progress
from checkmpi.native import Executable, say


def run_local(cdir: CampaignDir, spec: Spec, runs: list[Run], halo: Executable, p2p: Executable) -> None:
    launch = resolve_launch(spec, halo.path)
    say(f"executor local: {launch.launcher.describe()} ({launch.launcher.path}) on this machine"
        + (f"; ranks_per_node = {spec.ranks_per_node} does not apply here" if spec.ranks_per_node else ""))
    cdir.drop_stale_markers(runs)
    for run_id in cdir.interrupted(runs):  # `campaign run` holds the folder's lock: no other runs them now
        say(f"{run_id}: interrupted (the campaign that ran it was stopped and its job is gone); it runs again")
    removed = cdir.remove_stale_temporaries()
    if removed:
        say(f"removed {removed} temporary file{'s' if removed > 1 else ''} left by a stopped run")
    todo = [r for r in runs if needs_work(cdir.read_record(r.id))]
    progress = Progress(runs, len(runs) - len(todo))
    groups = by_submission(todo)
    for k in range(1, spec.repetitions + 1):
        mine = groups.get(k, [])
        if not mine:
            continue
        say(f"submission {k}: {len(mine)} runs, time limit {spec.time_limit(k):g} s")
        deadline = time.time() + spec.time_limit(k)
        for run in mine:
            progress.starting(run)
            progress.finished(execute(cdir, spec, run, halo, p2p, launch, deadline))
