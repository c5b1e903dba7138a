"""A campaign folder: the spec it was made from, one record per run, markers
of runs in flight. Every file is written whole or not at all (temporary file
in the same folder, synced, then renamed), so a campaign killed at any moment
leaves only complete records behind (docs/campaign.md, "Records"): checkmpi.atomic."""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from checkmpi.atomic import make_folder, remove_stale_temporaries, write_json
from checkmpi.campaign.plan import Run, plan
from checkmpi.campaign.spec import Spec, parse_spec
from checkmpi.errors import EXIT_FAILED, CheckmpiError

DIR_SCHEMA = "checkmpi.campaign-dir/1"
RUN_SCHEMA = "checkmpi.campaign-run/1"
STATUSES = ("ok", "invalid", "too_slow", "crashed", "not_started")


def now_iso() -> str:
    return iso_of(time.time())


def iso_of(epoch: float) -> str:
    """A time as records say it: UTC, microseconds, Z."""
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def epoch_of(text: Any) -> float | None:
    """Seconds since the epoch of a time as records say it (iso_of) or as Slurm prints it (local time); None for
    anything else (Slurm's Unknown, a missing time)."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if isinstance(text, str) else None
    except ValueError:
        return None


class CampaignDir:
    """DIR/campaign.json, DIR/runs/<run>.json (+ .running), DIR/runs/<run>/a<attempt>/."""

    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()  # batch scripts and records name it from anywhere
        self.runs_dir = self.root / "runs"

    @property
    def campaign_file(self) -> Path:
        return self.root / "campaign.json"

    def record_path(self, run_id: str) -> Path:
        return self.runs_dir / f"{run_id}.json"

    def marker_path(self, run_id: str) -> Path:
        return self.runs_dir / f"{run_id}.running"

    def output_dir(self, run_id: str, attempt: int) -> Path:
        return self.runs_dir / run_id / f"a{attempt}"

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def reads(self, path: Path) -> bool:
        """Whether `path` is one of the files the campaign itself reads (its record, runs, jobs, locks)."""
        full = path.resolve()
        return full in (self.campaign_file, self.root / ".lock") or any(
            full.is_relative_to(folder) for folder in (self.runs_dir, self.root / "slurm"))

    # ---- the campaign ---------------------------------------------------------------------------------

    def create_or_check(self, spec: Spec) -> None:
        """Records the spec on first use; later uses must bring the same one."""
        if self.campaign_file.exists():
            stored = self.load_spec()
            if tomllib.loads(stored.text) != tomllib.loads(spec.text):
                raise CheckmpiError(f"'{self.root}' holds campaign '{stored.name}' made from a different spec "
                                    f"({stored.path}); resume it with the same spec or use another --dir")
            return
        write_json(self.campaign_file, {"schema": DIR_SCHEMA, "name": spec.name, "spec_path": str(spec.path),
                                        "spec": spec.text, "strategies": list(spec.strategies),
                                        "grids": {str(n): list(g) for sw in spec.sweeps
                                                  for n, g in zip(sw.nps, sw.grids)},
                                        "created": now_iso(),
                                        "runs": [r.id for r in plan(spec)]})

    def refuse_foreign(self) -> None:
        """`campaign run` writes into a new or empty folder, or a campaign's: never over other files."""
        if self.root.exists() and not self.root.is_dir():
            raise CheckmpiError(f"--dir '{self.root}' is not a folder; give a new or empty folder, or a campaign's")
        if self.root.is_dir() and not self.campaign_file.exists():
            others = sorted(p.name for p in self.root.iterdir() if p.name != ".lock")
            if others:
                raise CheckmpiError(f"--dir '{self.root}' is not a campaign's folder (no campaign.json) and not "
                                    f"empty ({others[0]}{', ...' if len(others) > 1 else ''}); give a new or empty "
                                    "folder, or a campaign's to resume it")

    def lock(self) -> IO[str]:
        """Holds DIR/.lock while the returned file is open: one `campaign run` per folder at a time."""
        make_folder(self.root)
        try:
            handle = open(self.root / ".lock", "a")  # noqa: SIM115 (held open on purpose)
        except OSError as e:
            raise CheckmpiError(f"cannot write '{self.root / '.lock'}': {e.strerror or e}", EXIT_FAILED) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise CheckmpiError(f"another 'checkmpi campaign run' is working on '{self.root}'", 1) from None
        return handle

    def load_spec(self) -> Spec:
        try:
            doc = json.loads(self.campaign_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CheckmpiError(f"'{self.root}' is not a campaign folder (no campaign.json)") from None
        except (OSError, json.JSONDecodeError) as e:
            raise CheckmpiError(f"cannot read '{self.campaign_file}': {e}") from None
        if not isinstance(doc, dict) or doc.get("schema") != DIR_SCHEMA:
            raise CheckmpiError(f"'{self.campaign_file}' is not a {DIR_SCHEMA} file")
        strategies, grids = doc.get("strategies"), doc.get("grids")
        # Run ids, file names under runs/, come from the strategies: a changed file must not reach outside it.
        if not (isinstance(doc.get("spec"), str) and isinstance(doc.get("spec_path"), str)
                and (strategies is None or isinstance(strategies, list) and all(
                    isinstance(s, str) and re.fullmatch(r"[A-Za-z0-9_.=,+-]+", s) and ".." not in s
                    for s in strategies))
                and (grids is None or isinstance(grids, dict))):
            raise CheckmpiError(f"'{self.campaign_file}' has been changed: its spec, spec_path, strategies or grids "
                                "are not what a campaign writes")
        # The strategies and grids as checkmpi-halo resolved them when the campaign began: status and report
        # need no tool.
        return parse_spec(doc["spec"], Path(doc["spec_path"]), resolved=doc.get("strategies"), grids=doc.get("grids"))

    # ---- runs -----------------------------------------------------------------------------------------

    def read_record(self, run_id: str) -> dict[str, Any] | None:
        path = self.record_path(run_id)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as e:
            raise CheckmpiError(f"cannot read run record '{path}': {e}") from None
        if not isinstance(doc, dict) or doc.get("schema") != RUN_SCHEMA:
            raise CheckmpiError(f"'{path}' is not a {RUN_SCHEMA} record")
        return doc

    def records(self, runs: list[Run]) -> dict[str, dict[str, Any]]:
        return {r.id: rec for r in runs if (rec := self.read_record(r.id)) is not None}

    def write_record(self, record: dict[str, Any]) -> None:
        write_json(self.record_path(record["run"]), record)

    @contextmanager
    def records_locked(self) -> Iterator[None]:
        """Holds runs/.records.lock: a record read, decided on and written by a Slurm step and by the
        campaign collecting its ended job is not written by the other in between."""
        make_folder(self.runs_dir)
        with open(self.runs_dir / ".records.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def mark_running(self, run_id: str, attempt: int, job_id: str | None) -> None:
        write_json(self.marker_path(run_id), {"run": run_id, "attempt": attempt, "host": socket.gethostname(),
                                              "pid": os.getpid(), "job_id": job_id, "started": now_iso(),
                                              "started_epoch": time.time()})

    def marker(self, run_id: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.marker_path(run_id).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None

    def clear_marker(self, run_id: str) -> None:
        try:
            self.marker_path(run_id).unlink(missing_ok=True)
        except OSError as e:
            raise CheckmpiError(f"cannot remove '{self.marker_path(run_id)}': {e.strerror or e}", EXIT_FAILED) from None

    def remove_stale_temporaries(self) -> int:
        """Temporaries (NAME.tmp.PID.N) that a killed run left anywhere in the folder; only where every writer
        is on this machine (a PID names a process of this machine only)."""
        return len(remove_stale_temporaries(self.root.rglob("*.tmp.*")))

    def interrupted(self, runs: list[Run]) -> list[str]:
        """Runs whose marker outlived the process that wrote it on this machine: a campaign killed while
        they ran. Their markers go (they run again)."""
        found = []
        for run in runs:
            marker = self.marker(run.id)
            if marker is not None and marker.get("host") == socket.gethostname() and not marker.get("job_id"):
                found.append(run.id)
                self.clear_marker(run.id)
        return found

    def drop_stale_markers(self, runs: list[Run]) -> None:
        """A run whose ok record is written has finished: a marker beside it was left by an interruption between
        the record and the marker's removal."""
        for run in runs:
            if not needs_work(self.read_record(run.id)):
                self.clear_marker(run.id)


def needs_work(record: dict[str, Any] | None) -> bool:
    """Missing and failed runs are (re)done; ok ones never."""
    return record is None or record["status"] != "ok"


def attempt_history(previous: dict[str, Any] | None) -> tuple[int, list[dict[str, Any]]]:
    """The attempt number of the next try and the history it carries."""
    if previous is None:
        return 1, []
    summary = {k: previous.get(k) for k in ("attempt", "status", "note", "exit_code", "signal", "elapsed_s",
                                            "started", "ended", "finished", "nodes", "hostnames", "errors")}
    summary["job_id"] = (previous.get("slurm") or {}).get("job_id")
    return int(previous["attempt"]) + 1, [*previous.get("previous", []), summary]
