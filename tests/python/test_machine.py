"""The machine profile (checkmpi/machine.py, schema checkmpi.machine/2) and
`checkmpi calibrate`: a profile recorded from a real calibration loads and
holds sane values; bad files are refused with one line (exit 2); the lookup
helpers interpolate as docs/model.md says; an end-to-end quick calibration
writes a profile that validates."""

from __future__ import annotations

import copy
import json
import os
import re
import math
from pathlib import Path

import pytest
from conftest import DATA, assert_clean_error, checkmpi

from checkmpi import calibrate as C
from checkmpi import calibrate_entries as E
from checkmpi.catalog import rows_of_run
from checkmpi.errors import CheckmpiError
from checkmpi.grid import physical_cores
from checkmpi.machine import KERNELS, load_machine, machine_of
from checkmpi.model import kernel_of, predict
from checkmpi.report import case_of
from checkmpi.results import load
from checkmpi.tables import measured_total

PROFILE = DATA / "profiles" / "machine_2ranks.json"  # apart from the results files, which tests read all at once


def positive(x: float) -> bool:
    return math.isfinite(x) and x > 0


def check_profile(path: Path) -> None:
    """What a calibration on one node with 2 ranks must hold."""
    m = load_machine(path)
    assert m.context["ranks"] == 2 and m.context["nodes"] == 1 and m.context["ranks_per_node"] == 2
    assert m.inter is None
    segs = m.intra.hockney
    assert segs[0].min_size == 0 and [s.min_size for s in segs] == sorted(s.min_size for s in segs)
    assert all(positive(s.beta) and s.alpha >= 0 and math.isfinite(s.alpha) for s in segs)
    assert m.intra.loggp is not None and all(math.isfinite(v) and v >= 0 for v in vars(m.intra.loggp).values())
    assert positive(m.self_exchange.beta) and m.self_exchange.alpha >= 0
    assert [b.ranks for b in m.barrier] == [2] and positive(m.barrier[0].seconds)
    assert m.datatype is not None and m.datatype.o >= 0 and m.datatype.O >= 0
    assert [c.ranks for c in m.memory.copy] == [1, 2] and all(positive(c.bandwidth) for c in m.memory.copy)
    host = m.pack("host")
    assert host is not None and host.local == (16, 16, 16)
    for d in "xyz":
        assert positive(host.direction(d).pack) and positive(host.direction(d).unpack)
    assert m.context["backend"] == "host" and m.pack_cuda is None
    for source in (m.intra.source, m.self_exchange.source, m.memory.source, host.source, m.datatype.source):
        assert source.startswith(("checkmpi-p2p ", "checkmpi-halo ")), source
    assert m.intra.time(1000) > m.intra.time(1) > 0
    assert m.compute is not None and m.compute.local == (16, 16, 16)
    for kind in KERNELS:
        assert [c.ranks for c in m.compute.rates[kind].copy] == [1, 2]
        assert all(positive(c.bandwidth) for c in m.compute.rates[kind].copy)
    # The blocks: --quick's 8^3 and the profile's own 16^3, each with 1 and 2 ranks at once; the reference block's
    # rates are the profile's own.
    assert m.blocks is not None and [p.local for p in m.blocks.points] == [(8, 8, 8), (16, 16, 16)]
    assert [p.bytes for p in m.blocks.points] == [3 * 10 ** 3 * 4, 3 * 18 ** 3 * 4]
    for point in m.blocks.points:
        assert [k for k, _ in point.by_ranks] == [1, 2]
        for _, r in point.by_ranks:
            assert positive(r.copy) and all(positive(r.compute[k]) for k in KERNELS)
            assert all(positive(r.x.pack) and positive(r.z.unpack) for r in (r,))
    own = dict(m.blocks.points[1].by_ranks)
    assert [own[k].copy for k in (1, 2)] == [c.bandwidth for c in m.memory.copy]
    assert [own[k].compute["masked"] for k in (1, 2)] == [c.bandwidth for c in m.compute.rates["masked"].copy]
    assert own[2].y == host.y
    assert m.exchange is not None and [w.ranks for w in m.exchange.points] == [2]
    assert all(math.isfinite(w) and w >= 0 for w in (m.exchange.points[0].by_direction,
                                                     m.exchange.points[0].all_at_once))
    assert m.exchange.source.startswith("checkmpi-halo ") and "--sync none" in m.exchange.source


