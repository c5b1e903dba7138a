"""The one exception the command line turns into a message and an exit code."""

from __future__ import annotations

# Exit codes of the checkmpi command (README, "The checkmpi command").
EXIT_OK = 0
EXIT_NATIVE = 1  # a native tool was not found, failed or timed out
EXIT_WRITE = 1  # an output file could not be written
EXIT_USAGE = 2  # bad options or unreadable / malformed input files
EXIT_INVALID = 3  # a strategy failed validation (results are still reported)


class CheckmpiError(Exception):
    """An error the user can act on: one line, optional detail lines, an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE, detail: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.detail = detail or []
