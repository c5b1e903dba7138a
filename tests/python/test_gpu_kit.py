"""scripts/gpu-kit.sh, the GPU checks carried to a machine without MPI: `pack` here, then `check` in a fresh
clone with Debian's Open MPI hidden (a private mount namespace binds empty folders and /dev/null over its files),
so that MPI can only run from the kit; ctest finds the kit's build under the clone's paths. A missing kit, a
checkout with a build-cuda/ of its own and a GPU_KIT that is no kit are refused."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

KIT = REPO / "scripts" / "gpu-kit.sh"
CUDA_BUILD = REPO / "build-cuda"
LIBS = "/usr/lib/x86_64-linux-gnu"

# Runs "$@" with the installed Open MPI out of sight (inside `unshare -m`).
HIDE = f"""set -e
empty=$(dirname "$0")/empty
mkdir -p "$empty"
for d in {LIBS}/openmpi {LIBS}/pmix2 {LIBS}/ucx /usr/share/openmpi /etc/openmpi; do
  [ ! -d "$d" ] || mount --bind "$empty" "$d"
done
for f in {LIBS}/lib{{mpi,mpi_cxx,open-pal,open-rte,pmix,ucp,ucs,uct,fabric}}.so.* /usr/bin/orterun /usr/bin/orted \\
         /usr/bin/ompi_info; do
  [ -L "$f" ] || [ ! -e "$f" ] || mount --bind /dev/null "$f"
done
! /usr/bin/mpiexec.openmpi --version >/dev/null 2>&1 || {{ echo "Open MPI still runs" >&2; exit 9; }}
exec "$@"
"""


def _why_not() -> str | None:
    if not (CUDA_BUILD / "bin" / "checkmpi_gpu_tests").exists():
        return "no CUDA build (build-cuda/)"
    if not Path("/usr/bin/mpiexec.openmpi").exists() or not shutil.which("ompi_info"):
        return "Debian's Open MPI is not installed"
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return "needs root and unshare (a private mount namespace hides the installed Open MPI)"
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    return f"unshare -m failed: {r.stderr.strip()}" if r.returncode else None


def _kit(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(cwd / "scripts" / "gpu-kit.sh"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    why = _why_not()
    if why:
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("gpu-kit") / "kit"
    r = _kit("pack", env={"GPU_KIT": str(folder)}, timeout=1200)
    assert r.returncode == 0, r.stderr
    assert re.match(rf"gpu-kit: {re.escape(str(folder))} ready, \d+ MiB: CUDA build build-cuda, ", r.stdout)
    return folder


def test_check_runs_the_kits_open_mpi_where_none_is_installed(kit, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    shutil.copy(KIT, clone / "scripts" / "gpu-kit.sh")  # the script under test, committed or not
    hide = tmp_path / "hide.sh"
    hide.write_text(HIDE)
    out = tmp_path / "out"
    r = subprocess.run(["unshare", "-m", "bash", str(hide), "bash", "scripts/gpu-kit.sh", "check", "env"],
                       cwd=clone, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "GPU_KIT": str(kit), "OUT": str(out)})
    assert r.returncode == 0, r.stderr
    # A 2-rank host run validated through the kit's mpiexec; the GPU's line whatever this machine has.
    assert re.fullmatch(r"env: exit 0 in \d+ s; GPU.*; MPI: 1 valid 2-rank run\n", r.stdout), r.stdout
    log = (out / "env.log").read_text()
    assert "mpiexec (OpenRTE) 4." in log or "Open MPI" in log, log
    assert "couldn't open the help file" not in log, log  # PMIx found its plugins (and help) in the kit
    # The test lists point into the clone and at the kit's launcher, as ctest there runs them.
    lists = (clone / "build-cuda" / "tests" / "CTestTestfile.cmake").read_text()
    assert f"CHECKMPI_BIN={clone}/build-cuda/bin" in lists and f"MPIEXEC={kit}/rt/usr/bin/mpiexec" in lists
    assert f"{REPO}/" not in lists

    def count(build: Path) -> int:
        listed = subprocess.run(["ctest", "-N", "-L", "unit|gpu"], cwd=build, capture_output=True, text=True,
                                timeout=120).stdout
        return int(re.search(r"Total Tests: (\d+)", listed).group(1))

    assert count(clone / "build-cuda") == count(CUDA_BUILD) > 100


def test_refusals(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(KIT, checkout / "scripts" / "gpu-kit.sh")
    r = _kit("check", cwd=checkout, env={"GPU_KIT": str(tmp_path / "none")})
    assert r.returncode == 2 and r.stderr == (f"gpu-kit: no kit in {tmp_path / 'none'}: run 'bash scripts/gpu-kit.sh "
                                              "pack' where the CUDA build is, and carry it\n")
    r = _kit("check", "env", "nonsense", cwd=checkout)
    assert r.returncode == 2 and r.stderr == ("gpu-kit: unknown part 'nonsense' (env, kernels, gpu, bench1, "
                                              "osu-threads, bench8, rest, osu)\n")
    # A checkout with a build-cuda/ of its own: check would overwrite its test lists.
    (checkout / "build-cuda").mkdir()
    r = _kit("check", "env", cwd=checkout, env={"OUT": str(tmp_path / "out")})
    assert r.returncode == 2 and r.stderr == ("gpu-kit: build-cuda/ exists here: 'check' unpacks the kit's own "
                                              "build, in a checkout that has none\n")
    assert not (tmp_path / "out").exists()
    (tmp_path / "other").mkdir()
    r = _kit("pack", cwd=checkout, env={"GPU_KIT": str(tmp_path / "other")})
    assert r.returncode == 2 and r.stderr == f"gpu-kit: {tmp_path / 'other'} exists and is no kit: give GPU_KIT " \
                                             "a new folder\n"