def test_recorded_profile_loads_with_sane_values():
    check_profile(PROFILE)


def test_recorded_profile_matches_its_sources():
    """Numbers come from the tools' results, not from anywhere else: the pack bandwidth is payload / timer."""
    doc = json.loads(PROFILE.read_text())
    assert doc["links"]["intra"]["source"].count("machine/") == 2  # pingpong and loggp results
    m = load_machine(PROFILE)
    assert m.barrier[0].seconds > 0 and "barrier" in doc["barrier"][0]["source"]


def profile(**changes) -> dict:
    doc = copy.deepcopy(json.loads(PROFILE.read_text()))
    doc.update(changes)
    return doc


def write(tmp_path: Path, doc: object, text: str | None = None) -> Path:
    path = tmp_path / "m.json"
    path.write_text(text if text is not None else json.dumps(doc))
    return path


def refused(path: Path, *fragments: str) -> None:
    with pytest.raises(CheckmpiError) as e:
        load_machine(path)
    assert e.value.code == 2 and "\n" not in e.value.message
    for f in fragments:
        assert f in e.value.message, e.value.message


def test_bad_files_are_refused_with_one_line(tmp_path):
    refused(tmp_path / "none.json", "does not exist")
    refused(tmp_path, "is a directory")
    refused(write(tmp_path, None, "{not json"), "is not valid JSON")
    refused(write(tmp_path, [1, 2]), "not a checkmpi machine profile")
    # A profile of version 1: its overlap kernels were one-pass ones, and it has no blocks.
    refused(write(tmp_path, profile(schema="checkmpi.machine/1")), "checkmpi.machine/1", "checkmpi.machine/2",
            "checkmpi calibrate")
    refused(write(tmp_path, json.loads((DATA / "p2p_pingpong.json").read_text())), "checkmpi.p2p/2")
    doc = profile()
    del doc["memory"]
    refused(write(tmp_path, doc), "memory is missing")
    doc = profile()
    doc["links"]["intra"]["hockney"][0]["beta"] = 0
    refused(write(tmp_path, doc), "links.intra.hockney[0].beta")
    doc = profile()
    doc["links"]["intra"]["hockney"] = []
    refused(write(tmp_path, doc), "links.intra.hockney")
    doc = profile()
    doc["barrier"] = [{"ranks": 4, "seconds": 1e-6}, {"ranks": 2, "seconds": 1e-6}]
    refused(write(tmp_path, doc), "barrier is not sorted by ranks")
    doc = profile()
    doc["compute"]["one-pass"] = doc["compute"]["one-pass"][::-1]
    refused(write(tmp_path, doc), "compute.one-pass is not sorted by ranks")
    doc = profile()
    del doc["blocks"]
    refused(write(tmp_path, doc), "blocks is missing")
    doc = profile()
    doc["blocks"]["points"] = doc["blocks"]["points"][::-1]
    refused(write(tmp_path, doc), "blocks.points is not sorted by bytes")
    doc = profile()
    del doc["blocks"]["points"][0]["by_ranks"][0]["compute"]["masked-one-pass"]
    refused(write(tmp_path, doc), "masked-one-pass")
    doc = profile()
    doc["exchange"]["points"] = doc["exchange"]["points"] * 2
    refused(write(tmp_path, doc), "exchange.points is not sorted by ranks")
    doc = profile()
    doc["exchange"]["points"][0]["all_at_once"]["wait"] = -1e-6
    refused(write(tmp_path, doc), "exchange.points[0].all_at_once.wait")
    doc = profile()
    doc["memory"]["copy"][0]["bandwidth"] = -1.0
    refused(write(tmp_path, doc), "memory.copy[0].bandwidth")
    doc = profile()
    doc["context"]["backend"] = "opencl"
    refused(write(tmp_path, doc), "context.backend")
    text = re.sub(r'"alpha": [0-9.eE+-]+', '"alpha": NaN', PROFILE.read_text(), count=1)
    refused(write(tmp_path, None, text), "links.intra.hockney[0].alpha is NaN, not a finite number")


