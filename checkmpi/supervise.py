"""The keeper of one MPI job: `python -m checkmpi.supervise STATUS_FD CHECKMPI_PID COMMAND...`.

checkmpi starts every MPI job through this small process instead of starting
the launcher itself. It becomes a child subreaper (prctl), so ranks that
leave their launcher's process tree, or outlive it, stay below it; it starts
the launcher and, when checkmpi is gone (even by SIGKILL, which no handler
sees), ends the whole job: its descendants get SIGTERM, then SIGKILL after
GRACE seconds. It exits as the launcher did (its code or its signal).
SIGINT, SIGTERM and SIGHUP are checkmpi's to pass on (native._Job), so it
ignores them while the launcher runs.

STATUS_FD is a pipe to checkmpi: closed empty once the launcher started, or
carrying why it could not start.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE = 3.0
POLL = 0.05


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: no subreaper, the parent watch still works
        pass


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, parents before children, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def _reap() -> dict[int, int]:
    """Statuses of every child that ended, by pid (orphaned ranks end up as children too)."""
    ended = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended[pid] = status


def _end_all() -> None:
    """SIGTERM to every descendant (the deepest first: ranks before their launcher), SIGKILL after GRACE."""
    deadline = time.monotonic() + GRACE
    signum = signal.SIGTERM
    while True:
        _reap()
        below = descendants(os.getpid())
        if not below:
            return
        for pid in reversed(below):
            for sig in (signum, signal.SIGCONT):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        if time.monotonic() > deadline:
            signum = signal.SIGKILL
        time.sleep(POLL)


def main(argv: list[str]) -> int:
    status_fd, parent, cmd = int(argv[0]), int(argv[1]), argv[2:]
    if os.getppid() != parent:  # checkmpi was gone before this started
        return 137
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    os.set_inheritable(status_fd, False)  # the launcher must not hold it open
    try:
        # The launcher gets the default handlers back (an ignored signal stays ignored across exec).
        launcher = os.posix_spawnp(cmd[0], cmd, os.environ, setsigdef=(signal.SIGINT, signal.SIGTERM,
                                                                      signal.SIGHUP))
    except OSError as e:
        os.write(status_fd, (e.strerror or str(e)).encode())
        return 127
    os.close(status_fd)
    status = None
    while True:
        ended = _reap()
        if launcher in ended:
            status = ended[launcher]
        if os.getppid() != parent:  # checkmpi is gone: nobody else will stop the job
            _end_all()
            return 137
        if status is not None:
            break
        time.sleep(POLL)
    # The launcher has ended; a rank it left behind (it reparents to us) gets GRACE seconds, then is ended.
    deadline = time.monotonic() + GRACE
    while descendants(os.getpid()) and time.monotonic() < deadline and os.getppid() == parent:
        _reap()
        time.sleep(POLL)
    _end_all()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
