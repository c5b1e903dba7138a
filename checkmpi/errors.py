"""The exceptions the command line turns into a message and an exit code."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Exit codes, the same in checkmpi-halo, checkmpi-p2p and the checkmpi command
# (README, "Exit codes").
EXIT_OK = 0
EXIT_FAILED = 1  # a failure during or after the run: a tool not found, failed or timed out, a file not written
EXIT_USAGE = 2  # bad input, found before anything runs: options, unreadable or malformed results files
EXIT_INVALID = 3  # a strategy or a message failed validation (results are still reported)


class CheckmpiError(Exception):
    """An error the user can act on: one line, optional detail lines, an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE, detail: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.detail = detail or []


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP outside an MPI job (while a report is drawn, say): it unwinds as Ctrl-C does, so
    files being written are removed and a run's earlier files put back, and the command says so."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


_raise_stopped.checkmpi_stop = True  # type: ignore[attr-defined]  # native.py: its own message comes first


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise Stopped where they would end the process (an ignored
    signal, as under nohup, stays ignored; a handler someone set stays)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            previous[sig] = signal.signal(sig, _raise_stopped)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