def test_lookups_interpolate_as_documented(tmp_path):
    doc = profile()
    doc["links"]["intra"]["hockney"] = [{"min_size": 0, "max_size": 1024, "alpha": 1e-6, "beta": 1e9},
                                        {"min_size": 2048, "max_size": 65536, "alpha": 4e-6, "beta": 1e10}]
    doc["barrier"] = [{"ranks": 2, "seconds": 1e-6}, {"ranks": 4, "seconds": 2e-6}, {"ranks": 8, "seconds": 4e-6}]
    doc["memory"]["copy"] = [{"ranks": 1, "bandwidth": 20e9}, {"ranks": 3, "bandwidth": 10e9}]
    m = load_machine(write(tmp_path, doc))
    assert m.intra.time(1000) == pytest.approx(1e-6 + 1000 / 1e9)
    assert m.intra.time(1500) == pytest.approx(4e-6 + 1500 / 1e10)  # between segments: the next one
    assert m.intra.time(1 << 20) == pytest.approx(4e-6 + (1 << 20) / 1e10)  # past the last: the last
    assert m.link(same_node=False) is m.intra  # one node: no inter-node link measured
    assert m.barrier_seconds(1) == 0.0
    assert m.barrier_seconds(2) == pytest.approx(1e-6)
    assert m.barrier_seconds(6) == pytest.approx(2e-6 + math.log2(6 / 4) * 2e-6)
    assert m.barrier_seconds(64) == pytest.approx(4e-6 + 3 * 2e-6)  # last per-doubling step, three doublings
    assert m.memory.bandwidth(1) == 20e9 and m.memory.bandwidth(2) == pytest.approx(15e9)
    assert m.memory.bandwidth(16) == 10e9
    assert m.self_exchange.time(0) == m.self_exchange.alpha
    done = {"strategy": "s", "seconds": 0.0, "links": 0.0, "completions": 1}
    doc["exchange"]["points"] = [{"ranks": r, "by_direction": dict(done, wait=d), "all_at_once": dict(done, wait=a)}
                                 for r, d, a in ((2, 1e-6, 2e-6), (4, 3e-6, 4e-6), (16, 5e-6, 1e-6))]
    m = load_machine(write(tmp_path, doc))
    assert m.exchange_wait(1, True) == 1e-6 and m.exchange_wait(2, False) == 2e-6
    assert m.exchange_wait(8, True) == pytest.approx(4e-6) and m.exchange_wait(8, False) == pytest.approx(2.5e-6)
    assert m.exchange_wait(1000, True) == 5e-6  # past the last: the last
    del doc["exchange"]  # a profile from before the exchange was measured: no wait
    assert load_machine(write(tmp_path, doc)).exchange_wait(4, True) == 0.0
    # Blocks: at a block linear in ranks between its rank counts, between blocks log-linear in the working set,
    # the nearest outside them.
    def rates(copy: float) -> dict:
        direction = {"pack": copy / 10, "unpack": copy / 20}
        return {"copy": copy, "compute": {k: copy / 2 for k in KERNELS}, "x": direction, "y": direction,
                "z": direction, "overlap": {"interior": copy / 1e11, "masked": 0.0}, "window_wait": copy / 1e16}

    doc["blocks"]["points"] = [
        {"local": [8, 8, 8], "bytes": 10 ** 6, "by_ranks": [{"ranks": 1, **rates(4e10)}, {"ranks": 3, **rates(2e10)}]},
        {"local": [64, 64, 64], "bytes": 10 ** 8, "by_ranks": [{"ranks": 1, **rates(1e10)}]}]
    blocks = load_machine(write(tmp_path, doc)).blocks
    assert blocks.at(10 ** 6, 1).copy == 4e10 and blocks.at(10 ** 6, 2).copy == pytest.approx(3e10)
    assert blocks.at(10 ** 5, 1).copy == 4e10 and blocks.at(10 ** 9, 4).copy == 1e10  # outside: the nearest
    assert blocks.at(10 ** 7, 1).copy == pytest.approx(2e10)  # halfway in log(bytes): the geometric mean
    assert blocks.at(10 ** 7, 1).compute["interior"] == pytest.approx(1e10)
    assert blocks.at(10 ** 7, 1).x.unpack == pytest.approx(1e9)
    assert blocks.at(10 ** 7, 1).x.mpi_pack is None
    # The overlap's hiding and the window's wait linearly between blocks (halfway: the mean), not geometrically.
    assert blocks.at(10 ** 7, 1).overlap["interior"] == pytest.approx(0.25)
    assert blocks.at(10 ** 7, 1).window_wait == pytest.approx(2.5e-6)


