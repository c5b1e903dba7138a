"""Shared helpers: the fixture files, the built native tools, running `checkmpi`."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
BUILD_BIN = REPO / "build" / "bin"
MPICH_BIN = REPO / "build-mpich" / "bin"

# Every MPI job a test starts is bounded twice: by checkmpi's own --timeout
# and by the subprocess timeout here, so a hang fails instead of blocking CI.
MPI_TIMEOUT = 240

# pytest-xdist's workers set COLUMNS and LINES (80x24), which makes checkmpi wrap its messages as on a
# terminal; the tests see the environment of a plain run, where a log keeps each message whole.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def checkmpi(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             timeout: float = MPI_TIMEOUT) -> Result:
    """Runs `python -m checkmpi ARGS` (the same code as the console script)."""
    full_env = dict(os.environ)
    full_env.pop("CHECKMPI_BIN", None)
    full_env.update(env or {})
    out = subprocess.run([sys.executable, "-m", "checkmpi", *args], cwd=cwd, env=full_env, capture_output=True,
                         text=True, timeout=timeout)
    return Result(out.returncode, out.stdout, out.stderr)


def assert_clean_error(result: Result, code: int, *fragments: str) -> None:
    """A failure as the issue asks: non-zero code, one 'checkmpi: error:' line, no traceback."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("checkmpi: error:")]
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


@pytest.fixture(scope="session")
def halo_bin() -> Path:
    """The Open MPI build of checkmpi-halo; e2e tests need it (scripts/setup.sh builds it)."""
    exe = BUILD_BIN / "checkmpi-halo"
    if not exe.exists():
        pytest.fail(f"{exe} is not built: run 'bash scripts/setup.sh' first")
    return BUILD_BIN


UNIT = {"s": 1.0, "ms": 1e3, "us": 1e6}
