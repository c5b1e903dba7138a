"""Faults around a run, as a user meets them: checkmpi stopped by SIGTERM or
SIGINT, a job over its --timeout, a failing run, a full disk, an output
named like an input. Each ends with a clear error, no process left running,
and nothing written before lost."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import DATA, REPO, assert_clean_error, checkmpi

LIMIT = ["--timeout", "180"]


def _ranks_of(marker: Path) -> list[str]:
    """Processes whose command line names `marker` (a path only this test uses)."""
    out = subprocess.run(["pgrep", "-f", str(marker)], capture_output=True, text=True, check=False).stdout
    return out.split()


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _earlier_run(halo_bin: Path, folder: Path) -> dict[str, bytes]:
    """A finished run into `folder` (results.json and its run folder)."""
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "6", "--strategy",
                 "step2", "--no-report", "--json", str(folder / "results.json"), *LIMIT, cwd=folder)
    assert r.returncode == 0, r.stderr
    return _files(folder)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_to_checkmpi_ends_the_whole_job(halo_bin, tmp_path, sig):
    before = _earlier_run(halo_bin, tmp_path)
    cmd = [sys.executable, "-m", "checkmpi", "run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8",
           "--iters", "10000000", "--strategy", "step2", "--no-report", "--json", str(tmp_path / "results.json"),
           *LIMIT]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(_ranks_of(tmp_path / "results")) < 3 and time.monotonic() < deadline:  # launcher + 2 ranks
        time.sleep(0.2)
    assert len(_ranks_of(tmp_path / "results")) >= 3, "the job did not start"
    time.sleep(1)
    proc.send_signal(sig)
    start = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - start < 15, "checkmpi took too long to stop"
    assert proc.returncode == 128 + sig, err
    assert f"checkmpi: error: stopped by {signal.Signals(sig).name}: the MPI job (mpirun) was ended; files of earlier runs are as they were" in err
    assert "Traceback" not in err
    assert not _ranks_of(tmp_path / "results"), "MPI processes left running"
    assert _files(tmp_path) == before, "files of the earlier run changed"


def test_stop_in_a_later_launch_leaves_the_earlier_run(halo_bin, tmp_path):
    """Each launch of a run of several replaces the results, the samples, the log and the profiles: a stop in
    launch 2 puts the earlier run's back and removes what the stopped one added."""
    run = ["run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--strategy", "step2", "--no-report",
           "--json", str(tmp_path / "results.json"), "--launches", "2", *LIMIT]
    r = checkmpi(*run, "--iters", "6", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    before = _files(tmp_path)
    assert "results/samples.json" in before and "results/checkmpi-halo.log" in before
    # About a second or more a launch: long enough for the stop to land in launch 2.
    proc = subprocess.Popen([sys.executable, "-m", "checkmpi", *run, "--iters", "100000", "--icheck", "50000"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while not any("launch 2 of 2" in line for line in lines) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any("launch 2 of 2" in line for line in lines), "".join(lines)
    assert (tmp_path / "results" / "samples.json").read_bytes() != before["results/samples.json"]  # launch 1's
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    reader.join(timeout=10)
    assert proc.returncode == 128 + signal.SIGTERM, "".join(lines)
    assert "files of earlier runs are as they were" in "".join(lines)
    assert not _ranks_of(tmp_path / "results"), "MPI processes left running"
    assert _files(tmp_path) == before, "files of the earlier run changed"


def test_json_where_the_launches_keep_their_samples_is_refused(halo_bin, tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "samples.json").write_text('{"mine": 1}')
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "6", "--strategy",
                 "step2", "--launches", "2", "--no-report", "--json", "o/samples.json", "--outdir", "o", *LIMIT,
                 cwd=tmp_path)
    assert_clean_error(r, 2, "--json 'o/samples.json' is where the launches keep their samples (o/samples.json); "
                       "give another --json or --outdir")
    assert (tmp_path / "o" / "samples.json").read_text() == '{"mine": 1}'


def test_timeout_leaves_earlier_results(halo_bin, tmp_path):
    before = _earlier_run(halo_bin, tmp_path)
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "10000000",
                 "--strategy", "step2", "--no-report", "--json", str(tmp_path / "results.json"), "--timeout", "3",
                 cwd=tmp_path, timeout=120)
    assert_clean_error(r, 1, "timed out after 3 s")
    time.sleep(1)
    assert not _ranks_of(tmp_path / "results")
    assert _files(tmp_path) == before


def test_failed_run_leaves_earlier_log(halo_bin, tmp_path):
    before = _earlier_run(halo_bin, tmp_path)
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "2", "--local", "8x8x8", "--iters", "6", "-s", "step0",
                 "--inject-error", "step9", "--no-report", "--json", str(tmp_path / "results.json"), *LIMIT,
                 cwd=tmp_path)
    assert_clean_error(r, 1, "checkmpi-halo failed with exit code 2", "'step9' is not the id of a strategy")
    assert _files(tmp_path) == before