def test_calibrate_bad_input_is_refused_before_running(tmp_path):
    assert_clean_error(checkmpi("calibrate", "--np", "1", cwd=tmp_path), 2, "--np must be at least 2")
    assert_clean_error(checkmpi("calibrate", "--local", "8x8", cwd=tmp_path), 2, "--local")
    assert_clean_error(checkmpi("calibrate", "--hosts", "a", cwd=tmp_path), 2,
                       "--hosts 'a' names a: calibrating across nodes needs at least two different nodes, each once")
    assert_clean_error(checkmpi("calibrate", "--hosts", "a,b", "--hostfile", "h", cwd=tmp_path), 2,
                       "argument --hostfile: not allowed with argument --hosts")
    (tmp_path / "one").write_text("n0 slots=2\n# n1\n")
    assert_clean_error(checkmpi("calibrate", "--hostfile", "one", cwd=tmp_path), 2, "--hostfile 'one' names n0:")
    (tmp_path / "odd").write_text("n0 slots=1\nn_1 slots=1\n")
    assert_clean_error(checkmpi("calibrate", "--hostfile", "odd", cwd=tmp_path), 2,
                       "--hostfile 'odd': 'n_1' is not a host name")
    assert_clean_error(checkmpi("calibrate", "--blocks", "8x8x8,4x4", cwd=tmp_path), 2,
                       "--blocks expects three positive integers like 4x2x2, got '4x4'")
    assert_clean_error(checkmpi("calibrate", "-o", str(tmp_path), cwd=tmp_path), 2, "is a directory")
    assert_clean_error(checkmpi("calibrate", "--timeout", "0", cwd=tmp_path), 2,
                       "--timeout must be a number of seconds above 0 and at most 10^7, got '0'")
    cpus = os.cpu_count()  # once, a 2-core machine ran barriers of 64, 128 and 256 ranks for --np 10^12
    assert_clean_error(checkmpi("calibrate", "--np", str(4 * cpus + 1), cwd=tmp_path), 2,
                       f"--np {4 * cpus + 1} is more ranks than 1 node(s) of {cpus} CPUs place: at most {4 * cpus} "
                       "(4 per CPU; --force runs it anyway)")
    assert not (tmp_path / "results").exists()


def test_calibrate_keeps_an_earlier_calibrations_results(tmp_path):
    """A second calibration to the same profile writes its tools' results beside the first's, so that one
    stopped halfway leaves the earlier profile's evidence intact (it once replaced it at the start)."""
    from checkmpi.calibrate import measurement_folder

    out = tmp_path / "m.json"
    assert measurement_folder(out) == tmp_path / "m"
    (tmp_path / "m").mkdir()
    assert measurement_folder(out) == tmp_path / "m"  # empty: used
    (tmp_path / "m" / "pingpong.json").write_text("{}")
    assert measurement_folder(out) == tmp_path / "m-2"
    (tmp_path / "m-2").write_text("a file")
    assert measurement_folder(out) == tmp_path / "m-3"


def test_calibrate_past_its_timeout_fails_without_a_profile(tmp_path, halo_bin):
    r = checkmpi("calibrate", "--np", "2", "--quick", "--bin", str(halo_bin), "-o", str(tmp_path / "m.json"),
                 "--timeout", "1", cwd=tmp_path, timeout=60)
    assert_clean_error(r, 1, "timed out after")
    assert not (tmp_path / "m.json").exists()


