"""What the campaign tests share: starting `checkmpi campaign run` in the
background, reading rendered tables, checking records and reports."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
from conftest import REPO

SCHEMA = json.loads((REPO / "schemas" / "checkmpi.campaign-1.schema.json").read_text())
STATUSES = {"ok", "invalid", "too_slow", "crashed", "not_started"}


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    full_env = dict(os.environ)
    full_env.pop("CHECKMPI_BIN", None)
    full_env.update(env or {})
    return subprocess.Popen([sys.executable, "-m", "checkmpi", *args], env=full_env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for_records(folder: Path, count: int, proc: subprocess.Popen, timeout: float) -> int:
    """Waits until `count` run records exist (or the process ended); returns how many there are."""
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        n = len(list((folder / "runs").glob("*.json")))
        if n >= count:
            return n
        time.sleep(0.1)
    return len(list((folder / "runs").glob("*.json")))


def interrupt(proc: subprocess.Popen, timeout: float = 60) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def records(folder: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((folder / "runs").glob("*.json"))}


def check_record(folder: Path, rec: dict) -> None:
    """Every key of a record, and the results it points at."""
    assert rec["schema"] == "checkmpi.campaign-run/1" and rec["status"] in STATUSES
    assert rec["run"] == f"s{rec['submission']}-{rec['point']['id']}-{rec['strategy']}"
    assert rec["attempt"] == len(rec["previous"]) + 1
    assert rec["finished"] is not None
    if rec["status"] == "ok":
        assert rec["exit_code"] == 0 and rec["signal"] is None and rec["elapsed_s"] > 0
        halo = json.loads((folder / rec["results"]).read_text())
        assert halo["context"]["nprocs"] == rec["point"]["np"]
        assert [r["strategy"] for r in halo["results"]] == [rec["strategy"]] and halo["results"][0]["valid"]
        assert [halo["config"][k] for k in ("lx", "ly", "lz")] == rec["point"]["size"]
        assert (folder / rec["log"]).read_text().count("checkmpi-halo") >= 1


def why_not_ok(folder: Path, rec: dict) -> str:
    """What a failed run left to read: its record's outcome, the tail of its log and of its Slurm job's
    output (a rare failure under CI's load is diagnosed from the assertion message alone: the folder goes)."""
    keys = ("run", "status", "note", "exit_code", "signal", "elapsed_s", "started", "ended", "errors", "slurm")
    parts = [json.dumps({k: rec.get(k) for k in keys})]
    tails = [rec.get("log")] + [j.get("output") for j in _all_jobs(folder)]
    for rel in filter(None, tails):
        try:
            lines = (folder / rel).read_text(errors="replace").splitlines()
        except OSError as e:
            lines = [f"unreadable: {e}"]
        parts.append(f"--- {rel} (last 30 lines)\n" + "\n".join(lines[-30:]))
    return "\n".join(parts)


def _all_jobs(folder: Path) -> list[dict]:
    jobs = []
    for path in sorted((folder / "slurm").glob("s*.json")):
        try:
            jobs += json.loads(path.read_text()).get("jobs", [])
        except (OSError, ValueError):
            pass
    return jobs


def leftover_processes(folder: Path) -> list[str]:
    """Command lines of live processes that name the campaign folder (an orphaned MPI job)."""
    found = []
    for proc in Path("/proc").iterdir():
        # Not the test itself. (A test's folder lies under /tmp/pytest-of-USER: every command line that names
        # it holds "pytest", which once made this find nothing.)
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(folder) in cmd:
            found.append(cmd)
    return found


def rendered_table(text: str, title: str) -> list[list[str]]:
    """The body rows of a table printed by rich (SIMPLE_HEAD box) whose title starts with `title`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(title))
    rule = next(i for i in range(start, len(lines)) if "───" in lines[i])
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip():  # the end of the body, or of a section: a caption comes after a blank line
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def flat(text: str) -> str:
    """`text` with every run of whitespace as one space: what was printed, whatever the wrapping."""
    return " ".join(text.split())


def validate_report(doc: dict) -> None:
    jsonschema.validate(doc, SCHEMA)
