"""The one exception the command line turns into a message and an exit code."""

from __future__ import annotations

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