def test_calibrate_quick_end_to_end(tmp_path, halo_bin):
    """A real quick calibration on 2 ranks: the profile validates, its values are positive and finite, and the
    tools' results it names are there and agree with it."""
    out = tmp_path / "machine.json"
    r = checkmpi("calibrate", "--np", "2", "--quick", "--bin", str(halo_bin), "-o", str(out), "--timeout", "150",
                 cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    check_profile(out)
    assert "Machine profile:" in r.stdout and "self-exchange" in r.stdout
    doc = json.loads(out.read_text())
    folder = tmp_path / "machine"
    ping = load(folder / "pingpong.json")
    assert all(s["beta"] > 0 for s in doc["links"]["intra"]["hockney"])
    assert len(doc["links"]["intra"]["hockney"]) == len(ping.fits["hockney"]["segments"])
    barrier = load(folder / "barrier-2.json")
    assert doc["barrier"][0]["seconds"] == barrier.results[0]["latency"]["median"]
    # The waits: each schedule's MPI time per step on a tiny block, less the link terms, per completion.
    exchange = load(folder / "exchange-2.json")
    assert exchange.local == (8, 8, 8) and exchange.config["sync"] == "none"
    point = doc["exchange"]["points"][0]
    for schedule, sid, n in (("by_direction", "step3", 2), ("all_at_once", "step7", 1)):
        got = point[schedule]
        result = next(r for r in exchange.ran() if r.id == sid)
        assert (got["strategy"], got["completions"]) == (sid, n)
        assert got["seconds"] == pytest.approx(result.per_step("mpi", "mean"))
        assert 0 < got["links"] and got["wait"] == pytest.approx(max(0.0, got["seconds"] - got["links"]) / n)
    # Memory, compute and packing: the best of --quick's two separate runs per block and rank count (the highest
    # rate, the shortest wait).
    halos = [load(folder / f"halo-host-16x16x16-2-{i}.json") for i in (1, 2)]
    assert not (folder / "halo-host-16x16x16-2-3.json").exists()
    small = [load(folder / f"halo-host-8x8x8-1-{i}.json") for i in (1, 2)]
    assert doc["blocks"]["points"][0]["bytes"] == small[0].config["field_bytes"] == 3 * 10 ** 3 * 4
    assert doc["blocks"]["points"][0]["by_ranks"][0]["copy"] == max(h.memcpy_bandwidth.mean for h in small)

    step3s = [next(r for r in h.ran() if r.id == "step3") for h in halos]
    assert doc["pack"]["host"]["x"]["pack"] == pytest.approx(
        max(r.raw["traits"]["halo_bytes"]["x"] * r.steps / r.timers["pack_x"].mean for r in step3s))
    assert doc["pack"]["host"]["by_ranks"][1]["z"] == doc["pack"]["host"]["z"]
    # MPI_Pack and MPI_Unpack from mpi-pack's timers, the window's reads from shm-window's direction timers, and
    # one of its node barriers: shm-window's MPI time less the reads and its one --sync barrier (as calibrated on
    # 2 ranks), over its two node barriers a step in place.
    by_id = [{r.id: r for r in h.ran()} for h in halos]
    for key, sid, timer in (("mpi_pack", "mpi-pack", "pack_y"), ("mpi_unpack", "mpi-pack", "unpack_y"),
                            ("window", "shm-window", "y")):
        assert doc["pack"]["host"]["y"][key] == pytest.approx(
            max(r[sid].raw["traits"]["halo_bytes"]["y"] * r[sid].steps / r[sid].timers[timer].mean for r in by_id))
    waits = [max(0.0, r["shm-window"].per_step("mpi", "mean") - sum(r["shm-window"].per_step(d, "mean")
                                                                     for d in "xyz") - doc["barrier"][0]["seconds"]) / 2
             for r in by_id]
    assert doc["pack"]["host"]["by_ranks"][1]["window_wait"] == pytest.approx(min(waits))
    assert "window_wait" in doc["pack"]["host"]["by_ranks"][0] and "mpi_pack" not in (doc["pack"]["cuda"] or {})
    # Turns: none with 2 ranks on at least 2 cores. Had the node one core, each kind's factor would make the model
    # give its strategy's measured step (the faster of the two runs), not below the turn-less one.
    if physical_cores() >= 2:
        assert doc["turns"]["points"] == [] and doc["turns"]["source"] == "the node was not oversubscribed"
    turns = E.turns({2: (halos, "runs")}, load_machine(out), 1, [16, 16, 16])
    one_core = machine_of({**doc, "turns": turns, "context": {**doc["context"], "cores_per_node": 1}}, out)
    for kind, sid in C.TURN_STRATEGIES.items():
        results = [next(r for r in h.ran() if sid in (r.id, r.alias)) for h in halos]
        row = rows_of_run(halos[0])[results[0].id]
        p = predict([row], case_of(halos[0]), one_core)[0]
        assert p.turns == pytest.approx(turns["points"][0][kind] * p.work), kind
        assert p.total == pytest.approx(max(min(measured_total(r) for r in results), p.total - p.turns)), kind
    assert doc["memory"]["copy"][1]["bandwidth"] == pytest.approx(max(h.memcpy_bandwidth.mean for h in halos))
    # Each kernel's rate: the best over every strategy of the runs that runs it (the compositions that name it,
    # and in place step3, step7, mock and mpi-pack; shm-window its own).
    rows = [rows_of_run(h) for h in halos]
    for kind, sid in C.COMPUTE_STRATEGIES.items():
        results = [next(r for r in h.ran() if sid in (r.id, r.alias)) for h in halos]
        assert all(r.raw["parts"]["compute"] == ("one-pass" if "one-pass" in kind else "in-place") for r in results)
        assert all(r.raw["parts"]["overlap"] == kind.removesuffix("-one-pass") for r in results
                   if kind.startswith(("interior", "masked")))
        running = [r for h, by_id in zip(halos, rows) for r in h.ran() if kernel_of(by_id[r.id], "in-place") == kind]
        assert len(running) == (10 if kind == "in-place" else 2), kind
        assert doc["compute"][kind][1]["bandwidth"] == pytest.approx(
            max(2 * 3 * 16 ** 3 * 4 / r.per_step("compute", "mean") for r in running))
    # The overlaps' hiding: 1 - their MPI time over step7's, both less the --sync barrier, the median of the runs.
    point = doc["blocks"]["points"][1]["by_ranks"][1]
    for kind in ("interior", "masked"):
        sid = C.COMPUTE_STRATEGIES[kind]
        parts = [min(1.0, max(0.0, 1 - (next(r for r in h.ran() if sid in (r.id, r.alias)).per_step("mpi", "mean")
                                        - doc["barrier"][0]["seconds"])
                              / (next(r for r in h.ran() if r.id == "step7").per_step("mpi", "mean")
                                 - doc["barrier"][0]["seconds"]))) for h in halos]
        assert point["overlap"][kind] == pytest.approx(sum(parts) / 2)  # the median of two
    assert point["window_wait"] == pytest.approx(doc["pack"]["host"]["by_ranks"][1]["window_wait"])
    # The waits per completion at the block, from step3 and step7 in its runs as the exchange's from its tiny block.
    base = machine_of({k: v for k, v in doc.items() if k not in ("exchange", "turns")}
                      | {"blocks": {**doc["blocks"], "points": [
                          {**p, "by_ranks": [{k: v for k, v in e.items() if k != "waits"} for e in p["by_ranks"]]}
                          for p in doc["blocks"]["points"]]}}, out)
    for schedule, sid in C.EXCHANGE_STRATEGIES.items():
        found = []
        for h in halos:
            row = rows_of_run(h)[sid]
            p = predict([row], case_of(h), base)[0]
            n = 2 if schedule == "by_direction" else 1
            found.append(max(0.0, next(r for r in h.ran() if r.id == sid).per_step("mpi", "mean") - p.visible_mpi) / n)
        assert point["waits"][schedule] == pytest.approx(min(found)), schedule  # the least of the runs
    assert "waits" not in doc["blocks"]["points"][1]["by_ranks"][0]  # one rank: no partner to wait for
    assert not list(tmp_path.glob("*.tmp.*"))  # written whole


def test_calibrate_placement_helpers(monkeypatch, tmp_path):
    """Which ranks calibrate launches where: doubling rank counts, the Slurm allocation's nodes, the launcher
    options that put what runs on one node on the first of the --hosts (or a hostfile's), the off-node pair on the
    first two, and the barrier across nodes on each of the first n."""
    from checkmpi.calibrate_nodes import doubling, nodes_of
    from checkmpi.native import Launcher

    assert doubling(1) == [1] and doubling(2) == [1, 2] and doubling(6) == [1, 2, 4, 6]
    assert doubling(8) == [1, 2, 4, 8]
    monkeypatch.delenv("SLURM_JOB_NUM_NODES", raising=False)
    assert nodes_of(None, None).count == 1
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "4")
    slurm = nodes_of(None, None)
    assert slurm.count == 4 and not slurm.named
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "x")
    assert nodes_of(None, None).count == 1
    ompi, mpich = Launcher("/usr/bin/mpirun", "openmpi"), Launcher("/usr/bin/mpiexec", "mpich")
    srun = Launcher("/usr/bin/srun", "openmpi", kind="srun")
    hosts = nodes_of("n1,n2:4,n3", None)
    assert hosts.names == ("n1", "n2", "n3") and hosts.count == 3
    assert hosts.across(ompi, 2, 1) == (["--host", "n1:1,n2:1"], None)
    assert hosts.across(mpich, 2, 1) == (["-hosts", "n1:1,n2:1"], None)
    assert hosts.across(srun, 2, 1) == (["--nodelist", "n1,n2", "-N", "2"], None)
    assert hosts.on_one(ompi, 4) == (["--host", "n1:4"], None)
    assert hosts.across(ompi, 3, 2) == (["--host", "n1:2,n2:2,n3:2"], None)
    assert slurm.on_one(ompi, 2) == ([], 2) and slurm.across(srun, 2, 1) == ([], 1)
    assert nodes_of(None, None).on_one(ompi, 2) == ([], None)
    (tmp_path / "hosts").write_text("# the cluster\ncmpi-n0 slots=1\ncmpi-n1 slots=1  # second\n\nn2:2\n")
    assert nodes_of(None, str(tmp_path / "hosts")).names == ("cmpi-n0", "cmpi-n1", "n2")
    with pytest.raises(CheckmpiError, match="at least two different nodes, each once"):
        nodes_of("n1,n1", None)


