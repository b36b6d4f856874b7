"""The same numbers on any machine, and no state shared between notebooks.

These tests are slow (several minutes): `make test-reproducible` runs them, and so does
CI (`.ci/run`). Plain `make test` skips them.

* ``reproduce`` runs in fresh processes under two OpenBLAS kernels, thread counts and
  hash seeds, each in its own cache. Every metric must be identical between the runs,
  and the tables identical to the one quoted in README.md. USE's vectors (computed
  through BLAS, where another kernel changes the last bits) are computed afresh on each
  machine and must agree to 1e-5. e5's (torch and MKL, which OpenBLAS kernels, thread counts
  and hash seeds do not reach: course_lib.e5_torch) must be bit-identical:
  each machine re-embeds a sample of passages and questions, which must equal this
  machine's vectors bit for bit; only then may the machines start from this machine's
  e5 cache, where one exists (``make test`` has just filled it in CI). Embedding the
  whole knowledge base with e5 twice more would cost CI about eight minutes and show
  nothing the sample does not: the sample exercises the same engine on every kernel.
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

from course_lib.embedding_shards import read_cache
from course_lib.embeddings import E5Embedder
from course_lib.lab.data.datasets import cache_dir
from course_lib.lab.measure.reproduce import format_report

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.skipif(  # minutes: reproduce on two machines
    os.environ.get("COURSE_SLOW_TESTS") != "1",
    reason="slow: run by `make test-reproducible` and CI (COURSE_SLOW_TESTS=1)")]

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


E5 = E5Embedder.name  # the torch engine's cache
USE = "use-multilingual-v3"
SAMPLE = 16  # passages and as many questions, re-embedded with e5 on every machine
EMBED_SAMPLE = f"""
import sys
import numpy as np
from course_lib import load_cmrc2018_kb
from course_lib.embeddings import E5Embedder
kb, e5 = load_cmrc2018_kb(), E5Embedder()
np.savez(sys.argv[1], passages=e5.embed(kb.paragraphs[:{SAMPLE}]),
         queries=e5.embed_queries([q.question for q in kb.questions[:{SAMPLE}]]))
"""


def _e5_sample(folder: Path, settings: dict[str, str] | None) -> dict[str, np.ndarray]:
    """The sample's e5 vectors, embedded in a fresh process under ``settings``."""
    out = folder / "e5-sample.npz"
    env = _environment(folder, **(settings or {}))
    subprocess.run([sys.executable, "-c", EMBED_SAMPLE, str(out)], cwd=ROOT, env=env,
                   check=True, timeout=600)
    with np.load(out) as arrays:
        return {name: arrays[name] for name in arrays.files}


@pytest.fixture(scope="module")
def e5_samples(tmp_path_factory) -> dict[str, dict[str, np.ndarray]]:
    """{this machine or another: the e5 sample's vectors}."""
    samples = {}
    for name, settings in {"this machine": None, **MACHINES}.items():
        folder = tmp_path_factory.mktemp(f"sample-{name.replace(' ', '-')}")
        samples[name] = _e5_sample(folder, settings)
    return samples


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory, e5_samples) -> dict[str, tuple[dict, Path]]:
    """``reproduce`` on both "machines": {machine: (report, its cache folder)}."""
    # e5 is shown to embed bit-identically on every machine before its cache is shared.
    reference = e5_samples["this machine"]
    for name in MACHINES:
        for part, vectors in reference.items():
            assert e5_samples[name][part].tobytes() == vectors.tobytes(), (
                f"e5's {part} differ on {name}: it may not share this machine's e5 cache")
    seed = cache_dir() / "embeddings" / E5  # CI: what `make test` just embedded
    # Both run at once (1 + 2 threads on 2 cores): side by side they take about two
    # thirds of the time.
    folder = tmp_path_factory.mktemp("machines")
    runs = {}
    for name, settings in MACHINES.items():
        (folder / name).mkdir()
        if seed.is_dir():
            shutil.copytree(seed, folder / name / "embeddings" / E5)
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
    # e5's vectors, computed by torch and MKL on each machine, are bit-identical. USE
    # runs on numpy, so another BLAS kernel changes its last bits (which the tables,
    # compared at six decimals, do not see): the same texts, vectors equal to 1e-5.
    first_vectors, second_vectors = _vectors(first_cache), _vectors(second_cache)
    assert first_vectors[E5] == second_vectors[E5]
    assert first_vectors[USE].keys() == second_vectors[USE].keys()
    for key, vector in first_vectors[USE].items():
        np.testing.assert_allclose(np.frombuffer(vector, np.float32),
                                   np.frombuffer(second_vectors[USE][key], np.float32), atol=1e-5)


def test_e5_embeds_bit_identically_on_other_kernels_threads_and_seeds(e5_samples, reproduced):
    """What lets the machines share this machine's e5 cache (checked again in the fixture,
    which refuses to share it otherwise): the sample, and the cache's own copy of it."""
    reference = e5_samples["this machine"]
    assert reference["passages"].shape == (SAMPLE, 384)
    for name in MACHINES:
        for part, vectors in reference.items():
            np.testing.assert_array_equal(e5_samples[name][part], vectors, err_msg=name)
    # The cache the machines used holds the sample's vectors, bit for bit, as passages.
    _, machine_cache = next(iter(reproduced.values()))
    from course_lib import load_cmrc2018_kb
    from course_lib.embeddings import text_hash

    cached = _vectors(machine_cache)[E5]
    paragraphs = load_cmrc2018_kb().paragraphs[:SAMPLE]
    found = [i for i, text in enumerate(paragraphs) if text_hash(text) in cached]
    assert len(found) >= SAMPLE // 2, "the reproduce cache should hold most sample paragraphs"
    for i in found:
        assert cached[text_hash(paragraphs[i])] == reference["passages"][i].tobytes()


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
