"""Finding the native executables and launching them through MPI."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from checkmpi.atomic import pid_alive
from checkmpi.errors import EXIT_FAILED, CheckmpiError
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
            raise CheckmpiError(f"{name} not found in {origin} directory '{folder}'", EXIT_FAILED)
    local = Path("build/bin") / name
    if _is_executable(local):
        return Executable(local, "./build/bin")
    on_path = shutil.which(name)
    if on_path:
        return Executable(Path(on_path), "PATH")
    raise CheckmpiError(f"{name} not found: looked in ./build/bin and on PATH (build it with "
                        "'bash scripts/setup.sh', or point --bin DIR or CHECKMPI_BIN at its folder)", EXIT_FAILED)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@dataclass(frozen=True)
class Launcher:
    path: str
    flavor: str  # the MPI library: "openmpi", "mpich" or "unknown"
    note: str = ""  # why this launcher, when it is not the one asked for
    kind: str = "mpirun"  # "mpirun" (the library's own, mpirun or mpiexec) or "srun"
    args: tuple[str, ...] = ()  # options it always needs (srun: the PMI plugin)

    def describe(self) -> str:
        return " ".join([Path(self.path).name, *self.args])


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
                            "or give --launcher)", EXIT_FAILED)
    if Path(path).name == "srun":
        return srun_launcher(path, exe)
    flavor = launcher_flavor(path)
    if flavor == "unknown":  # once replaced by the binary's mpiexec without a word
        raise CheckmpiError(f"--launcher '{name}' is not an MPI launcher: '{path} --version' names neither Open MPI "
                            "nor MPICH (give mpirun, mpiexec or srun)")
    wanted = binary_flavor(exe)
    if wanted == "unknown" or flavor == wanted:
        return Launcher(path, flavor)
    specific = shutil.which(f"mpiexec.{wanted}")
    if specific is None:
        raise CheckmpiError(f"{exe} is built with {_pretty(wanted)} but '{name}' is {_pretty(flavor)}, "
                            f"and no mpiexec.{wanted} is on PATH; give --launcher", EXIT_FAILED)
    return Launcher(specific, wanted, f"{exe.name} uses {_pretty(wanted)}, '{name}' is {_pretty(flavor)}")


def _pretty(flavor: str) -> str:
    return {"openmpi": "Open MPI", "mpich": "MPICH"}.get(flavor, "an unknown MPI")


# The PMI plugin srun needs to start ranks of each MPI library directly.
SRUN_PLUGIN = {"openmpi": "pmix", "mpich": "pmi2"}


def srun_plugins(path: str) -> list[str]:
    """What `srun --mpi=list` offers (e.g. pmix, pmix_v4, pmi2, none)."""
    try:
        out = subprocess.run([path, "--mpi=list"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    text = out.stdout + out.stderr
    names = re.findall(r"^\s+(\w+)\s*$", text, re.MULTILINE)
    names += [v for line in re.findall(r"versions available: (.*)", text) for v in re.split(r"[,\s]+", line) if v]
    return names


def srun_launcher(path: str, exe: Path) -> Launcher:
    """srun with the PMI plugin the executable's MPI needs (PMIx for Open MPI, PMI2 for MPICH)."""
    flavor = binary_flavor(exe)
    offered = srun_plugins(path)
    wanted = [SRUN_PLUGIN[flavor]] if flavor in SRUN_PLUGIN else ["pmix", "pmi2"]
    plugin = next((p for p in wanted if p in offered), None)
    if plugin is None:
        raise CheckmpiError(f"srun cannot start {exe.name} ({_pretty(flavor)}): it needs srun --mpi="
                            f"{' or '.join(wanted)}, and this Slurm offers {', '.join(offered) or 'no plugin'} "
                            "(srun --mpi=list); use --launcher mpirun inside the allocation", EXIT_FAILED)
    return Launcher(path, flavor, kind="srun", args=(f"--mpi={plugin}",))