@pytest.mark.parametrize("args, option", [
    (["report", "{fixture}", "--no-report", "--html", "{fixture}"], "--html"),
    (["export", "--format", "csv", "{fixture}", "-o", "{fixture}"], "-o"),
    (["predict", "--p2p", "{p2p}", "--procs", "2x2x2", "--local", "8x8x8", "--json", "{p2p}"], "--json"),
])
def test_output_over_an_input_is_refused(tmp_path, args, option):
    fixture, p2p = tmp_path / "halo.json", tmp_path / "pp.json"
    shutil.copy(DATA / "halo_4ranks.json", fixture)
    shutil.copy(DATA / "p2p_pingpong.json", p2p)
    before = _files(tmp_path)
    r = checkmpi(*[a.format(fixture=fixture, p2p=p2p) for a in args], cwd=tmp_path)
    assert_clean_error(r, 2, f"{option} '", "refusing to write over it")
    assert _files(tmp_path) == before


def _can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="a private tmpfs needs root and unshare")
def test_full_disk_keeps_the_earlier_report(tmp_path):
    """report.html and plots on a full tmpfs: exit 1 naming the file and the
    reason, the earlier report as it was, no temporary left."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = f"""
set -e
mount -t tmpfs -o size=2m tmpfs {disk}
cd {tmp_path}
{sys.executable} -m checkmpi report {DATA / 'halo_4ranks.json'} --no-report --html {disk}/report.html
md5sum {disk}/report.html > before.md5
dd if=/dev/zero of={disk}/filler bs=4096 2>/dev/null || true
set +e
{sys.executable} -m checkmpi report {DATA / 'halo_all_steps.json'} --plots {disk}/plots --html {disk}/report.html
echo "rc=$?"
rm {disk}/filler
md5sum -c before.md5
find {disk} -name '*.tmp.*'
"""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], capture_output=True,
                       text=True, env=env, timeout=120, check=False)
    assert "rc=1" in r.stdout, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("checkmpi: error:")]
    assert len(errors) == 1 and errors[0].startswith(f"checkmpi: error: cannot write '{disk}/"), r.stderr
    assert errors[0].endswith(": No space left on device"), errors
    assert f"{disk}/report.html: OK" in r.stdout
    assert ".tmp." not in r.stdout, "temporary files left behind"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_outside_a_job_says_so(monkeypatch, capsys, tmp_path, sig):
    """SIGTERM or SIGHUP after the job (checkmpi drawing the report): the file being written goes, the earlier
    one stays, and checkmpi says what stopped it (it used to end with exit 143 and no line)."""
    from checkmpi import atomic, cli, report

    target = tmp_path / "report.html"
    target.write_text("earlier")

    def drawing(args):
        with atomic.replacing(target) as temp:
            temp.write_text("half")
            os.kill(os.getpid(), sig)
            time.sleep(30)  # not reached: the handler raises at once
        return 0

    monkeypatch.setattr(report, "report_command", drawing)
    # The signal's default action, whatever this pytest inherited (under nohup SIGHUP is ignored: the next test)
    outer = signal.signal(sig, signal.SIG_DFL)
    try:
        assert cli.main(["report", str(DATA / "halo_4ranks.json")]) == 128 + sig
        assert capsys.readouterr().err == f"checkmpi: stopped by {signal.Signals(sig).name}\n"
        assert _files(tmp_path) == {"report.html": b"earlier"}
        assert signal.getsignal(sig) == signal.SIG_DFL  # the caller's disposition back
    finally:
        signal.signal(sig, outer)


def test_an_ignored_hangup_stays_ignored(monkeypatch, tmp_path):
    """Under nohup SIGHUP is ignored: checkmpi keeps it so and finishes."""
    from checkmpi import cli, report

    seen = []
    monkeypatch.setattr(report, "report_command", lambda args: seen.append(signal.getsignal(signal.SIGHUP)) or 0)
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert cli.main(["report", str(DATA / "halo_4ranks.json")]) == 0
    finally:
        signal.signal(signal.SIGHUP, old)
    assert seen == [signal.SIG_IGN]
