"""The benchmark harness itself must not rot: a tiny run produces every key other tools read.
(Speed is *measured* by `make bench`; nothing here asserts a time.)"""

import importlib.util
import json
from collections import Counter
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "bench", Path(__file__).resolve().parents[2] / "benchmarks" / "run.py")
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)


def test_synthetic_corpus_is_seeded_and_follows_the_vocabulary():
    frequencies = Counter({"长城": 50, "北京": 30, "茶": 20})
    a = bench.synthetic_corpus(frequencies, 200, seed=3)
    b = bench.synthetic_corpus(frequencies, 200, seed=3)
    assert a == b and len(a) == 200
    counts = Counter(w for doc in a for w in doc)
    assert counts["长城"] > counts["北京"] > counts["茶"]
    assert all(len(q) >= 3 for q in bench.queries_from(a, 10))


def test_tiny_run_writes_the_published_keys(tmp_path):
    results = bench.main(["--sizes", "300", "600", "--queries", "5", "--reference-queries", "3",
                          "--skip-dense", "--skip-kb", "--memory-queries", "30",
                          "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved == json.loads(json.dumps(results))
    for key in ("bm25_query_ms_p50", "bm25_speedup_vs_rank_bm25"):
        assert set(saved[key]) == {"300", "600"}
    assert saved["bm25"]["600"]["top10_identical_share"] == 1.0
    assert saved["bm25"]["600"]["bm25s_top10_identical_share"] == 1.0
    assert set(saved["bm25_speedup_vs_bm25s"]) == {"300", "600"}
    assert (tmp_path / "cost_vs_size.html").stat().st_size > 1000
    memory = saved["memory"]  # measured, not judged here: `make bench` reports it
    assert memory["memory_queries"] == 30 and memory["memory_checkpoint"] == 3
    for key in ("rss_mb_at_checkpoint", "rss_mb_at_end", "rss_growth_mb", "memory_flat",
                "jieba_cache_entries", "reranker_cache_entries"):
        assert key in memory


NB_SPEC = importlib.util.spec_from_file_location(
    "bench_notebooks", Path(__file__).resolve().parents[2] / "benchmarks" / "notebooks.py")
bench_notebooks = importlib.util.module_from_spec(NB_SPEC)
NB_SPEC.loader.exec_module(bench_notebooks)


def test_notebook_harness_reads_a_process_and_selects_notebooks():
    import os

    pid = os.getpid()  # this process stands in for a kernel: the same /proc files
    assert bench_notebooks.proc_status_kb(pid, "VmHWM") >= bench_notebooks.proc_status_kb(
        pid, "VmRSS") > 0
    assert bench_notebooks.proc_cpu_s(pid) > 0
    chosen = bench_notebooks.select(["07", "08"])
    assert [p.name[:2] for p in chosen] == ["07", "08"]
    assert len(bench_notebooks.select(None)) >= 13
    table = bench_notebooks.table({"kernel start-up": {"peak_rss_mb": 53.2, "cpu_s": 0.31,
                                                       "wall_s": 0.01},
                                   "07_x": {"error": "boom"}})
    assert "| kernel start-up | 53 | 0.3 | 0.0 |" in table and "| 07_x | failed |" in table
    assert {"cores", "total_ram_gb", "OMP_NUM_THREADS"} <= set(bench_notebooks.machine())
