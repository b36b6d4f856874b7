"""The same numbers on any machine, and no state shared between notebooks.

These tests are slow (several minutes): `make test-reproducible` runs them, and so does
CI (`.ci/run`). Plain `make test` skips them.

* ``reproduce`` runs in fresh processes under two OpenBLAS kernels, thread counts and
  hash seeds, each from its own empty cache (a learner's machine computes its own
  embeddings; vectors cached here would hide a difference). Every metric must be
  identical between the runs, and the tables identical to the one quoted in README.md.
  The e5 vectors the two machines computed must be bit-identical too (USE's, computed
  through BLAS, equal to 1e-5).
* Two notebooks run alone, in reverse course order, each in its own fresh cache that
  holds only those embedding vectors (no other state), and nbval finds the committed
  outputs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_lib.embeddings import read_cache
from course_lib.reproduce import format_report

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    os.environ.get("COURSE_SLOW_TESTS") != "1",
    reason="slow: run by `make test-reproducible` and CI (COURSE_SLOW_TESTS=1)")

# Two machines as unlike as this one can imitate: the generic kernel on one thread and
# the AVX2 kernel on two, with different hash seeds.
MACHINES = {
    "prescott-1-thread": {"OPENBLAS_CORETYPE": "Prescott", "OMP_NUM_THREADS": "1",
                          "PYTHONHASHSEED": "1"},
    "haswell-2-threads": {"OPENBLAS_CORETYPE": "Haswell", "OMP_NUM_THREADS": "2",
                          "PYTHONHASHSEED": "2"},
}
VOLATILE = ("seconds", "ms_per_query")


def _environment(cache: Path, **overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "MKL_NUM_THREADS",
                        "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED")}
    env.update(COURSE_DATA_CACHE=str(cache), **overrides)
    return env


def _metrics(report: dict) -> dict:
    """Every number of the report but the timings."""
    return {key: [{**row, "ours": {m: v for m, v in row["ours"].items() if m not in VOLATILE}}
                  for row in table["rows"]]
            for key, table in report["tables"].items()}


def readme_table() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What you will reproduce", 1)[1]
    return re.search(r"```\n(.*?)```", section, re.S).group(1).strip()


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    """``reproduce`` on both "machines": {machine: (report, its cache folder)}."""
    # Both run at once (1 + 2 threads on 2 cores): each computes every embedding
    # itself, and side by side they take about two thirds of the time.
    folder = tmp_path_factory.mktemp("machines")
    runs = {}
    for name, settings in MACHINES.items():
        (folder / name).mkdir()
        log = (folder / f"{name}.log").open("w")
        runs[name] = (subprocess.Popen(
            [sys.executable, "-m", "course_lib", "reproduce", "--json",
             str(folder / f"{name}.json")],
            cwd=ROOT, env=_environment(folder / name, **settings), stdout=log,
            stderr=subprocess.STDOUT, text=True), log)
    results = {}
    for name, (process, log) in runs.items():
        try:
            returncode = process.wait(timeout=1500)
        finally:
            process.kill()
            log.close()
        output = (folder / f"{name}.log").read_text(encoding="utf-8")
        assert returncode == 0, f"reproduce failed on {name}:\n{output[-3000:]}"
        results[name] = (json.loads((folder / f"{name}.json").read_text(encoding="utf-8")),
                         folder / name)
    return results


def _vectors(cache: Path) -> dict[str, dict[str, bytes]]:
    """{model folder: {text hash: vector bytes}} of a cache's embeddings (every shard,
    checked: a damaged one fails the test rather than being rebuilt)."""
    return {folder.name: {k: v.tobytes() for k, v in read_cache(folder).items()}
            for folder in sorted((cache / "embeddings").iterdir()) if folder.is_dir()}


def test_reproduce_is_identical_on_other_kernels_threads_and_seeds(reproduced):
    (first, first_cache), (second, second_cache) = reproduced.values()
    assert _metrics(first) == _metrics(second), "reproduce differs between machines"
    for name, (report, _) in reproduced.items():
        assert format_report(report, timing=False).strip() == readme_table(), (
            f"README.md's table differs from what reproduce prints on {name}")
    # e5's vectors, computed by its own C engine on each machine, are bit-identical. USE
    # runs on numpy, so another BLAS kernel changes its last bits (which the tables,
    # compared at six decimals, do not see): the same texts, vectors equal to 1e-5.
    first_vectors, second_vectors = _vectors(first_cache), _vectors(second_cache)
    e5, use = "multilingual-e5-small-q4", "use-multilingual-v3"
    assert first_vectors[e5] == second_vectors[e5]
    assert first_vectors[use].keys() == second_vectors[use].keys()
    for key, vector in first_vectors[use].items():
        np.testing.assert_allclose(np.frombuffer(vector, np.float32),
                                   np.frombuffer(second_vectors[use][key], np.float32), atol=1e-5)


@pytest.mark.parametrize("notebook", ["06_embeddings_and_similarity", "01_evaluating_retrieval"])
def test_a_notebook_run_alone_gives_its_committed_outputs(notebook, tmp_path, reproduced):
    # Reverse course order, each with a fresh cache: nothing a notebook shows may come
    # from another notebook having run first. The cache is seeded with embedding vectors
    # only — a pure function of (model, text), shown identical across machines above —
    # so the notebook does not spend minutes embedding the knowledge base again.
    _, machine_cache = next(iter(reproduced.values()))
    shutil.copytree(machine_cache / "embeddings", tmp_path / "embeddings")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "-q", "-p", "no:cacheprovider",
         str(ROOT / "notebooks" / f"{notebook}.ipynb")],
        cwd=ROOT, env=_environment(tmp_path, PYTHONHASHSEED="0"), capture_output=True,
        text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:]