def mpi_command(launcher: Launcher, np: int, argv: list[str], launcher_args: list[str] | None = None, *,
                tag_output: bool = False, per_node: int | None = None) -> tuple[list[str], dict[str, str]]:
    """The command line and environment to start `argv` on `np` ranks.

    launcher_args (--mpi-args): options for the launcher, placed last before
    the program so that they can override checkmpi's; tag_output: every
    output line starts with its rank (for per-rank error tails); per_node: at
    most this many ranks per node.
    """
    env = dict(os.environ)
    cmd = [launcher.path, "-n", str(np), *launcher.args]
    if launcher.kind == "srun":
        if per_node:
            cmd += ["-N", str(math.ceil(np / per_node)), f"--ntasks-per-node={per_node}"]
        if tag_output:
            cmd.append("--label")
    elif launcher.flavor == "openmpi":
        # Open MPI refuses more ranks than cores, and root, unless told;
        # MPICH's hydra needs neither.
        if np > physical_cores():
            cmd.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        if per_node:
            cmd += ["--map-by", f"ppr:{per_node}:node"]
        if tag_output:
            cmd.append("--tag-output")
    elif launcher.flavor == "mpich":
        if per_node:
            cmd += ["-ppn", str(per_node)]
        if tag_output:
            cmd.append("-prepend-rank")
    return cmd + list(launcher_args or []) + argv, env


@dataclass(frozen=True)
class Job:
    """One MPI job of a native tool: the way every command starts one. Its command line and environment come
    from mpi_command; run() is run_native (timeouts, signals to the whole job, progress from --events)."""

    launcher: Launcher
    np: int
    argv: list[str]  # the tool and its options
    launcher_args: tuple[str, ...] = ()  # options for the launcher (--mpi-args, srun's)
    tag_output: bool = False
    per_node: int | None = None
    # Where the --events file goes: a folder every rank 0 can write and checkmpi read (on other nodes /tmp is
    # the node's own), e.g. the results' folder; None: the system's temporary folder.
    scratch: Path | None = None

    def command(self) -> tuple[list[str], dict[str, str]]:
        return mpi_command(self.launcher, self.np, self.argv, list(self.launcher_args), tag_output=self.tag_output,
                           per_node=self.per_node)

    def run(self, timeout: float | None, on_progress: Callable[[int, int, str], None] | None = None, *,
            raise_on_timeout: bool = True, stderr_lines_kept: int = 200) -> NativeRun:
        cmd, env = self.command()
        return run_native(cmd, env, timeout, on_progress, raise_on_timeout, stderr_lines_kept, self.scratch)


@dataclass
class NativeRun:
    returncode: int
    stdout: str
    stderr_tail: list[str] = field(default_factory=list)
    seconds: float = 0.0
    timed_out: bool = False  # stopped at its timeout (only returned with raise_on_timeout=False)
    # A rank's watchdog aborted the job, and the launcher had not ended WATCHDOG_GRACE s later (a node it cannot
    # reach to end its ranks): checkmpi stopped it.
    stopped_after_watchdog: bool = False


# A tool's watchdog line on stderr (tagged with its rank by --tag-output, -prepend-rank or --label, or not).
WATCHDOG_LINE = re.compile(r"^(\[[^\]]*\]<stderr>:|\[\d+\]\s|\d+:\s)?\s*checkmpi-(halo|p2p): watchdog: ")
# After a watchdog line, how long the launcher may take to end the job its MPI_Abort asked it to end: Open MPI's
# mpirun waits for every node's daemon, and one behind a cut link never answers.
WATCHDOG_GRACE = 10.0


