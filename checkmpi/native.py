"""Finding the native executables and launching them through MPI."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from checkmpi.errors import EXIT_NATIVE, CheckmpiError
from checkmpi.grid import physical_cores


@dataclass(frozen=True)
class Executable:
    path: Path
    source: str  # how it was found, said to the user


def find_executable(name: str, bin_dir: str | None = None) -> Executable:
    """--bin DIR, then $CHECKMPI_BIN, then ./build/bin, then PATH.

    An explicit --bin or CHECKMPI_BIN that lacks the tool is an error rather
    than a silent fall-back, so a typo never runs some other build.
    """
    for origin, folder in (("--bin", bin_dir), ("CHECKMPI_BIN", os.environ.get("CHECKMPI_BIN"))):
        if folder:
            candidate = Path(folder) / name
            if _is_executable(candidate):
                return Executable(candidate, f"{origin} {folder}")
            raise CheckmpiError(f"{name} not found in {origin} directory '{folder}'", EXIT_NATIVE)
    local = Path("build/bin") / name
    if _is_executable(local):
        return Executable(local, "./build/bin")
    on_path = shutil.which(name)
    if on_path:
        return Executable(Path(on_path), "PATH")
    raise CheckmpiError(f"{name} not found: looked in ./build/bin and on PATH (build it with "
                        "'bash scripts/setup.sh', or point --bin DIR or CHECKMPI_BIN at its folder)", EXIT_NATIVE)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@dataclass(frozen=True)
class Launcher:
    path: str
    flavor: str  # "openmpi", "mpich" or "unknown"
    note: str = ""  # why this launcher, when it is not the one asked for


def _version_flavor(text: str) -> str:
    if re.search(r"Open MPI|OpenRTE", text):
        return "openmpi"
    if re.search(r"HYDRA|MPICH|Intel\(R\) MPI", text):
        return "mpich"
    return "unknown"


def launcher_flavor(path: str) -> str:
    """Open MPI or MPICH (hydra), from `LAUNCHER --version`."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return _version_flavor(out.stdout + out.stderr)