def test_calibrate_runs_more_steps_on_smaller_blocks():
    """The memory, compute and packing runs: 50 steps at 128^3, as much work on a smaller block up to 20 times
    the steps, on a larger one down to a fifth of them."""
    assert C.halo_steps(C.FULL, (128, 128, 128)) == 50
    assert C.halo_steps(C.FULL, (256, 256, 256)) == 10
    assert C.halo_steps(C.FULL, (160, 160, 160)) == round(50 * 128 ** 3 / 160 ** 3) == 26
    assert C.halo_steps(C.FULL, (64, 128, 128)) == 100
    assert C.halo_steps(C.FULL, (48, 48, 48)) == round(50 * 128 ** 3 / 48 ** 3) == 948
    assert C.halo_steps(C.FULL, (16, 16, 16)) == 1000
    assert C.halo_steps(C.QUICK, (16, 16, 16)) == 10


def test_calibrate_fits_become_parameters():
    """Hockney segments start at 0, negative fits become 0 with a note, a flat segment (beta null) takes the
    bandwidth of its largest size: all from a recorded ping-pong."""
    run = load(DATA / "p2p_pingpong.json")
    notes: list[str] = []
    segs = E.segments(run, "links.intra", notes)
    fitted = run.fits["hockney"]["segments"]
    assert [s["max_size"] for s in segs] == [s["max_size"] for s in fitted] and segs[0]["min_size"] == 0
    assert [s["beta"] for s in segs] == [s["beta"] for s in fitted] and notes == []
    run.fits["hockney"]["segments"][0] = dict(fitted[0], alpha=-1e-7, beta=None)
    segs = E.segments(run, "links.intra", notes)
    top = next(r for r in run.results if r["size"] == fitted[0]["max_size"])
    assert segs[0]["alpha"] == 0.0 and segs[0]["beta"] == top["size"] / top["latency"]["median"]
    assert len(notes) == 2 and "set to 0" in notes[0] and "flat" in notes[1]