def run_native(cmd: list[str], env: dict[str, str], timeout: float | None,
               on_progress: Callable[[int, int, str], None] | None = None,
               raise_on_timeout: bool = True, stderr_lines_kept: int = 200,
               scratch: Path | None = None) -> NativeRun:
    """Runs an MPI job, reporting the tool's progress as it goes.

    With `on_progress`, the tool (the last part of `cmd`) also gets
    `--events FILE`: it writes a JSON line there as each unit of work starts
    (core/events.hpp), which a thread follows and hands on as (index, count,
    what); standard output is only collected. SIGINT,
    SIGTERM and SIGHUP to checkmpi while the job runs are passed on to the whole job
    (launcher and ranks), which is waited for before checkmpi stops. A job
    past its timeout is stopped the same way; that is an error unless
    raise_on_timeout is False, which returns it with timed_out set. The last
    `stderr_lines_kept` lines of stderr are kept. The --events file lies in a new folder under `scratch`
    (default: the system's temporary folder).
    """
    start = time.monotonic()
    if not on_progress:
        return _run(cmd, env, timeout, raise_on_timeout, stderr_lines_kept, start)
    remove_stale_folders("events", scratch)
    with tempfile.TemporaryDirectory(prefix=f".checkmpi-events-{os.getpid()}-", dir=scratch) as folder:
        events = Path(folder) / "events.jsonl"
        follower = _EventFollower(events, on_progress)
        try:
            return _run([*cmd, "--events", str(events)], env, timeout, raise_on_timeout, stderr_lines_kept, start)
        finally:
            follower.stop()


def remove_stale_folders(kind: str, scratch: Path | str | None = None) -> None:
    """Removes the folders .checkmpi-KIND-PID-* (events, calibrate) in `scratch` (default: the temporary folder)
    of checkmpi processes no longer running here: what one killed by SIGKILL left."""
    for folder in Path(scratch or tempfile.gettempdir()).glob(f".checkmpi-{kind}-*-*"):
        m = re.fullmatch(rf"\.checkmpi-{kind}-(\d+)-.+", folder.name)
        if m and int(m.group(1)) != os.getpid() and not pid_alive(int(m.group(1))) and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)


class _EventFollower:
    """Follows a tool's --events file from a thread: each whole new line, a JSON object with "event": "start",
    goes to the callback as (index, count, what); anything else is skipped."""

    def __init__(self, path: Path, callback: Callable[[int, int, str], None]):
        self.path, self.callback = path, callback
        self.done = threading.Event()
        self.offset = 0
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        while not self.done.wait(0.1):
            self.read()

    def read(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        whole = data[:data.rfind(b"\n") + 1]
        self.offset += len(whole)
        for line in whole.splitlines():
            try:
                e = json.loads(line)
                if e.get("event") == "start":
                    self.callback(int(e["index"]), int(e["count"]), str(e["what"]))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=5)
        self.read()  # the last lines


def _run(cmd: list[str], env: dict[str, str], timeout: float | None, raise_on_timeout: bool,
         stderr_lines_kept: int, start: float) -> NativeRun:
    # Through checkmpi.supervise, which ends the job when checkmpi is gone, even by SIGKILL. The signals are
    # forwarded from before the job starts: one that comes while it starts stops it once its launcher runs.
    job = _Job()
    with _forwarding_signals(job):
        return _supervised(job, cmd, env, timeout, raise_on_timeout, stderr_lines_kept, start)


