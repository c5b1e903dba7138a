"""Across emulated nodes (issue 31): scripts/cluster-local.sh starts two nodes (network namespaces on a bridge, real
TCP between them); checkmpi p2p pingpong --hostfile runs across them (bw, loggp and nbc too), checkmpi-halo
--strategy all validates every row on them and records where each direction's neighbours are; stop leaves nothing
behind. Skipped, saying why, where namespaces cannot be made (not root, no `ip netns`) or a cluster is up already."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cluster_helpers import cluster as cluster_of
from cluster_helpers import tools_in
from conftest import checkmpi

from checkmpi.results import load

# Starts a machine-wide resource (a Slurm cluster, emulated nodes): scripts/test.sh runs the modules marked
# so one after the other, beside the rest.
pytestmark = pytest.mark.machine

TIMEOUT = 120


@pytest.fixture(scope="module")
def cluster():
    with cluster_of(2, "checkmpi-cluster-test-") as c:
        yield c


def _ranks_per_cpu(cluster, ranks: dict[str, int]) -> float:
    """The busiest CPU's ranks, from the cluster's table of nodes (name, address, CPU) and the ranks on each."""
    load: dict[str, int] = {}
    for line in (Path(cluster["env"]["CHECKMPI_CLUSTER_DIR"]) / "nodes").read_text().splitlines():
        name, _, cpu = line.split()
        load[cpu] = load.get(cpu, 0) + ranks.get(name, 0)
    return float(max(load.values()))


@pytest.fixture(scope="module")
def node_bin(cluster, halo_bin) -> Path:
    return tools_in(cluster["folder"], halo_bin)


def test_p2p_pingpong_across_nodes(cluster, node_bin):
    out = cluster["folder"] / "pp.json"
    r = checkmpi("p2p", "pingpong", "--bin", str(node_bin), "--hostfile", cluster["hostfile"], "-m", "1:4096",
                 "--iters", "200", "--json", str(out), "--no-report", "--timeout", "60", env=cluster["env"],
                 cwd=cluster["folder"], timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert "placement                different nodes" in r.stdout
    assert "2 on 2 node(s)" in r.stdout
    run = load(out)
    assert run.context["nodes"] == 2
    assert sorted(run.context["hostnames"]) == ["cmpi-n0", "cmpi-n1"]
    assert run.context["same_node"] is False
    assert not list(cluster["folder"].glob(".checkmpi-events-*"))  # the job's temporary folder went away


def test_halo_all_strategies_across_nodes(cluster, node_bin):
    out = cluster["folder"] / "halo.json"
    cmd = ["mpirun", "-n", "2", "--hostfile", cluster["hostfile"], str(node_bin / "checkmpi-halo"), "--no-input",
           "--size", "32x32x32", "--procs", "2x1x1", "--itfin", "10", "--icheck", "5", "--strategy", "all",
           "--json", str(out), "--outdir", str(cluster["folder"] / "halo")]
    r = subprocess.run(cmd, capture_output=True, text=True, env=cluster["env"], cwd=cluster["folder"],
                       timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "ranks          : 2 on 2 node(s), at most 1 per node" in r.stdout
    assert "neighbours     : x off node, y self, z self" in r.stdout
    run = load(out)  # schema-checked
    doc = json.loads(out.read_text())
    assert doc["context"]["neighbours"] == {
        "x": {"self": 0, "on_node": 0, "off_node": 4, "where": "off node"},
        "y": {"self": 4, "on_node": 0, "off_node": 0, "where": "self"},
        "z": {"self": 4, "on_node": 0, "off_node": 0, "where": "self"}}
    # Both nodes run on this machine's kernel; each rank may run on its node's one CPU (node K on CPU K mod CPUs).
    assert doc["context"]["machines"] == 1
    assert doc["context"]["ranks_per_cpu"] == pytest.approx(_ranks_per_cpu(cluster, {"cmpi-n0": 1, "cmpi-n1": 1}))
    rows = [s for s in run.ran()]
    assert len(rows) >= 19, [s.id for s in rows]
    assert all(s.valid for s in rows), [s.id for s in rows if not s.valid]


@pytest.mark.parametrize("mode,options", [("bw", ["-m", "1024:4096", "-i", "20"]), ("loggp", ["-m", "1024:2048"]),
                                          ("nbc", ["-m", "1024:1024", "-i", "10"])])
def test_p2p_modes_see_different_nodes(cluster, node_bin, mode, options):
    out = cluster["folder"] / f"{mode}.json"
    cmd = ["mpirun", "-n", "2", "--hostfile", cluster["hostfile"], str(node_bin / "checkmpi-p2p"), mode, *options,
           "--json", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=cluster["env"], cwd=cluster["folder"],
                       timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "placement   : different nodes" in r.stdout
    assert "ranks       : 2 on 2 node(s)" in r.stdout
    assert load(out).context["same_node"] is False


def test_halo_two_ranks_per_node(cluster, node_bin):
    """At a node's edge one x neighbour shares the node and the other does not: shm-window reads one halo from
    the window and gets the other by message (it hung here, each rank waiting for a message its neighbour read
    from the window instead)."""
    out = cluster["folder"] / "halo4.json"
    cmd = ["mpirun", "-n", "4", "--host", "cmpi-n0:2,cmpi-n1:2", str(node_bin / "checkmpi-halo"), "--no-input",
           "--size", "32x16x16", "--procs", "4x1x1", "--itfin", "10", "--icheck", "5", "--strategy", "all",
           "--json", str(out), "--outdir", str(cluster["folder"] / "halo4")]
    r = subprocess.run(cmd, capture_output=True, text=True, env=cluster["env"], cwd=cluster["folder"],
                       timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "ranks          : 4 on 2 node(s)" in r.stdout and "neighbours     : x 4 of 8 off node, y self" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["context"]["neighbours"]["x"] == {"self": 0, "on_node": 4, "off_node": 4, "where": "mixed"}
    assert doc["context"]["ranks_per_cpu"] == pytest.approx(_ranks_per_cpu(cluster, {"cmpi-n0": 2, "cmpi-n1": 2}))
    assert "OVERSUBSCRIBED" in r.stdout  # two ranks on a node of one CPU
    rows = load(out).ran()
    assert "shm-window" in [s.id for s in rows] and len(rows) >= 19
    assert all(s.valid for s in rows), [(s.id, s.error) for s in rows if not s.valid]


def test_calibrate_across_nodes_measures_the_off_node_link(cluster, node_bin):
    """checkmpi calibrate --hostfile: what runs on one node runs on the first (both ping-pong ranks there), the
    off-node link between the first two, barriers across the nodes; the node's cores are its one CPU; predict then
    times messages between nodes on the measured link, without the stand-in's warning."""
    out = cluster["folder"] / "machine.json"
    r = checkmpi("calibrate", "--quick", "--np", "2", "--hostfile", cluster["hostfile"], "--bin", str(node_bin),
                 "--blocks", "8x8x8", "--local", "8x8x8", "-o", str(out), "--timeout", "150", env=cluster["env"],
                 cwd=cluster["folder"], timeout=TIMEOUT + 60)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["context"]["nodes"] == 2 and doc["context"]["cores_per_node"] == 1
    results = Path(doc["context"]["results"])
    intra, inter = (json.loads((results / f"{name}.json").read_text())["context"] for name in ("pingpong",
                                                                                               "inter-pingpong"))
    assert intra["hostnames"] == ["cmpi-n0", "cmpi-n0"] and inter["hostnames"] == ["cmpi-n0", "cmpi-n1"]
    assert doc["links"]["inter"] is not None and "inter-pingpong.json" in doc["links"]["inter"]["source"]
    # TCP between namespaces against shared memory: the first segment's latency is the larger.
    assert doc["links"]["inter"]["hockney"][0]["alpha"] > doc["links"]["intra"]["hockney"][0]["alpha"]
    assert [(p["nodes"], p["ranks_per_node"], p["ranks"]) for p in doc["barrier_across"]["points"]] == [
        (2, 1, 2), (2, 2, 4)]
    # The exchange's wait with one rank on each of two nodes, beside the node's own with two.
    assert doc["exchange"]["across"]["nodes"] == 2 and [p["ranks"] for p in doc["exchange"]["points"]] == [2]
    pred = cluster["folder"] / "predict.json"
    r = checkmpi("predict", "--machine", str(out), "--procs", "2x1x1", "--local", "32x32x32", "--ranks-per-node", "1",
                 "--strategy", "step7", "--json", str(pred), "--bin", str(node_bin), cwd=cluster["folder"])
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr and json.loads(pred.read_text())["off_node_link"] == "measured"
    # Turns, the node's one CPU taken by 2 ranks: on the node, and across nodes with 2 ranks on each of 2 (whose
    # partners wait for their own CPU); a prediction over nodes takes the latter, one on a node the former.
    turns = doc["turns"]
    assert [p["ranks"] for p in turns["points"]] == [2] and turns["across"]["nodes"] == 2
    assert [(p["ranks"], p["ranks_per_node"]) for p in turns["across"]["points"]] == [(2, 2)]
    spans = json.loads((results / "turns-2n-2-1.json").read_text())["context"]["hostnames"]
    assert sorted(set(spans)) == ["cmpi-n0", "cmpi-n1"] and len(spans) == 4
    for procs, where in (("2x1x1", turns["points"][0]), ("4x1x1", turns["across"]["points"][0])):
        r = checkmpi("predict", "--machine", str(out), "--procs", procs, "--local", "8x8x8", "--ranks-per-node", "2",
                     "--strategy", "step7", "--json", str(pred), "--bin", str(node_bin), cwd=cluster["folder"])
        assert r.returncode == 0, r.stderr
        row = json.loads(pred.read_text())["predictions"][0]
        assert row["turns"] == pytest.approx(where["all-at-once"] * row["work"]), procs
