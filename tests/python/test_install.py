"""The package as a user or a packager installs it: a wheel built from the
package's own files, installed into a fresh virtual environment outside the
source tree, and the `checkmpi` command it provides run from there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import BUILD_BIN, REPO

SUBPACKAGES = sorted(p.parent.relative_to(REPO).as_posix() for p in (REPO / "checkmpi").rglob("__init__.py"))
SCHEMAS = sorted(p.name for p in (REPO / "schemas").glob("*.schema.json"))


def sh(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 240) -> str:
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, (argv, out.stdout, out.stderr)
    return out.stdout + out.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the fresh environment's bin folder)."""
    work = tmp_path_factory.mktemp("install")
    # What an sdist holds: the project metadata, the package and the schemas, nothing
    # else of the repository; installed elsewhere, nothing beside it to fall back on.
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(REPO / name, src / name)
    for folder in ("checkmpi", "schemas"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # No build isolation: the build uses this environment's setuptools and wheel, offline.
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(work / "dist"),
        str(src)], cwd=work)
    [wheel] = (work / "dist").glob("checkmpi-*.whl")
    env_dir = work / "fresh"
    sh([sys.executable, "-m", "venv", str(env_dir)], cwd=work)
    pip = env_dir / "bin" / "pip"
    sh([str(pip), "install", "-q", "--no-deps", "--no-index", str(wheel)], cwd=work)
    # The third-party dependencies (numpy, matplotlib, rich, jsonschema) come from this
    # environment's site-packages as a plain path: no download, and no .pth file of it
    # (the editable install of the source tree) is processed.
    fresh_site = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                                 "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                capture_output=True, text=True, check=True).stdout.strip()
    (Path(fresh_site) / "checkmpi-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return wheel, env_dir / "bin"


def test_wheel_holds_every_subpackage_and_the_schemas(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert "checkmpi/campaign" in SUBPACKAGES and len(SCHEMAS) >= 5
    for package in SUBPACKAGES:
        assert f"{package}/__init__.py" in names, package
        for module in (REPO / package).glob("*.py"):
            assert f"{package}/{module.name}" in names, module
    for schema in SCHEMAS:
        assert f"checkmpi/schemas/{schema}" in names, schema
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [line for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert sorted(r.split()[1].split(">")[0] for r in requires) == ["jsonschema", "matplotlib", "numpy", "rich"]
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "checkmpi = checkmpi.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_installed_command_runs_reports_and_plans(installed, tmp_path):
    """--version, a tiny run, its report and a campaign plan, from outside the source tree."""
    _, bin_dir = installed
    exe = str(bin_dir / "checkmpi")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CHECKMPI_BIN", "VIRTUAL_ENV")}
    where = sh([str(bin_dir / "python"), "-c", "import checkmpi.campaign.cli as m; print(m.__file__)"],
               cwd=tmp_path, env=env)
    assert where.strip().startswith(str(bin_dir.parent)), where  # the installed copy, not the source tree
    assert sh([exe, "--version"], cwd=tmp_path, env=env).strip() == "checkmpi 0.1.0"
    sh([exe, "run", "--bin", str(BUILD_BIN), "-n", "2", "--local", "8x8x8", "--iters", "10", "--strategy",
        "step0,step7", "--no-report", "-o", "tiny.json", "--timeout", "120"], cwd=tmp_path, env=env)
    doc = json.loads((tmp_path / "tiny.json").read_text())
    assert doc["schema"] == "checkmpi.halo/5" and [e["strategy"] for e in doc["results"]] == ["step0", "step7"]
    out = sh([exe, "report", "tiny.json", "--outdir", "rep", "--bin", str(BUILD_BIN)], cwd=tmp_path, env=env)
    group = " and ".join(doc["fastest_group"])  # a 10-step run may tie: the headline says what the JSON says
    assert (f"Headline: tiny: fastest {group}," if len(doc["fastest_group"]) == 1
            else f"Headline: tiny: {group} are tied within") in " ".join(out.split())
    assert (tmp_path / "rep" / "report.html").stat().st_size > 10000
    assert sorted(p.name for p in (tmp_path / "rep" / "plots").glob("*.png")) == ["tiny-breakdown.png",
                                                                                   "tiny-directions.png"]
    out = sh([exe, "campaign", "plan", str(REPO / "examples" / "campaign-tiny.toml"), "--bin", str(BUILD_BIN)],
             cwd=tmp_path, env=env)
    assert "Campaign 'tiny': 20 runs" in out
