"""Where a campaign stands: one progress line per finished run while it
runs, and `checkmpi campaign status DIR` (done / running / failed / pending /
interrupted)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections import Counter
from typing import Any

from rich.console import Console

from checkmpi import tables as T
from checkmpi.campaign.plan import Run
from checkmpi.campaign.records import CampaignDir
from checkmpi.native import say


def outcome(record: dict[str, Any]) -> str:
    """One line: status, wall time, expected time and its source, note."""
    text = record["status"]
    if record.get("elapsed_s") is not None:
        text += f" in {record['elapsed_s']:.2f} s"
    expected = record.get("expected") or {}
    if expected.get("seconds") is not None:
        text += f" (expected {expected['seconds']:.2f} s from {expected['kind']})"
    if record.get("attempt", 1) > 1:
        text += f", attempt {record['attempt']}"
    if record.get("note"):
        text += f": {record['note']}"
    return text


class Progress:
    """Prints a line per run as it finishes; on a terminal also shows the run in flight."""

    def __init__(self, runs: list[Run], done: int):
        self.total = len(runs)
        self.count = done
        self.width = len(str(self.total))
        self.status = None
        if sys.stderr.isatty():
            self.status = Console(stderr=True).status("")
        say(f"{done} of {self.total} runs done already; {self.total - done} to do")

    def starting(self, run: Run) -> None:
        if self.status is not None:
            self.status.update(f"running {run.id} ({run.describe()})")
            self.status.start()

    def finished(self, record: dict[str, Any]) -> None:
        if self.status is not None:
            self.status.stop()
        self.count += 1
        say(f"[{self.count:>{self.width}}/{self.total}] {record['run']}: {outcome(record)}")


def run_state(cdir: CampaignDir, run_id: str, record: dict[str, Any] | None) -> str:
    """done, running, interrupted (a marker whose process or job is gone: the campaign was stopped while it
    ran), failed (status) or pending (no record yet: not run so far)."""
    marker = cdir.marker(run_id)
    if marker is not None:
        if _alive(marker):
            return "running"
        if record is None or record["status"] != "ok":
            return "interrupted"
    if record is None:
        return "pending"
    return "done" if record["status"] == "ok" else f"failed ({record['status']})"


def _alive(marker: dict[str, Any]) -> bool:
    if marker.get("job_id"):
        try:
            out = subprocess.run(["squeue", "-h", "-j", str(marker["job_id"]), "-o", "%T"], capture_output=True,
                                 text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return out.returncode == 0 and out.stdout.strip() != ""
    if marker.get("host") != socket.gethostname():
        return False
    try:
        os.kill(int(marker["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return False
    return True


def status_table(cdir: CampaignDir, runs: list[Run]) -> tuple[T.Table, Counter]:
    table = T.Table(f"Campaign {cdir.root}", ["run", "state", "attempts", "elapsed (s)", "expected (s)"],
                    left_columns=2)
    counts: Counter = Counter()
    notes = []  # under the table: a run's note can be a sentence
    for run in runs:
        record = cdir.read_record(run.id)
        state = run_state(cdir, run.id, record)
        counts[state.split(" ")[0]] += 1
        r = record or {}
        expected = (r.get("expected") or {}).get("seconds")
        table.rows.append([run.id, state, str(r.get("attempt", "-")),
                           T.num(r["elapsed_s"], 2) if r.get("elapsed_s") is not None else "-",
                           T.num(expected, 2) if expected is not None else "-"])
        if r.get("note"):
            notes.append(f"{run.id}: {r['note']}")
    shown = ("done", "running", "failed", "pending") + (("interrupted",) if counts["interrupted"] else ())
    table.caption = "\n".join([", ".join(f"{counts[k]} {k}" for k in shown) + f" of {len(runs)} runs", *notes])
    return table, counts
