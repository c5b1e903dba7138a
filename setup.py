"""The package list, which pyproject.toml cannot say: every package under
checkmpi/ found automatically (a new subpackage is never left out of a
wheel), and the JSON Schemas, whose home is schemas/ at the root (the
binaries' output formats), installed as the package data checkmpi.schemas."""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["checkmpi", "checkmpi.*"]) + ["checkmpi.schemas"],
      package_dir={"checkmpi.schemas": "schemas"})