def binary_flavor(exe: Path) -> str:
    """The MPI library the executable links, from ldd (unknown if ldd cannot tell)."""
    try:
        out = subprocess.run(["ldd", str(exe)], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if re.search(r"libmpich|libmpi\.so\.12\b", out):
        return "mpich"
    if re.search(r"libmpi\.so\.40\b|openmpi", out):
        return "openmpi"
    return "unknown"


def find_launcher(name: str, exe: Path) -> Launcher:
    """The launcher to use for `exe`: `name` unless it belongs to another MPI.

    A binary built with MPICH started by Open MPI's mpirun runs as N
    one-rank jobs; on Debian both launchers are installed side by side as
    mpiexec.openmpi and mpiexec.mpich, so pick the matching one.
    """
    path = shutil.which(name)
    if path is None:
        raise CheckmpiError(f"MPI launcher '{name}' not found on PATH (install Open MPI or MPICH, "
                            "or give --launcher)", EXIT_NATIVE)
    flavor = launcher_flavor(path)
    wanted = binary_flavor(exe)
    if wanted == "unknown" or flavor == wanted:
        return Launcher(path, flavor)
    specific = shutil.which(f"mpiexec.{wanted}")
    if specific is None:
        raise CheckmpiError(f"{exe} is built with {_pretty(wanted)} but '{name}' is {_pretty(flavor)}, "
                            f"and no mpiexec.{wanted} is on PATH; give --launcher", EXIT_NATIVE)
    return Launcher(specific, wanted, f"{exe.name} uses {_pretty(wanted)}, '{name}' is {_pretty(flavor)}")


def _pretty(flavor: str) -> str:
    return {"openmpi": "Open MPI", "mpich": "MPICH"}.get(flavor, "an unknown MPI")


def mpi_command(launcher: Launcher, np: int, argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment to start `argv` on `np` ranks."""
    env = dict(os.environ)
    cmd = [launcher.path, "-n", str(np)]
    if launcher.flavor == "openmpi":
        # Open MPI refuses more ranks than cores, and root, unless told;
        # MPICH's hydra needs neither.
        if np > physical_cores():
            cmd.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return cmd + argv, env


# checkmpi-halo's progress line: "[2/11] step1 (sendrecv-packx) ..."
PROGRESS = re.compile(r"\[(\d+)/(\d+)\] (\S+) \(([^)]*)\) \.\.\.")


@dataclass
class NativeRun:
    returncode: int
    stdout: str
    stderr_tail: list[str] = field(default_factory=list)
    seconds: float = 0.0


def run_native(cmd: list[str], env: dict[str, str], timeout: float | None,
               on_progress: Callable[[int, int, str, str], None] | None = None) -> NativeRun:
    """Runs an MPI job, reporting checkmpi-halo's progress lines as they appear.

    The tool prints "[i/N] id (alias) ..." and ends the line only when the
    strategy is done, so stdout is read in raw chunks, not lines. SIGINT and
    SIGTERM to checkmpi while the job runs are passed on to the whole job
    (launcher and ranks), which is waited for before checkmpi stops.
    """
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, start_new_session=True)
    except OSError as e:
        raise CheckmpiError(f"cannot start {cmd[0]}: {e.strerror}", EXIT_NATIVE) from None
    stderr_lines: deque[str] = deque(maxlen=200)

    def drain_stderr() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            stderr_lines.append(raw.decode(errors="replace").rstrip("\n"))

    reader = threading.Thread(target=drain_stderr, daemon=True)
    reader.start()
    job = _Job(proc)
    timer = threading.Timer(timeout, job.stop, (signal.SIGTERM, "timeout")) if timeout else None
    if timer:
        timer.start()
    out = bytearray()
    seen = 0
    assert proc.stdout is not None
    with _forwarding_signals(job):
        try:
            while chunk := os.read(proc.stdout.fileno(), 65536):
                out.extend(chunk)
                if on_progress:
                    text = out.decode(errors="replace")
                    for m in list(PROGRESS.finditer(text))[seen:]:
                        on_progress(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))
                        seen += 1
            proc.wait()
            job.wait_ranks()
        finally:
            if timer:
                timer.cancel()
    reader.join(timeout=5)
    elapsed = time.monotonic() - start
    if job.reason == "timeout":
        raise CheckmpiError(f"{Path(cmd[0]).name} job timed out after {timeout:g} s and was stopped",
                            EXIT_NATIVE, list(stderr_lines)[-5:])
    if job.signum:
        name = signal.Signals(job.signum).name
        raise CheckmpiError(f"stopped by {name}: the MPI job ({Path(cmd[0]).name}) was ended; files of earlier "
                            "runs are as they were", 128 + job.signum)
    return NativeRun(proc.returncode, out.decode(errors="replace"), list(stderr_lines), elapsed)


class _Job:
    """The launcher and the ranks it started. Ranks may sit in process groups
    or sessions of their own (Open MPI, MPICH), so they are found as the
    launcher's descendants when the job is stopped, signalled along with it,
    and waited for."""

    GRACE = 10.0  # seconds between the signal and SIGKILL

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.ranks: list[int] = []
        self.reason = ""  # "timeout" or "signal"
        self.signum = 0
        self.lock = threading.Lock()

    def stop(self, signum: int, reason: str) -> None:
        with self.lock:
            if self.reason:
                return
            self.reason = reason
            if reason == "signal":
                self.signum = signum
            self.ranks = _descendants(self.proc.pid)
        self._send(signum)
        self._send(signal.SIGCONT)  # a stopped rank must run to act on it
        threading.Thread(target=self._kill_later, daemon=True).start()

    def _send(self, signum: int) -> None:
        # The ranks first: a launcher that is told first may kill them outright,
        # before they remove their temporary files.
        sends = [lambda p=p: os.kill(p, signum) for p in reversed(self.ranks)]
        for send in sends + [lambda: os.killpg(self.proc.pid, signum)]:
            try:
                send()
            except (ProcessLookupError, PermissionError):
                pass

    def _kill_later(self) -> None:
        deadline = time.monotonic() + self.GRACE
        while time.monotonic() < deadline:
            if self.proc.poll() is not None and not _alive(self.ranks):
                return
            time.sleep(0.1)
        self._send(signal.SIGKILL)

    def wait_ranks(self) -> None:
        """After the launcher: until the ranks of a stopped job are gone too."""
        deadline = time.monotonic() + self.GRACE + 5
        while self.reason and _alive(self.ranks) and time.monotonic() < deadline:
            time.sleep(0.1)


@contextmanager
def _forwarding_signals(job: _Job) -> Iterator[None]:
    """SIGINT and SIGTERM stop the job (and checkmpi after it) instead of
    checkmpi alone; only the main thread can install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = lambda signum, frame: job.stop(signum, "signal")  # noqa: E731
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc (empty where there is none)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pids: list[int]) -> bool:
    """Whether any of `pids` still runs (a zombie does not)."""
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            return True
    return False


def failure(tool: str, run: NativeRun) -> CheckmpiError:
    """The error for a native run that exited non-zero: code plus the end of stderr.

    The tool's own lines ("checkmpi-halo: error: ...") come first: Open
    MPI's mpirun follows them with a banner about the exit code that would
    otherwise fill the tail.
    """
    lines = [line for line in run.stderr_tail if line.strip() and not re.fullmatch(r"-+", line.strip())]
    own = [line for line in lines if line.startswith(f"{tool}:")]
    tail = own[-4:] if own else lines[-6:]
    return CheckmpiError(f"{tool} failed with exit code {run.returncode}" + (":" if tail else " (no stderr)"),
                         EXIT_NATIVE, tail)


def say(message: str) -> None:
    print(f"checkmpi: {message}", file=sys.stderr, flush=True)
