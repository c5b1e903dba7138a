"""Slurm across emulated nodes (issue 31): scripts/slurm-local.sh start --netns runs each slurmd inside its node's
namespaces, so srun places ranks on different hosts with TCP between them, and a campaign's weak scale-up runs on
1 and 2 nodes through sbatch and srun, its report saying on how many nodes each point ran. `stop` leaves nothing
of the nodes or the daemons. Skipped, saying why, where namespaces cannot be made, a cluster is up already, Slurm
and munge are not installed, or the daemons do not start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cluster_helpers import ours, tools_in, why_not
from conftest import REPO, checkmpi

# Starts a machine-wide resource (a Slurm cluster, emulated nodes): scripts/test.sh runs the modules marked
# so one after the other, beside the rest.
pytestmark = pytest.mark.machine

SCRIPT = REPO / "scripts" / "slurm-local.sh"
TIMEOUT = 300


def _shares() -> list[str]:
    """What the nodes must see of this machine's /tmp: the checkout and the Python that the batch script runs
    (CI's clone lies there), each node's /tmp being its own."""
    out = []
    for path in (REPO, Path(sys.prefix)):
        p = path.resolve()
        if p.parts[:2] == ("/", "tmp") and not any(str(p).startswith(s + "/") or str(p) == s for s in out):
            out += ["--share", str(p)]
    return out


@pytest.fixture(scope="module")
def slurm():
    why = why_not()
    if why:
        pytest.skip(why)
    missing = [t for t in ("slurmctld", "slurmd", "munged", "sbatch", "srun") if not shutil.which(t) and
               not Path(f"/usr/sbin/{t}").exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not found (bash scripts/setup.sh --slurm installs Slurm and munge)")
    folder = Path(tempfile.mkdtemp(prefix="checkmpi-slurm-netns-test-", dir="/var/tmp"))
    state = folder / "slurm"
    r = subprocess.run(["bash", str(SCRIPT), "start", "--nodes", "2", "--netns", *_shares(), str(state)],
                       capture_output=True, text=True, timeout=180)
    try:
        if r.returncode != 0:
            why = " / ".join(line for line in r.stderr.strip().splitlines()[-3:] if line.strip())
            pytest.skip(f"the Slurm cluster on emulated nodes did not start (exit {r.returncode}): {why}")
        conf = next(line.split("=", 1)[1] for line in r.stdout.splitlines() if line.startswith("SLURM_CONF="))
        yield {"env": {"SLURM_CONF": conf}, "folder": folder, "state": state}
    finally:
        stop = subprocess.run(["bash", str(SCRIPT), "stop", str(state)], capture_output=True, text=True,
                              timeout=180)
        shutil.rmtree(folder, ignore_errors=True)
    assert stop.returncode == 0, stop.stderr
    assert ours() == [], "emulated nodes left over after stop"
    left = subprocess.run(["pgrep", "-af", f"slurm.*{state}"], capture_output=True, text=True).stdout
    assert left == "", f"Slurm daemons left over after stop: {left}"


def _run(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def test_srun_places_ranks_on_different_hosts(slurm, halo_bin):
    env = slurm["env"]
    r = _run(env, "sinfo", "-h", "-o", "%N %T")
    assert r.stdout.split() == ["cmpi-n[0-1]", "idle"], r.stdout + r.stderr
    r = _run(env, "srun", "-N", "2", "-n", "2", "--label", "hostname")
    assert r.returncode == 0, r.stderr
    assert sorted(line.split(": ")[1] for line in r.stdout.splitlines()) == ["cmpi-n0", "cmpi-n1"]
    tools = tools_in(slurm["folder"], halo_bin)
    out = slurm["folder"] / "pp.json"
    r = _run(env, "srun", "-N", "2", "-n", "2", "--mpi=pmix", str(tools / "checkmpi-p2p"), "pingpong", "-m", "1:1024",
             "-i", "50", "--json", str(out))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "placement   : different nodes" in r.stdout
    ctx = json.loads(out.read_text())["context"]
    assert ctx["hostnames"] == ["cmpi-n0", "cmpi-n1"] and ctx["same_node"] is False


SPEC = """[campaign]
name = "scale-nodes"
executor = "slurm"
[launch]
ranks_per_node = 1
time_limit_s = 240
[halo]
strategies = ["step2", "step7"]
iters = 200
[[sweep]]
local = "16x16x16"
np = [1, 2]
"""


def test_campaign_scale_up_over_nodes(slurm, halo_bin):
    """One submission of 2 nodes, one rank per node: the point of 1 rank runs on one node, that of 2 on both;
    the scale-up table says on how many nodes each point ran."""
    folder, env = slurm["folder"], slurm["env"]
    tools = tools_in(folder, halo_bin)
    spec, cdir = folder / "scale.toml", folder / "scale"
    spec.write_text(SPEC)
    r = checkmpi("campaign", "run", str(spec), "--dir", str(cdir), "--bin", str(tools), env=env, cwd=folder,
                 timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = {p.stem: json.loads(p.read_text()) for p in (cdir / "runs").glob("*.json")}
    assert len(recs) == 4 and all(rec["status"] == "ok" for rec in recs.values()), recs
    for rec in recs.values():
        assert rec["launch"]["launcher"] == "srun --mpi=pmix"
        assert rec["hostnames"] == (["cmpi-n0"] if rec["point"]["np"] == 1 else ["cmpi-n0", "cmpi-n1"])
    report = folder / "report.json"
    r = checkmpi("campaign", "report", str(cdir), "--json", str(report), cwd=folder)
    assert r.returncode == 0, r.stderr
    (sweep,) = json.loads(report.read_text())["scaleup"]
    assert [(row["np"], row["nodes"]) for row in sweep["rows"]] == [(1, 1), (2, 2)]
    assert all(row["strategies"][s]["median_s"] > 0 for row in sweep["rows"] for s in ("step2", "step7"))
    header = next(line for line in r.stdout.splitlines() if line.strip().startswith("ranks"))
    assert header.split()[:3] == ["ranks", "grid", "nodes"]
