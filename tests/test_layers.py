"""The layer contract over the Cython sources, which import-linter cannot read.

Inside ``descent.search_cy`` the kernels' packages stack ``games -> eval -> search``
(rules, then evaluators and move knowledge over them, then the searches over both): a
``.pyx`` or ``.pxd`` may ``cimport`` or import its own package and those below it, never
one above. And no Cython source imports a layer above ``search_cy`` (the engine, the
networks, the protocols, the tools), which ``.importlinter`` checks for Python files."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL_LAYERS = ("games", "eval", "search")     # bottom first
IMPORT = re.compile(r"^\s*(?:from\s+(descent(?:\.\w+)+)\s+c?import\b"
                    r"|c?import\s+(descent(?:\.\w+)+))", re.MULTILINE)


def cython_sources() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                             "descent/search_cy"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return [ROOT / p for p in listed if p.endswith((".pyx", ".pxd"))]


def imports(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    out = []
    for match in IMPORT.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        out.append((line, match.group(1) or match.group(2)))
    return out


def violations() -> list[str]:
    found = []
    for path in cython_sources():
        parts = path.relative_to(ROOT / "descent" / "search_cy").parts
        own = parts[0] if len(parts) > 1 else ""
        for line, module in imports(path):
            words = module.split(".")
            where = f"{path.relative_to(ROOT)}:{line}: {module}"
            if len(words) < 2 or words[1] != "search_cy":
                found.append(f"{where} (above search_cy)")
            elif own in KERNEL_LAYERS and len(words) > 2 and words[2] in KERNEL_LAYERS \
                    and KERNEL_LAYERS.index(words[2]) > KERNEL_LAYERS.index(own):
                found.append(f"{where} ({own} may not use {words[2]})")
    return found


def test_cython_sources_import_only_their_layer_and_those_below() -> None:
    assert cython_sources(), "no Cython source found"
    assert violations() == []


def test_the_checker_sees_an_upward_cimport(tmp_path: Path) -> None:
    sample = tmp_path / "sample.pyx"
    sample.write_text("from descent.search_cy.search.tree cimport Node\n"
                      "cimport descent.search_cy.games.state\nimport descent.nets.arch\n")
    assert [m for _, m in imports(sample)] == [
        "descent.search_cy.search.tree", "descent.search_cy.games.state", "descent.nets.arch"]
