"""The layout's contracts (pyproject.toml, run by ``make lint``) hold, and each one breaks
on a deliberate violation — so a passing ``make lint`` means something."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
CONTRACTS = ("The RAG ideas never import the lab",
             "_support imports nothing of the course",
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


# Each violation: the file it is appended to and the line appended. (An idea importing the
# lab also makes a cycle, the lab importing the ideas: it breaks the third contract too.)
VIOLATIONS = {
    CONTRACTS[0]: ("bm25.py", "from .lab.datasets import cache_dir"),
    CONTRACTS[1]: ("_support/places.py", "from ..node import DocNode"),
    CONTRACTS[2]: ("store/vector_shards.py", "from ..embeddings import Embedder"),
}


@pytest.mark.parametrize("contract", CONTRACTS)
def test_a_deliberate_violation_breaks_its_contract(tmp_path, contract):
    shutil.copytree(ROOT / "course_lib", tmp_path / "course_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    file, line = VIOLATIONS[contract]
    with open(tmp_path / "course_lib" / file, "a", encoding="utf-8") as out:
        out.write(f"\n{line}  # a deliberate violation\n")
    verdicts = _lint(tmp_path)
    assert verdicts[contract] == "BROKEN"