def test_predict_across_nodes_says_when_the_on_node_link_stands_in(tmp_path, halo_bin):
    """Issue 31: a profile without an off-node link times messages between nodes on the on-node link; predict says
    so (a warning line, "off_node_link": "on-node stand-in", the plot's title) and never silently. With an off-node
    link measured, or no message crossing a node, it does not."""
    profile = DATA / "profiles" / "machine_2ranks.json"
    common = ["--local", "16x16x16", "--ranks-per-node", "2", "--strategy", "step2,step7", "--bin", str(halo_bin)]
    r = checkmpi("predict", "--machine", str(profile), "--scale", "2,8,64", *common, "--json", str(tmp_path / "s.json"),
                 "--plots", str(tmp_path / "plots"))
    assert r.returncode == 0, r.stderr
    assert "checkmpi: warning: the prediction crosses nodes, but the machine profile has no off-node link" in r.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["off_node_link"] == "on-node stand-in"
    assert [pt["links"]["inter"] > 0 for pt in doc["projection"]] == [False, True, True]
    r = checkmpi("predict", "--machine", str(profile), "--procs", "2x1x1", *common, "--json", str(tmp_path / "p.json"))
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    assert json.loads((tmp_path / "p.json").read_text())["off_node_link"] == "not used"
    measured = json.loads(profile.read_text())
    measured["links"]["inter"] = copy.deepcopy(measured["links"]["intra"])
    (tmp_path / "m.json").write_text(json.dumps(measured))
    r = checkmpi("predict", "--machine", str(tmp_path / "m.json"), "--scale", "2,8", *common,
                 "--json", str(tmp_path / "m-s.json"))
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    assert json.loads((tmp_path / "m-s.json").read_text())["off_node_link"] == "measured"
