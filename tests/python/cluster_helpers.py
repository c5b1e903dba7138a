"""What the tests across emulated nodes share (issue 31): whether namespaces can be made here, a cluster of
scripts/cluster-local.sh started for a module and stopped whatever happens (checked to leave nothing), and the
tools copied where every node sees them. One cluster at a time on a machine: a test that finds one up skips."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "cluster-local.sh"
TIMEOUT = 120


def ours() -> list[str]:
    """The namespaces and links of a cluster-local cluster that exist now."""
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return ([n for n in names if n.startswith("cmpi-n")] +
            [line.split(": ")[1].split("@")[0] for line in links.splitlines() if ": cmpi-" in line])


def why_not() -> str | None:
    """Why no cluster can be made here (None: it can)."""
    if os.geteuid() != 0:
        return "not root: network namespaces need root"
    if not shutil.which("ip") or not shutil.which("unshare") or not shutil.which("taskset"):
        return "ip, unshare or taskset not found"
    probe = "cmpi-probe"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"'ip netns add' fails here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    if ours():
        return f"a cluster is up already ({' '.join(ours())}); scripts/cluster-local.sh stop removes it"
    return None


def exports(stdout: str) -> dict[str, str]:
    """The `export NAME=VALUE` lines cluster-local.sh start prints."""
    pairs = dict(line.removeprefix("export ").split("=", 1) for line in stdout.splitlines()
                 if line.startswith("export "))
    return {k: v.strip("'") for k, v in pairs.items()}


@contextmanager
def cluster(nodes: int, prefix: str) -> Iterator[dict]:
    """A cluster of `nodes` nodes with its state and a folder for the test under /var/tmp (each node has its own
    /tmp): {"env", "folder", "hostfile", "script"}; stopped at the end, and checked to leave nothing."""
    why = why_not()
    if why:
        pytest.skip(why)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    env = {**os.environ, "CHECKMPI_CLUSTER_DIR": str(folder / "state")}
    try:
        r = subprocess.run(["bash", str(SCRIPT), "start", "--nodes", str(nodes)], capture_output=True, text=True,
                           env=env, timeout=TIMEOUT)
        assert r.returncode == 0, r.stderr
        env.update(exports(r.stdout))
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        yield {"env": env, "folder": folder, "hostfile": env["CHECKMPI_CLUSTER_HOSTFILE"], "script": SCRIPT}
    finally:
        r = subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, text=True, env=env, timeout=TIMEOUT)
        shutil.rmtree(folder, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    assert ours() == [], "left over after stop"
    bridges = subprocess.run(["ip", "link", "show", "type", "bridge"], capture_output=True, text=True).stdout
    assert "cmpi-br0" not in bridges


def tools_in(folder: Path, build: Path) -> Path:
    """The tools where every node sees them: a node has its own /tmp, and a clone (CI's) may lie under /tmp."""
    out = folder / "bin"
    out.mkdir(exist_ok=True)
    for tool in ("checkmpi-halo", "checkmpi-p2p"):
        shutil.copy2(build / tool, out / tool)
    return out


def script(c: dict, *args: str) -> subprocess.CompletedProcess:
    """scripts/cluster-local.sh ARGS on the cluster `c` (link, rate, exec, status)."""
    return subprocess.run(["bash", str(c["script"]), *args], capture_output=True, text=True, env=c["env"],
                          timeout=TIMEOUT)
