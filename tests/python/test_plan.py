"""checkmpi-halo --plan (schema checkmpi.plan/1): the decomposition, block,
memory and messages a run would have, from the functions the run uses, for
any number of ranks; and the Python layer taking them from it."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from checkmpi import halo_plan
from checkmpi.errors import CheckmpiError
from checkmpi.results import load, schema_validator
from conftest import BUILD_BIN, MPI_TIMEOUT, assert_clean_error, checkmpi

HALO = str(BUILD_BIN / "checkmpi-halo")


def plan(*options: str) -> dict:
    done = subprocess.run([HALO, "--plan", "-", *options], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert not list(schema_validator("checkmpi.plan/1").iter_errors(doc))
    return doc


def plan_error(*options: str) -> str:
    done = subprocess.run([HALO, "--plan", "-", *options], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("checkmpi-halo: error: "), done.stderr
    return lines[0].removeprefix("checkmpi-halo: error: ")


def run_two_ranks(options: list[str], folder) -> object:
    """checkmpi-halo OPTIONS on two ranks, its results loaded."""
    run = folder / "r.json"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run(["mpiexec", "--oversubscribe", "-n", "2", HALO, *options, "--outdir", str(folder / "o"),
                           "--json", str(run)], capture_output=True, text=True, timeout=MPI_TIMEOUT, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return load(run)


def test_plan_decomposes_as_mpi_dims_create(halo_bin):
    grids = {n: tuple(plan("--no-input", "--local", "4x4x4", "--np", str(n), "-s", "step0")["procs"])
             for n in (1, 2, 7, 8, 12, 64)}
    assert grids == {1: (1, 1, 1), 2: (2, 1, 1), 7: (7, 1, 1), 8: (2, 2, 2), 12: (3, 2, 2), 64: (4, 4, 4)}
    doc = plan("--no-input", "--local", "10x12x14", "--np", "12", "-s", "step0")
    assert doc["size"] == [30, 24, 28] and doc["local"] == [10, 12, 14] and doc["ranks"] == 12


def test_plan_chooses_a_grid_that_divides_the_size(halo_bin):
    # MPI_Dims_create's 2x2x1 does not divide 36x35x35; 4x1x1 is the only grid of 4 that does.
    assert plan("--no-input", "--size", "36x35x35", "--np", "4", "-s", "step0")["procs"] == [4, 1, 1]
    # Where MPI's grid divides, it stands.
    assert plan("--no-input", "--size", "64x64x8", "--np", "4", "-s", "step0")["procs"] == [2, 2, 1]
    assert plan_error("--no-input", "--size", "3x5x7", "--np", "4", "-s", "step0") == \
        "lx = 3 is not divisible by proc_x = 2"


def test_plan_sizes_messages_and_memory_as_the_run_does(halo_bin, tmp_path):
    """The plan's message sizes are the engine's (a real run's traits), strategy by strategy; its memory
    counts one set of fields when every strategy shifts in place, two otherwise."""
    options = ["--no-input", "--local", "6x5x8", "--procs", "2x1x1", "--self-copy", "--iters", "2", "--icheck", "2"]
    doc = plan(*options, "--np", "2")
    measured = run_two_ranks(options, tmp_path)
    by_id = {s["catalog"]["id"]: s for s in doc["strategies"]}
    assert [s.id for s in measured.ran()] == list(by_id)
    for s in measured.ran():
        planned = by_id[s.id]["run"]
        assert {x: d["message_bytes"] for x, d in planned["directions"].items()} == s.raw["traits"]["message_bytes"]
        assert {x: d["halo_bytes"] for x, d in planned["directions"].items()} == s.raw["traits"]["halo_bytes"]
        assert planned["kernel_passes"] == s.raw["traits"]["kernel_passes"], s.id
        assert planned["compute"] == s.raw["parts"]["compute"], s.id
        assert by_id[s.id]["catalog"] == s.raw["catalog"]
    cells, real = 8 * 7 * 10, 4
    planes = 7 * 10 + 8 * 10 + 8 * 7
    assert doc["plane_elements"] == {"x": 7 * 10, "y": 8 * 10, "z": 8 * 7}
    assert doc["field_bytes"] == 3 * cells * real
    messages = real * 2 * 2 * 3 * planes  # three fields' planes per direction, sign and way
    # The host's own set (initial state, validation, profiles) and the host backend's: two in place,
    # three with a second buffer.
    assert doc["memory_per_rank"] == 2 * 3 * cells * real + messages
    assert plan(*options, "--np", "2", "--compute", "one-pass")["memory_per_rank"] == 3 * 3 * cells * real + messages
    assert plan(*options, "--np", "2", "-s", "step2,compute=one-pass")["memory_per_rank"] == \
        3 * 3 * cells * real + messages


def test_plan_of_a_stencil_is_the_run(halo_bin, tmp_path):
    """Issue 34: with 19 fields, a halo two cells wide and 26 neighbours, the plan's messages per direction
    and its edge and corner messages are the engine's (a real run's traits, the model's engine_traits), its
    geometry carries the stencil and what direct messages hold, and memory counts every field."""
    options = ["--no-input", "--local", "6x5x4", "--procs", "2x1x1", "--halo-width", "2", "--fields", "19",
               "--neighbours", "26", "--iters", "2", "--icheck", "2", "-s", "step2,step7,neighbor-alltoallw,rma-pscw"]
    doc = plan(*options, "--np", "2")
    assert (doc["halo_width"], doc["fields"], doc["neighbours"]) == (2, 19, 26)
    extent = (6 + 4) * (5 + 4) * (4 + 4)
    assert doc["field_bytes"] == 19 * extent * 4
    assert doc["plane_elements"] == {"x": 2 * 9 * 8, "y": 2 * 10 * 8, "z": 2 * 10 * 9}  # two whole layers
    assert doc["face_elements"] == {"x": 2 * 5 * 4, "y": 2 * 6 * 4, "z": 2 * 6 * 5}  # the interior beside a face
    assert doc["diagonal_elements"]["xy+-"] == 2 * 2 * 4 and doc["diagonal_elements"]["xyz---"] == 8
    assert len(doc["diagonal_elements"]) == 20
    measured = run_two_ranks(options, tmp_path)
    assert all(s.valid for s in measured.ran())
    by_id = {s["catalog"]["id"]: s for s in doc["strategies"]}
    for s in measured.ran():
        planned = by_id[s.id]["run"]
        assert {x: d["message_bytes"] for x, d in planned["directions"].items()} == s.raw["traits"]["message_bytes"]
        relayed = s.raw["catalog"]["traits"]["edges_and_corners"] == "relayed"
        assert planned["diagonals"]["relayed"] == relayed
        assert planned["diagonals"]["bytes"] == s.raw["traits"]["diagonal_bytes"], s.id  # every neighbour a message
        assert (planned["diagonals"]["bytes"] == 0) == relayed
    # The model reads the same geometry and counts the same messages.
    from checkmpi import catalog, model
    rows = catalog.rows_of_run(measured)
    case = model.Case(measured.dims, measured.local, model.Geometry.of(measured.config), measured.precision,
                      ranks_per_node=2)
    for s in measured.ran():
        want = model.engine_traits(rows[s.id], case)
        assert {k: s.raw["traits"][k] for k in want} == want, s.id


def test_plan_takes_the_ranks_from_np_the_grid_or_the_default(halo_bin, tmp_path):
    (tmp_path / "file.input").write_text("&parameters\n lx = 12, ly = 12, lz = 12 ! proc_x = 9\n"
                                         " PROC_X=2 proc_y = 3,\nproc_z=1\n itfin=10 /\n")
    doc = plan("--input", str(tmp_path / "file.input"), "-s", "step0")
    assert (doc["ranks"], doc["procs"], doc["local"]) == (6, [2, 3, 1], [6, 4, 12])
    assert plan("--no-input", "--local", "4x4x4", "--default-np", "4", "-s", "step0")["ranks"] == 4
    assert plan("--no-input", "--local", "4x4x4", "--procs", "1x2x1", "--default-np", "4", "-s", "step0")["ranks"] == 2
    assert "does not match the 3 MPI ranks" in plan_error("--no-input", "--local", "4x4x4", "--procs", "2x2x1",
                                                          "--np", "3", "-s", "step0")
    assert plan_error("--no-input", "--local", "4x4x4", "-s", "step0") == \
        "--plan: give the ranks to plan for (--np N), or the whole grid (--procs PXxPYxPZ)"
    for bad in ("0", "-3", "1073741825"):
        assert plan_error("--no-input", "--local", "4x4x4", "--np", bad) == \
            f"--np must be between 1 and 1073741824, got {bad}"


def test_ranks_options_belong_to_the_plan(halo_bin):
    done = subprocess.run([HALO, "--no-input", "--local", "4x4x4", "--np", "2", "-s", "step0"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == ("checkmpi-halo: error: --np is for --plan; a run's ranks are the ones mpirun "
                                   "starts")


def test_plan_refuses_what_the_run_refuses(halo_bin):
    assert "local block 1x40000x40000 is too large: one x halo message would hold" in plan_error("--no-input", "--local", "1x40000x40000", "--np", "1", "-s", "step0")
    assert plan_error("--no-input", "--local", "4x4x4", "--np", "1", "-s", "nosuch").startswith(
        "unknown strategy 'nosuch' (known: step0, step1,")
    assert plan_error("--no-input", "--local", "4x4x4", "--np", "2x") == "value of --np is not an integer: '2x'"


def test_python_reads_the_plan(halo_bin):
    p = halo_plan.make(["--no-input", "--local", "8x8x8", "--np", "4", "-s", "step0,step2"], str(halo_bin))
    assert (p.ranks, p.procs, p.local, p.size) == (4, (2, 2, 1), (8, 8, 8), (16, 16, 8))
    assert [s.row.id for s in p.strategies] == ["step0", "step2"]
    assert p.largest_message() == 3 * 10 * 10 * 4  # step2 bundles the three fields' planes
    with pytest.raises(CheckmpiError, match="lx = 3 is not divisible by proc_x = 2"):
        halo_plan.make(["--no-input", "--size", "3x5x7", "--np", "4"], str(halo_bin))


def test_run_uses_the_tools_grid(halo_bin, tmp_path):
    """`checkmpi run --size` decomposes as checkmpi-halo does (MPI's grid where it divides the size)."""
    r = checkmpi("run", "--bin", str(halo_bin), "--np", "4", "--size", "36x35x35", "--iters", "2", "-s", "step0",
                 "--no-report", "--json", "r.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert load(tmp_path / "r.json").dims == (4, 1, 1)
    assert_clean_error(checkmpi("run", "--bin", str(halo_bin), "--np", "4", "--size", "3x5x7", cwd=tmp_path), 2,
                       "lx = 3 is not divisible by proc_x = 2")
