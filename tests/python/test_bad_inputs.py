"""Every bad input of docs/reliability.md, run as its table says: the table's
rows are this test's cases, so the document cannot drift from what the tools
do. Each row gives a command (`halo`, `p2p`: the native tools, run as MPI
singletons or on `np=N` ranks; `checkmpi`: the Python command; `VAR=value`
words before it set its environment), the exit code
and the text of the one line it must print ("TOOL: error: ..." or, with exit
0, "TOOL: warning: ..."). `<<TEXT>>` in a command is a file holding TEXT
(`\\n` for a newline); the other files it names are made by `_scratch`."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import BUILD_BIN, DATA, REPO

DOC = REPO / "docs" / "reliability.md"
# The native tools under test: build/bin, or another build's (e.g. the
# sanitizer build's: CHECKMPI_TABLE_BIN=build-asan/bin).
TOOLS = Path(os.environ.get("CHECKMPI_TABLE_BIN", BUILD_BIN)).resolve()
ROW = re.compile(r"^\| (\d+) \| (.+?) \| `(.+?)` \| (\d) \| `(.*?)` \|$")
PREFIX = {"halo": "checkmpi-halo", "p2p": "checkmpi-p2p", "checkmpi": "checkmpi"}


@dataclass
class Case:
    number: int
    what: str
    command: str
    code: int
    message: str


def cases(section: str = "") -> list[Case]:
    """The table's rows; with `section`, those under a heading holding it."""
    found, heading = [], ""
    for line in DOC.read_text().splitlines():
        if line.startswith("#"):
            heading = line
        m = ROW.match(line)
        if m and section in heading:
            unescape = lambda s: s.replace("\\|", "|")  # noqa: E731
            found.append(Case(int(m[1]), m[2], unescape(m[3]), int(m[4]), unescape(m[5])))
    return found


# CHECKMPI_TABLE_SECTION: only the rows under headings holding it (the
# sanitizer build runs the native tools' bounds rows this way).
SECTION = os.environ.get("CHECKMPI_TABLE_SECTION", "")


def _scratch(folder: Path) -> None:
    """The files rows refer to by name."""
    (folder / "ok.input").write_text("&parameters lx=8 ly=8 lz=8 itfin=2 icheck=1 /\n")
    (folder / "afile").write_text("keep me\n")
    (folder / "adir").mkdir()
    (folder / "alink").symlink_to("afile")
    os.mkfifo(folder / "apipe")
    (folder / "big.input").write_text("!" * (2 << 20) + "\n&parameters lx=8 ly=8 lz=8 /\n")
    (folder / "binary.input").write_bytes(bytes(range(256)) * 4)
    shutil.copy(DATA / "halo_4ranks.json", folder / "halo.json")
    shutil.copy(DATA / "p2p_pingpong.json", folder / "pp.json")


def run_case(case: Case, folder: Path) -> tuple[int, str, str]:
    folder.mkdir()
    _scratch(folder)
    command = case.command
    for k, text in enumerate(re.findall(r"<<(.*?)>>", command)):
        name = f"inline{k}.txt"
        (folder / name).write_text(text.replace("\\n", "\n"))
        command = command.replace(f"<<{text}>>", name, 1)
    argv = shlex.split(command)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    while re.match(r"[A-Z_]+=", argv[0]):  # VAR=value before the tool: its environment
        name, value = argv.pop(0).split("=", 1)
        env[name] = value
    np = 1
    if argv[0].startswith("np="):
        np = int(argv.pop(0)[3:])
    tool = argv.pop(0)
    env.pop("CHECKMPI_BIN", None)
    if tool == "checkmpi":
        full = [sys.executable, "-m", "checkmpi", *argv]
        env["CHECKMPI_BIN"] = str(TOOLS)
    else:
        full = [str(TOOLS / PREFIX[tool]), *argv]
        if np > 1:
            full = ["mpiexec.openmpi", "-n", str(np), "--oversubscribe", *full]
    try:
        out = subprocess.run(full, cwd=folder, env=env, capture_output=True, text=True, timeout=90,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return -1, "", "(hung: no exit within 90 s)"
    return out.returncode, out.stdout, out.stderr


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory) -> dict[int, tuple[int, str, str]]:
    """All rows at once, a few at a time (most of each is MPI start-up)."""
    if not (TOOLS / "checkmpi-halo").exists():
        pytest.fail(f"{TOOLS} is not built: run 'bash scripts/setup.sh' first")
    root = tmp_path_factory.mktemp("bad_inputs")
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {c.number: pool.submit(run_case, c, root / f"row{c.number}") for c in cases(SECTION)}
    return {n: f.result() for n, f in futures.items()}


def test_the_table_is_numbered_and_large():
    numbers = [c.number for c in cases()]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= 175


@pytest.mark.parametrize("case", cases(SECTION), ids=lambda c: f"row{c.number}")
def test_row(case: Case, outcomes):
    code, stdout, stderr = outcomes[case.number]
    tool = PREFIX[next(w for w in case.command.split() if "=" not in w)]
    assert code == case.code, f"exit {code}, expected {case.code}: {stderr[-600:]}"
    assert "Traceback" not in stderr + stdout
    kind = "error" if case.code else "warning"
    lines = [line for line in stderr.splitlines() if line.startswith(f"{tool}: {kind}:")]
    assert len(lines) == 1, f"{len(lines)} '{tool}: {kind}:' lines: {stderr[-600:]}"
    assert case.message in lines[0], lines[0]