def _supervised(job: _Job, cmd: list[str], env: dict[str, str], timeout: float | None, raise_on_timeout: bool,
                stderr_lines_kept: int, start: float) -> NativeRun:
    status_r, status_w = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "checkmpi.supervise", str(status_w), str(os.getpid()), *cmd],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, start_new_session=True, pass_fds=(status_w,))
    except OSError as e:
        os.close(status_r)
        raise CheckmpiError(f"cannot start {cmd[0]}: {e.strerror}", EXIT_FAILED) from None
    finally:
        os.close(status_w)
    with os.fdopen(status_r, "rb") as status:
        why = status.read().decode(errors="replace")
    if why:
        proc.communicate()
        raise CheckmpiError(f"cannot start {cmd[0]}: {why}", EXIT_FAILED)
    job.started(proc)  # its launcher runs: a signal already come stops it now
    stderr_lines: deque[str] = deque(maxlen=stderr_lines_kept)
    aborted: list[threading.Timer] = []  # the watchdog's follow-up, once a rank printed its line

    def drain_stderr() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            stderr_lines.append(line)
            if not aborted and WATCHDOG_LINE.match(line):
                aborted.append(threading.Timer(WATCHDOG_GRACE, job.stop, (signal.SIGTERM, "watchdog")))
                aborted[0].daemon = True
                aborted[0].start()

    reader = threading.Thread(target=drain_stderr, daemon=True)
    reader.start()
    timer = threading.Timer(timeout, job.stop, (signal.SIGTERM, "timeout")) if timeout else None
    if timer:
        timer.start()
    out = bytearray()
    assert proc.stdout is not None
    try:
        while chunk := os.read(proc.stdout.fileno(), 65536):
            out.extend(chunk)
        proc.wait()
        job.wait_ranks()
    finally:
        if timer:
            timer.cancel()
    reader.join(timeout=5)
    for t in aborted:
        t.cancel()
    elapsed = time.monotonic() - start
    timed_out = job.reason == "timeout"
    if timed_out and raise_on_timeout:
        raise CheckmpiError(f"{Path(cmd[0]).name} job timed out after {timeout:g} s and was stopped",
                            EXIT_FAILED, list(stderr_lines)[-5:])
    if job.signum:
        # A caller's own handler (a campaign turns SIGTERM into an interrupt)
        # gets the signal once the job is gone; checkmpi's own (errors.Stopped)
        # would only replace this message.
        previous = job.previous.get(job.signum)
        if callable(previous) and previous is not signal.default_int_handler and \
                not getattr(previous, "checkmpi_stop", False):
            previous(job.signum, None)
        name = signal.Signals(job.signum).name
        raise CheckmpiError(f"stopped by {name}: the MPI job ({Path(cmd[0]).name}) was ended; files of earlier "
                            "runs are as they were", 128 + job.signum)
    if job.reason == "watchdog":
        stderr_lines.append(f"checkmpi: the job did not end within {WATCHDOG_GRACE:g} s of a rank's watchdog "
                            "(its launcher waited for a node it cannot reach): stopped")
    return NativeRun(proc.returncode, out.decode(errors="replace"), list(stderr_lines), elapsed, timed_out,
                     job.reason == "watchdog")


class _Job:
    """The launcher and the ranks it started. Ranks may sit in process groups
    or sessions of their own (Open MPI, MPICH), so they are found as the
    launcher's descendants when the job is stopped, signalled along with it,
    and waited for."""

    GRACE = 10.0  # seconds between the signal and SIGKILL

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None  # until its launcher runs
        self.ranks: list[int] = []
        self.reason = ""  # "timeout", "signal" or "watchdog"
        self.signum = 0
        self.previous: dict = {}  # the handlers replaced while the job runs
        self.lock = threading.Lock()

    def started(self, proc: subprocess.Popen) -> None:
        """The supervisor runs the launcher now; a stop asked for before is carried out."""
        with self.lock:
            self.proc = proc
            pending = self.reason
        if pending:
            self._stop(signal.SIGTERM if not self.signum else self.signum)

    def stop(self, signum: int, reason: str) -> None:
        with self.lock:
            if self.reason:
                return
            self.reason = reason
            if reason == "signal":
                self.signum = signum
            if self.proc is None:  # not started yet: started() stops it
                return
        self._stop(signum)

    def _stop(self, signum: int) -> None:
        assert self.proc is not None
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
    """SIGINT, SIGTERM and SIGHUP stop the job (and checkmpi after it) instead of
    checkmpi alone; only the main thread can install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = lambda signum, frame: job.stop(signum, "signal")  # noqa: E731
    previous = job.previous = {sig: signal.signal(sig, handler)
                               for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
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
    own = [line for line in lines if line.startswith((f"{tool}:", "checkmpi: the job did not end"))]
    tail = own[-4:] if own else lines[-6:]
    return CheckmpiError(f"{tool} failed with exit code {run.returncode}" + (":" if tail else " (no stderr)"),
                         EXIT_FAILED, tail)


def say(message: str) -> None:
    """One message on stderr; on a terminal, or with COLUMNS set, wrapped to its width (a log keeps it whole)."""
    if not (sys.stderr.isatty() or os.environ.get("COLUMNS", "").isdigit()):
        print(f"checkmpi: {message}", file=sys.stderr, flush=True)
        return
    width = shutil.get_terminal_size((80, 24)).columns
    lines = textwrap.wrap(f"checkmpi: {message}", width=max(width, 40), subsequent_indent="  ",
                          break_long_words=False, break_on_hyphens=False) or ["checkmpi:"]
    print("\n".join(lines), file=sys.stderr, flush=True)
