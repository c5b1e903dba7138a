"""scripts/setup.sh --slurm installs Slurm and munge and nothing else, and
scripts/slurm-local.sh names that command when they are missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conftest import REPO


def stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_setup_slurm_installs_only_slurm_and_munge(tmp_path):
    """With every package missing (dpkg-query says so), apt-get is asked for slurm-wlm and munge alone, and
    nothing is built: cmake, python3 and pip are never called."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    stub(bin_dir, "dpkg-query", "exit 1")
    for tool in ("apt-get", "sudo", "cmake", "python3", "ninja"):
        stub(bin_dir, tool, f'echo "{tool} $*" >>"{log}"')
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin")
    out = subprocess.run(["bash", str(REPO / "scripts" / "setup.sh"), "--slurm"], capture_output=True, text=True,
                         env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    calls = log.read_text().splitlines()
    install = [c for c in calls if c.startswith(("apt-get install", "sudo apt-get install"))]
    assert len(install) == 1 and install[0].split()[-2:] == ["slurm-wlm", "munge"], calls
    assert not [c for c in calls if c.split()[0] in ("cmake", "python3", "ninja")], calls
    assert "setup: installing slurm-wlm munge" in out.stdout
    assert "bash scripts/slurm-local.sh start" in out.stdout
    bad = subprocess.run(["bash", str(REPO / "scripts" / "setup.sh"), "--slurm", "--tests"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "--slurm installs Slurm and munge alone" in bad.stderr


def test_slurm_local_says_how_to_install_what_is_missing(tmp_path):
    """Started where Slurm's client sinfo is missing (PATH holds only what the script needs before it looks;
    it adds /usr/sbin for the daemons itself): exit 2 and the one command that installs them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("realpath", "id"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    out = subprocess.run(["/bin/bash", str(REPO / "scripts" / "slurm-local.sh"), "start", str(tmp_path / "c")],
                         capture_output=True, text=True, env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
                         timeout=60)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("slurm-local: error: ")
    assert "sinfo" in out.stderr.split(" not found")[0]
    assert out.stderr.rstrip().endswith("install Debian's slurm-wlm and munge with: bash scripts/setup.sh --slurm")
    assert not (tmp_path / "c").exists()  # nothing started or written
