"""Finding the tools and the launcher, launcher commands, and following a run's events (checkmpi.native)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from checkmpi import native
from checkmpi.errors import CheckmpiError


def _fake_tool(folder: Path, name: str = "checkmpi-halo") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return exe


def test_find_executable_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(_fake_tool(tmp_path / "onpath").parent))
    monkeypatch.delenv("CHECKMPI_BIN", raising=False)
    assert native.find_executable("checkmpi-halo").source == "PATH"
    _fake_tool(tmp_path / "build" / "bin")
    assert native.find_executable("checkmpi-halo").source == "./build/bin"
    monkeypatch.setenv("CHECKMPI_BIN", str(_fake_tool(tmp_path / "env").parent))
    assert native.find_executable("checkmpi-halo").source == f"CHECKMPI_BIN {tmp_path / 'env'}"
    found = native.find_executable("checkmpi-halo", str(_fake_tool(tmp_path / "opt").parent))
    assert found.source.startswith("--bin") and found.path == tmp_path / "opt" / "checkmpi-halo"


def test_find_executable_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CHECKMPI_BIN", raising=False)
    with pytest.raises(CheckmpiError, match="looked in ./build/bin and on PATH"):
        native.find_executable("checkmpi-halo")
    with pytest.raises(CheckmpiError, match="not found in --bin directory"):
        native.find_executable("checkmpi-halo", str(tmp_path))
    monkeypatch.setenv("CHECKMPI_BIN", str(tmp_path / "empty"))
    with pytest.raises(CheckmpiError, match="not found in CHECKMPI_BIN directory"):
        native.find_executable("checkmpi-halo")


def test_launcher_flavor_from_version_text():
    assert native._version_flavor("mpirun (Open MPI) 4.1.4") == "openmpi"
    assert native._version_flavor("HYDRA build details:\n    Version: 4.0.2") == "mpich"
    assert native._version_flavor("srun 23.02") == "unknown"


def test_mpi_args_reach_the_launcher_before_the_program(monkeypatch):
    monkeypatch.setattr(native, "physical_cores", lambda: 2)
    cmd, _ = native.mpi_command(native.Launcher("/usr/bin/mpirun", "openmpi"), 2, ["tool", "-x"],
                                ["--bind-to", "core", "--hostfile", "h"])
    assert cmd == ["/usr/bin/mpirun", "-n", "2", "--bind-to", "core", "--hostfile", "h", "tool", "-x"]


def test_mpi_command_flags(monkeypatch):
    monkeypatch.setattr(native, "physical_cores", lambda: 2)
    monkeypatch.delenv("OMPI_ALLOW_RUN_AS_ROOT", raising=False)
    ompi = native.Launcher("/usr/bin/mpirun", "openmpi")
    cmd, env = native.mpi_command(ompi, 2, ["tool"])
    assert cmd == ["/usr/bin/mpirun", "-n", "2", "tool"]
    cmd, env = native.mpi_command(ompi, 8, ["tool"])
    assert "--oversubscribe" in cmd
    if os.geteuid() == 0:
        assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    cmd, env = native.mpi_command(native.Launcher("/usr/bin/mpiexec.mpich", "mpich"), 8, ["tool"])
    assert cmd == ["/usr/bin/mpiexec.mpich", "-n", "8", "tool"] and "OMPI_ALLOW_RUN_AS_ROOT" not in env


def test_events_reach_the_progress_callback(tmp_path):
    """run_native hands the tool --events FILE and passes each whole "start" line on as it appears; a line still
    being written, or one of another kind, is not."""
    script = tmp_path / "tool.sh"
    script.write_text('#!/bin/sh\nwhile [ "$1" != --events ]; do shift; done\nf=$2\n'
                      'printf \'{"event": "start", "index": 1, "count": 2, "what": "step0 (sendrecv-dtype)"}\\n\' >"$f"\n'
                      'printf \'{"event": "other"}\\n{"event": "start", "index": 2, "count": 2, "what": "1 B"}\\n\' >>"$f"\n'
                      'printf \'{"event": "start", "ind\' >>"$f"\n')
    script.chmod(0o755)
    seen: list = []
    done = native.run_native([str(script), "--json", "x"], dict(os.environ), 30, lambda *a: seen.append(a))
    assert done.returncode == 0
    assert seen == [(1, 2, "step0 (sendrecv-dtype)"), (2, 2, "1 B")]


def test_jobs_run_through_the_supervisor_as_they_would_alone(tmp_path):
    """checkmpi.supervise between checkmpi and the launcher changes nothing a caller sees: the exit code, a
    signal, standard output, a launcher that cannot start."""
    env = dict(os.environ)
    assert native.run_native(["sh", "-c", "echo hi; exit 3"], env, 30).returncode == 3
    done = native.run_native(["sh", "-c", "echo hi; kill -TERM $$"], env, 30)
    assert (done.returncode, done.stdout) == (-15, "hi\n")
    with pytest.raises(CheckmpiError) as e:
        native.run_native([str(tmp_path / "no-launcher"), "x"], env, 30)
    assert (e.value.message, e.value.code) == (f"cannot start {tmp_path / 'no-launcher'}: No such file or directory", 1)


def _alive(marker: str) -> list[str]:
    """The live processes whose command line holds `marker`."""
    found = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and marker.encode() in (p / "cmdline").read_bytes():
                found.append(p.name)
        except OSError:
            pass
    return found


def test_a_signal_while_the_job_starts_stops_it(monkeypatch):
    """SIGTERM between starting the supervisor and its launcher running (a campaign interrupted as a run
    starts) is held and stops the job once it runs: nothing is left, and the caller hears of the signal."""
    import signal
    import subprocess

    real = subprocess.Popen

    def popen_then_signal(*args, **kwargs):
        proc = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # before the supervisor has said the launcher runs
        return proc

    monkeypatch.setattr(native.subprocess, "Popen", popen_then_signal)
    began = time.monotonic()
    with pytest.raises(CheckmpiError) as e:
        native.run_native(["sleep", "60.0417"], dict(os.environ), 120)
    assert e.value.code == 128 + signal.SIGTERM and "stopped by SIGTERM" in e.value.message
    assert time.monotonic() - began < 30
    assert _alive("sleep\x0060.0417") == []


def test_a_process_left_by_the_launcher_is_ended(tmp_path):
    """A 'rank' that leaves its launcher's session and outlives it is ended (it used to be left running)."""
    marker = tmp_path / "left-behind"
    rank = f"{sys.executable} -c 'import time; time.sleep(600)' {marker}"
    done = native.run_native(["sh", "-c", f"setsid {rank} </dev/null >/dev/null 2>&1 & sleep 1; exit 0"],
                             dict(os.environ), 60)
    assert done.returncode == 0
    deadline = time.monotonic() + 15
    while _alive(str(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(str(marker)) == []


def test_stale_event_folders_removed(tmp_path, monkeypatch):
    """A checkmpi killed by SIGKILL leaves its events folder in the temporary folder; the next run with
    progress removes those of processes no longer running, and keeps a running one's and foreign names."""
    import subprocess
    import tempfile

    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / f".checkmpi-events-{gone.pid}-abc"
    live = tmp_path / f".checkmpi-events-{os.getppid()}-def"
    other = tmp_path / ".checkmpi-events-notapid-ghi"
    for folder in (stale, live, other):
        folder.mkdir()
        (folder / "events.jsonl").write_text("{}\n")
    target = tmp_path / "kept"
    target.mkdir()
    link = tmp_path / f".checkmpi-events-{gone.pid}-link"
    link.symlink_to(target)
    calibrating = tmp_path / f".checkmpi-calibrate-{gone.pid}-xyz"  # a calibration's, killed likewise
    calibrating.mkdir()
    native.remove_stale_folders("events")
    assert not stale.exists() and calibrating.is_dir()
    assert live.is_dir() and other.is_dir() and link.is_symlink() and target.is_dir()
    native.remove_stale_folders("calibrate")
    assert not calibrating.exists()
