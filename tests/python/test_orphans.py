"""No orphaned job and no file replaced through a link (issue 32, part A):
checkmpi killed by SIGKILL takes its MPI job with it, a campaign killed so
reads as interrupted and resumes, temporaries of killed writers go, and
outputs never replace a symbolic link, a device or a stranger's folder."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from campaign_helpers import flat, leftover_processes, rendered_table, start, validate_report
from conftest import DATA, REPO, assert_clean_error, checkmpi
from test_faults import _can_mount

QUIET = 15  # seconds the job may take to go once checkmpi is gone (3 s of grace in checkmpi.supervise)
RUN_ID = "s1-2x1x1-32x32x32-step2"
# One run that lasts until the submission's time limit stops it.
SPEC = """[campaign]
name = "kill"
executor = "local"
repetitions = 1
[launch]
time_limit_s = 15
[halo]
strategies = ["step2"]
itfin = 10000000
icheck = 10000000
[[sweep]]
procs = "2x1x1"
size = ["32x32x32"]
"""


def _ranks(folder: Path) -> list[str]:
    return [c for c in leftover_processes(folder) if c.split(" ", 1)[0].endswith("checkmpi-halo")]


def _wait_for_ranks(folder: Path, proc: subprocess.Popen, count: int = 2, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while len(_ranks(folder)) < count and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert len(_ranks(folder)) >= count, ("the job did not start", proc.poll())
    time.sleep(0.5)  # the launcher's set-up done


def _none_left(folder: Path) -> list[str]:
    deadline = time.monotonic() + QUIET
    while (left := leftover_processes(folder)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _dead_pid() -> int:
    """A PID no process has, nor will while the test runs: one above the kernel's pid_max (a PID freed a moment
    ago can come back on a busy machine of 32768 PIDs)."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def test_sigkill_to_checkmpi_run_ends_the_job(halo_bin, tmp_path):
    cmd = [sys.executable, "-m", "checkmpi", "run", "--bin", str(halo_bin), "-n", "2", "--local", "16x16x16",
           "--iters", "10000000", "--strategy", "step2", "--no-report", "--json", str(tmp_path / "results.json"),
           "--timeout", "300"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_ranks(tmp_path, proc)
        proc.kill()
        assert proc.wait(timeout=10) == -signal.SIGKILL
        assert _none_left(tmp_path) == [], "processes of the job left running"
        assert not list(tmp_path.rglob("*.tmp.*")), "the ranks (ended by SIGTERM) left temporaries"
        assert not (tmp_path / "results.json").exists()
    finally:
        proc.kill()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_signal_to_campaign_run_then_status_and_resume(halo_bin, tmp_path, sig):
    spec = tmp_path / "kill.toml"
    spec.write_text(SPEC)
    folder = tmp_path / "camp"
    proc = start("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin))
    try:
        _wait_for_ranks(folder, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        if sig == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
        else:  # an interrupt, as Ctrl-C
            assert proc.returncode == 130 and err.endswith("checkmpi: interrupted\n"), err
        assert _none_left(folder) == [], "processes of the campaign's job left running"
    finally:
        proc.kill()
    assert (folder / "runs" / f"{RUN_ID}.running").exists()
    status = checkmpi("campaign", "status", str(folder), timeout=60)
    assert status.returncode == 0, status.stderr
    assert rendered_table(status.stdout, "Campaign")[0][:2] == [RUN_ID, "interrupted"]
    assert "0 done, 0 running, 0 failed, 0 pending, 1 interrupted of 1 runs" in status.stdout
    # The report says so too, not pending.
    report = checkmpi("campaign", "report", str(folder), "--json", str(tmp_path / "interrupted.json"), timeout=120)
    assert report.returncode == 0, report.stderr
    doc = json.loads((tmp_path / "interrupted.json").read_text())
    validate_report(doc)
    assert [r["status"] for r in doc["runs"]] == ["interrupted"]
    sub = doc["submissions"][0]
    assert (sub["interrupted"], sub["missing"], sub["verdict"]) == (1, 0, "1 interrupted")

    dead = _dead_pid()
    stale = [folder / "runs" / f"{RUN_ID}.json.tmp.{dead}.0", folder / "plots" / f"failure-matrix.png.tmp.{dead}.7"]
    live = folder / "runs" / f"{RUN_ID}.json.tmp.{os.getpid()}.0"
    for p in [*stale, live]:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("half")
    # A SIGKILL can also catch a writer of the campaign or of its checkmpi-halo mid-file: those go as well.
    planted, stale = stale, [p for p in folder.rglob("*.tmp.*") if p != live]
    assert set(planted) <= set(stale)
    again = checkmpi("campaign", "run", str(spec), "--dir", str(folder), "--bin", str(halo_bin), timeout=240)
    assert_clean_error(again, 1, "1 of 1 runs are not ok")
    err = flat(again.stderr)
    assert (f"checkmpi: {RUN_ID}: interrupted (the campaign that ran it was stopped and its job is gone); it runs "
            "again") in err
    assert f"checkmpi: removed {len(stale)} temporary files left by a stopped run" in err
    assert not any(p.exists() for p in stale) and live.exists()
    assert not (folder / "runs" / f"{RUN_ID}.running").exists()
    assert "too_slow" in (folder / "runs" / f"{RUN_ID}.json").read_text()
    assert leftover_processes(folder) == []
    # The campaign's own outputs are refused the same way.
    (tmp_path / "report.json").symlink_to(folder / "report.json")
    before = (folder / "report.json").read_bytes()
    r = checkmpi("campaign", "report", str(folder), "--json", str(tmp_path / "report.json"), timeout=120)
    assert_clean_error(r, 1)
    assert (f"checkmpi: error: cannot write '{tmp_path / 'report.json'}': a symbolic link; give a new path or a "
            "regular file\n") in r.stderr
    assert (tmp_path / "report.json").is_symlink() and (folder / "report.json").read_bytes() == before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_while_writing_removes_the_temporary(tmp_path, sig):
    """The atomic writer's handlers: the temporary goes, then the signal ends the process as it would have."""
    # The default disposition first: under nohup (or a CI runner) SIGHUP comes ignored, and the writer leaves
    # an ignored signal ignored.
    script = (f"import os, signal, time\nsignal.signal({int(sig)}, signal.SIG_DFL)\n"
              f"from pathlib import Path\nfrom checkmpi.atomic import replacing\n"
              f"with replacing(Path({str(tmp_path / 'out.json')!r})) as temp:\n"
              f"    temp.write_text('half')\n    os.kill(os.getpid(), {int(sig)})\n    time.sleep(30)\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == -sig, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_next_writer_removes_temporaries_of_a_dead_one(tmp_path):
    dead = _dead_pid()
    stale, live = tmp_path / f"out.csv.tmp.{dead}.3", tmp_path / f"out.csv.tmp.{os.getpid()}.99"
    other = tmp_path / f"other.csv.tmp.{dead}.0"
    for p in (stale, live, other):
        p.write_text("half")
    r = checkmpi("export", "--format", "csv", str(DATA / "halo_4ranks.json"), "-o", str(tmp_path / "out.csv"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.csv", live.name, other.name])


def _link_cases(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "target.json").write_text("precious\n")
    (tmp_path / "link.json").symlink_to("target.json")
    (tmp_path / "stdout").symlink_to("/proc/self/fd/1")
    os.mkfifo(tmp_path / "pipe")
    cases = {"link": tmp_path / "link.json", "fd": tmp_path / "stdout", "pipe": tmp_path / "pipe"}
    try:  # a device node of its own, as /dev/null: never the real one, which code without the check replaces
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        cases["device"] = tmp_path / "null"
    except PermissionError:
        pass
    return cases


WHY = {"link": "a symbolic link", "fd": "a symbolic link", "pipe": "a named pipe", "device": "a character device"}
COMMANDS = {
    "export": ["export", "--format", "csv", str(DATA / "halo_4ranks.json"), "-o", "{out}"],
    "report": ["report", str(DATA / "halo_4ranks.json"), "--no-report", "--html", "{out}"],
    "predict": ["predict", "--p2p", str(DATA / "p2p_pingpong.json"), "--procs", "2x2x2", "--local", "8x8x8",
                "--json", "{out}", "--bin", "{bin}"],
    "run": ["run", "--bin", "{bin}", "-n", "2", "--local", "8x8x8", "--iters", "4", "--strategy", "step2",
            "--no-report", "--json", "{out}", "--timeout", "120"],
    "p2p": ["p2p", "pingpong", "--bin", "{bin}", "--no-report", "--json", "{out}", "--timeout", "120"],
    "calibrate": ["calibrate", "--bin", "{bin}", "--quick", "--json", "{out}", "--timeout", "120"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", ["link", "fd", "pipe", "device"])
def test_output_through_a_link_or_onto_a_device_is_refused(halo_bin, tmp_path, command, kind):
    cases = _link_cases(tmp_path)
    if kind not in cases:
        pytest.skip("making a device node needs root")
    out = cases[kind]
    r = checkmpi(*[a.format(out=out, bin=halo_bin) for a in COMMANDS[command]], cwd=tmp_path)
    assert_clean_error(r, 1)
    assert f"checkmpi: error: cannot write '{out}': {WHY[kind]}; give a new path or a regular file\n" in r.stderr
    assert (tmp_path / "link.json").is_symlink() and os.readlink(tmp_path / "link.json") == "target.json"
    assert (tmp_path / "stdout").is_symlink() and stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
    if "device" in cases:
        assert stat.S_ISCHR(os.lstat(cases["device"]).st_mode)
    assert (tmp_path / "target.json").read_text() == "precious\n"
    assert not list(tmp_path.rglob("*.tmp.*")) and not (tmp_path / "link").exists()


def test_campaign_dir_empty_or_foreign_is_refused(halo_bin, tmp_path):
    spec = REPO / "examples" / "campaign-tiny.toml"
    (tmp_path / "report.html").write_text("mine\n")
    r = checkmpi("campaign", "run", str(spec), "--dir", "", "--bin", str(halo_bin), cwd=tmp_path)
    assert_clean_error(r, 2)
    assert r.stderr == ("checkmpi: error: --dir is empty; give the campaign's folder (a new one, or a campaign's "
                        "to resume it)\n")
    r = checkmpi("campaign", "run", str(spec), "--dir", str(tmp_path), "--bin", str(halo_bin), cwd=tmp_path)
    assert r.stderr == (f"checkmpi: error: --dir '{tmp_path}' is not a campaign's folder (no campaign.json) and not "
                        "empty (report.html); give a new or empty folder, or a campaign's to resume it\n")
    assert r.returncode == 2
    r = checkmpi("campaign", "run", str(spec), "--dir", str(tmp_path / "report.html"), "--bin", str(halo_bin))
    assert r.stderr == (f"checkmpi: error: --dir '{tmp_path / 'report.html'}' is not a folder; give a new or empty "
                        "folder, or a campaign's\n")
    assert r.returncode == 2
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    assert (tmp_path / "report.html").read_text() == "mine\n"


ONE_RUN = """[campaign]
name = "one"
executor = "local"
repetitions = 1
[halo]
strategies = ["step2"]
itfin = 20
[[sweep]]
procs = "2x1x1"
size = ["16x16x16"]
"""


@pytest.mark.skipif(not _can_mount(), reason="a private tmpfs needs root and unshare")
def test_campaign_on_a_full_or_read_only_disk(halo_bin, tmp_path):
    """Resuming a finished campaign whose folder is full, then read-only: exit 1 and one line that names the
    file (it used to be 'internal error: OSError: [Errno 28]'); no temporary left."""
    disk = tmp_path / "disk"
    disk.mkdir()
    (tmp_path / "one.toml").write_text(ONE_RUN)
    run = f"{sys.executable} -m checkmpi campaign run {tmp_path / 'one.toml'} --dir {disk}/camp --bin {halo_bin}"
    script = f"""
set -e
mount -t tmpfs -o size=4m tmpfs {disk}
{run} 2>/dev/null
dd if=/dev/zero of={disk}/filler bs=4096 2>/dev/null || true
set +e
{run}; echo "full rc=$?"
find {disk} -name '*.tmp.*'
rm {disk}/filler
mount -o remount,ro {disk}
{run}; echo "read-only rc=$?"
"""
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], capture_output=True,
                       text=True, timeout=240, check=False)
    assert "full rc=1\nread-only rc=1\n" in r.stdout, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    assert errors == [f"checkmpi: error: cannot write '{disk}/camp/plots/variability-sweep1.png': No space left on "
                      "device",
                      f"checkmpi: error: cannot write '{disk}/camp/.lock': Read-only file system"], r.stderr
