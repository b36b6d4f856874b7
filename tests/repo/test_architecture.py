"""The layout's contracts (pyproject.toml, run by ``make lint``) hold, and each one breaks
on a deliberate violation — so a passing ``make lint`` means something."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")
CONTRACTS = ("Layers: __main__ > lab > store > the ideas > _support",
             "The package root imports only _support (below every idea)",
             "Lab rooms: cli > teaching | show > measure > systems > data",
             "No import cycles between the parts, nor between the modules of a part")

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed")


def _lint(folder: Path) -> dict[str, str]:
    """Each contract's verdict (KEPT / BROKEN) for the package in ``folder``."""
    result = subprocess.run([str(LINT), "--no-cache"], cwd=folder, capture_output=True,
                            text=True, env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"})
    verdicts = {}
    for line in result.stdout.splitlines():
        for contract in CONTRACTS:
            if line.startswith(contract + " "):
                verdicts[contract] = line.rsplit(" ", 1)[1]
    return verdicts


def test_the_package_keeps_every_contract():
    assert _lint(ROOT) == dict.fromkeys(CONTRACTS, "KEPT")


# Each violation: the contract it breaks, the file it is appended to (created if new) and
# the line appended. (An idea importing the lab also makes a cycle, the lab importing the
# ideas: it breaks the third contract too.)
VIOLATIONS = [
    (CONTRACTS[0], "bm25.py", "from .lab.data.datasets import cache_dir"),
    (CONTRACTS[0], "embedding_cache.py", "from .store.persist import save"),
    (CONTRACTS[0], "_support/places.py", "from ..node import DocNode"),
    (CONTRACTS[0], "unplaced.py", "X = 1"),  # exhaustive: a new module must be placed
    (CONTRACTS[1], "__init__.py", "from . import bm25"),
    (CONTRACTS[1], "__init__.py", "from .lab.data import datasets"),
    (CONTRACTS[2], "lab/data/datasets.py", "from ..systems.pipelines import PIPELINES"),
    (CONTRACTS[2], "lab/measure/wins.py", "from ..show.figures import show"),
    (CONTRACTS[2], "lab/teaching/exercises.py", "from ..show import plots"),  # side by side
    (CONTRACTS[2], "lab/unplaced.py", "X = 1"),  # exhaustive: each lab module in a room
    (CONTRACTS[3], "embedding_shards.py", "from .embeddings import Embedder"),
    (CONTRACTS[3], "lab/measure/significance.py", "from .wins import format_p"),
]


@pytest.mark.parametrize(("contract", "file", "line"), VIOLATIONS)
def test_a_deliberate_violation_breaks_its_contract(tmp_path, contract, file, line):
    shutil.copytree(ROOT / "course_lib", tmp_path / "course_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / "course_lib" / file, "a", encoding="utf-8") as out:
        out.write(f"\n{line}  # a deliberate violation\n")
    verdicts = _lint(tmp_path)
    assert verdicts[contract] == "BROKEN"


def _imported_names(path: Path) -> list[tuple[str, str]]:
    """(module, name) of each ``from ... import name`` in a file, relative modules resolved."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module or "").split("."))).strip(".")
            found += [(module, alias.name) for alias in node.names]
    return found


def test_a_store_uses_only_the_public_names_of_the_ideas():
    private = [(path.name, module, name)
               for path in sorted((ROOT / "course_lib" / "store").glob("*.py"))
               for module, name in _imported_names(path)
               if module.startswith("course_lib.") and module.count(".") == 1
               and not module.startswith("course_lib._") and name.startswith("_")]
    assert private == []


# ---------------------------------------------------------------- the tests mirror the package
# course_lib/<path>/<module>.py is tested in tests/<path>/test_<module>.py (more files may test
# it too). Besides the package's folders, tests/ holds repo/ (the repository's own rules: the
# README, the notebooks' claims, the site, these contracts) and classroom/ (a real JupyterHub).
OWN_FOLDERS = {"repo", "classroom"}


def _modules() -> list[Path]:
    return sorted(path.relative_to(ROOT / "course_lib")
                  for path in (ROOT / "course_lib").rglob("*.py")
                  if not path.name.startswith("__"))


def test_every_module_has_its_test_file():
    missing = [f"tests/{module.parent / ('test_' + module.name)}".replace("/./", "/")
               for module in _modules()
               if not (ROOT / "tests" / module.parent / f"test_{module.name}").is_file()]
    assert missing == []


def test_every_test_folder_is_a_package_folder_or_its_own():
    package_folders = {module.parent for module in _modules()}
    strays = [str(path.relative_to(ROOT)) for path in (ROOT / "tests").rglob("test_*.py")
              if (folder := path.parent.relative_to(ROOT / "tests")) not in package_folders
              and folder.parts[0] not in OWN_FOLDERS]
    assert strays == []
