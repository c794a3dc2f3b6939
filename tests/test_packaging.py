"""What a user installs: one top-level package, a CPU image by default."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_one_top_level_package_named_for_the_project() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = project["tool"]["setuptools"]["packages"]["find"]["include"]
    assert found == ["descent", "descent.*"]
    assert project["project"]["scripts"] == {"descent": "descent.tools.cli:main"}
    tops = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    assert tops == {"descent", "tests"}, tops


def test_docker_build_without_a_target_builds_the_cpu_image() -> None:
    """`docker build .` pulled the multi-GB TensorRT image: the last stage is the default."""
    stages = re.findall(r"^FROM \S+ AS (\w+)", (ROOT / "Dockerfile").read_text(), re.M)
    assert stages[-1] == "cpu" and "gpu" in stages
