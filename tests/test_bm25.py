import random

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from scipy import sparse

from course_lib.bm25 import BM25Index, BM25Stats, idf_of
from course_lib.lab.data.datasets import load_sample
from course_lib.ranking import best_first
from course_lib.text_splitter import split_paragraphs
from course_lib.text_tokens import chinese_tokens, english_tokens


def random_corpus(seed, n_docs=200, vocab=300):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    weights = [1 / (i + 1) for i in range(vocab)]  # Zipf-like, so some words are common
    return [rng.choices(words, weights, k=rng.randint(3, 40)) for _ in range(n_docs)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_okapi_flavour_equals_rank_bm25(seed):
    corpus = random_corpus(seed)
    ours, reference = BM25Index(corpus, idf="okapi"), BM25Okapi(corpus)
    rng = random.Random(seed + 100)
    for _ in range(20):
        query = rng.sample(sorted({w for doc in corpus for w in doc}), 3) + ["unseen"]
        expected = reference.get_scores(query)
        got = ours.scores(query)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
        assert list(np.argsort(-got, kind="stable")[:10]) == list(
            np.argsort(-expected, kind="stable")[:10])


def test_lucene_flavour_equals_bm25s():
    corpus = random_corpus(7)
    ours = BM25Index(corpus, idf="lucene")
    reference = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    reference.index(_bm25s_tokens(corpus), show_progress=False)
    for query in (["w1", "w50"], ["w3", "w200", "w7"]):
        expected = reference.get_scores(query)
        # bm25s (like Lucene) drops the constant factor (k1 + 1): same ranking.
        np.testing.assert_allclose(ours.scores(query) / 2.5, expected, rtol=1e-5)


def _bm25s_tokens(corpus):
    vocab = {w: i for i, w in enumerate(sorted({w for doc in corpus for w in doc}))}
    return bm25s.tokenization.Tokenized(ids=[[vocab[w] for w in doc] for doc in corpus],
                                        vocab=vocab)


def test_chinese_sample_ranking_matches_rank_bm25():
    texts, _ = load_sample()
    paragraphs = [p for t in texts.values() for p in split_paragraphs(t)]
    corpus = [chinese_tokens(p) for p in paragraphs]
    ours, reference = BM25Index(corpus, idf="okapi"), BM25Okapi(corpus)
    query = chinese_tokens("2008年北京奥运会在哪天开幕")
    np.testing.assert_allclose(ours.scores(query), reference.get_scores(query), atol=1e-9)
    assert "2008年" in paragraphs[int(np.argmax(ours.scores(query)))]


def test_lucene_idf_is_never_negative_and_okapi_can_be():
    corpus = [["common", "a"], ["common", "b"], ["common", "c"], ["rare"]]
    assert BM25Index(corpus).idf.min() > 0
    okapi = BM25Index(corpus, idf="okapi", epsilon=0.0)
    assert idf_of(okapi, "common") == 0.0  # negative idf floored at epsilon * mean = 0
    assert idf_of(okapi, "never-seen") == 0.0


def test_unknown_query_terms_score_zero_and_bad_parameters_fail():
    index = BM25Index([english_tokens("red apple"), english_tokens("green pear")])
    assert index.scores(["banana"]).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="idf"):
        BM25Index([["a"]], idf="tfidf")
    with pytest.raises(ValueError, match="b must be"):
        BM25Index([["a"]], b=2)


def test_no_module_shadows_the_standard_library():
    """Python started inside course_lib/ puts that folder first on sys.path: a module
    named like a standard one (it was ``tokenize.py``) then breaks ``import numpy.ma``."""
    import subprocess
    import sys
    from pathlib import Path

    import course_lib

    folder = Path(course_lib.__file__).parent
    shadowing = sorted(p.stem for p in folder.glob("*.py") if p.stem in sys.stdlib_module_names)
    assert shadowing == []
    run = subprocess.run([sys.executable, "-c", "import numpy.ma"], cwd=folder,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


# ------------------------------------------------------------------ search contract
def _expected_search(index, query, k, mask=None):
    """The contract written the slow, obvious way: every document scored, only those
    above 0 (and allowed by mask) ranked by rounded score, ties by position."""
    columns = [index.vocabulary[t] for t in query if t in index.vocabulary]
    scores = np.asarray(index.matrix[:, columns].sum(axis=1)).ravel()  # not via search's code
    order = [int(i) for i in best_first(scores)
             if scores[i] > 0 and (mask is None or mask[i])]
    return order[:k], scores[order[:k]]


@pytest.mark.parametrize("seed", [0, 1])
def test_search_is_the_rounded_top_k_of_the_matching_documents(seed):
    corpus = random_corpus(seed)
    corpus += [list(doc) for doc in corpus[:20]]  # exact duplicates: tied scores
    index = BM25Index(corpus)
    rng = np.random.default_rng(seed)
    words = sorted({w for doc in corpus for w in doc})
    for trial in range(30):
        query = list(rng.choice(words, size=rng.integers(1, 5))) + ["unseen"]
        query += query[:1] if trial % 3 == 0 else []  # a repeated term counts twice
        mask = rng.random(len(corpus)) < 0.7 if trial % 2 else None
        k = int(rng.integers(0, 40))
        ids, scores = index.search(query, k, mask)
        want_ids, want_scores = _expected_search(index, query, k, mask)
        assert ids.dtype == np.int64 and scores.dtype == np.float64
        assert ids.tolist() == want_ids
        np.testing.assert_allclose(scores, want_scores, rtol=1e-12)


def test_search_keeps_only_matches_breaks_ties_by_position_and_honours_the_mask():
    index = BM25Index([["a", "b"], ["c"], ["a", "b"], ["a", "b"], ["b"]])
    ids, scores = index.search(["a"], k=10)
    assert ids.tolist() == [0, 2, 3]  # equal scores: document order; 1 and 4 do not match
    assert scores[0] == scores[1] == scores[2] > 0
    assert index.search(["a"], k=2)[0].tolist() == [0, 2]
    mask = np.array([False, True, True, True, True])
    assert index.search(["a"], k=10, mask=mask)[0].tolist() == [2, 3]
    assert index.search(["zzz"], k=10)[0].tolist() == []
    assert index.search(["a"], k=0)[0].tolist() == []
    assert index.search(["a"], k=np.int64(1))[0].tolist() == [0]
    # okapi idf floored at 0: "x" is in every document, so no document *matches* it
    okapi = BM25Index([["x", "y"], ["x"], ["x"]], idf="okapi", epsilon=0.0)
    assert okapi.search(["x"], k=5)[0].tolist() == []
    assert okapi.search(["x", "y"], k=5)[0].tolist() == [0]


def test_candidates_keep_a_score_that_ties_only_after_rounding():
    """search ranks only the documents its sample lets through; one just below the
    sample's bound but equal to it when rounded is a tie and must stay (it comes first)."""
    from course_lib.bm25 import _candidates
    from course_lib.ranking import top_k

    scores = np.full(10_000, 0.5)
    stride = 57  # isqrt(10_000 // 3): _candidates samples positions 0, 57, 114, ...
    scores[[0, stride, 2 * stride]] = 1.0000004
    scores[1] = 0.9999996  # not sampled; rounds to 1.0 like the three above
    kept = _candidates(scores, 3)
    assert len(kept) < 100  # the bound did cut
    assert kept[top_k(scores[kept], 3)].tolist() == top_k(scores, 3).tolist() == [0, 1, 57]

def test_search_rejects_a_bad_k_or_mask():
    index = BM25Index([["a"], ["b"]])
    for k in (-1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="k must be"):
            index.search(["a"], k)
    for mask in ([True], np.array([1, 0]), np.ones(3, dtype=bool)):
        with pytest.raises(ValueError, match="mask must be"):
            index.search(["a"], 1, mask=mask)


def test_from_arrays_restores_an_index_that_scores_identically():
    built = BM25Index(random_corpus(3), k1=1.2, b=0.6)
    terms = sorted(built.vocabulary, key=built.vocabulary.get)
    loaded = BM25Index.from_arrays(built.matrix.tocoo(), built.idf, terms,
                                   built.k1, built.b, built.avgdl)
    assert loaded.vocabulary == built.vocabulary
    assert (loaded.k1, loaded.b, loaded.avgdl) == (built.k1, built.b, built.avgdl)
    for query in (["w1"], ["w2", "w40", "w2"], ["nothing"]):
        assert loaded.scores(query).tolist() == built.scores(query).tolist()
        for got, want in zip(loaded.search(query, 7), built.search(query, 7), strict=True):
            assert got.tolist() == want.tolist()


def test_from_arrays_names_what_is_wrong():
    matrix = sparse.csc_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    good = dict(matrix=matrix, idf=np.ones(2), vocabulary=["a", "b"], k1=1.5, b=0.75, avgdl=1.0)
    for change, message in (({"matrix": matrix.toarray()}, "matrix must be"),
                            ({"idf": np.ones(3)}, "idf must have one value"),
                            ({"vocabulary": ["a"]}, "vocabulary must list"),
                            ({"vocabulary": "ab"}, "vocabulary must list"),
                            ({"vocabulary": ["a", 1]}, "strings"),
                            ({"vocabulary": ["a", "a"]}, "distinct")):
        with pytest.raises(ValueError, match=message):
            BM25Index.from_arrays(**{**good, **change})
    assert BM25Index.from_arrays(**good).search(["b"], 5)[0].tolist() == [1]


# ------------------------------------------------------------------ one formula, three users
def test_index_reranker_and_sparse_embedder_give_identical_bm25_scores():
    """The three BM25s of the course share BM25Stats: same corpus, same scores."""
    from course_lib.embeddings import CharNgramSparseEmbedder
    from course_lib.rerank import FeatureReranker
    from course_lib.text_tokens import char_ngrams

    texts, _ = load_sample()
    corpus = [p for t in texts.values() for p in split_paragraphs(t)][:60]
    index = BM25Index([char_ngrams(p) for p in corpus])
    reranker = FeatureReranker(corpus=corpus, embedder=None)
    sparse_embedder = CharNgramSparseEmbedder().fit(corpus)
    vectors = sparse_embedder(corpus)
    for question in ("北京奥运会在哪天开幕", "长城有多长长城", "茶"):
        from_index = index.scores(char_ngrams(question))
        from_reranker = reranker.features(question, corpus)["bm25_chars"]
        query = sparse_embedder.embed_query(question)
        from_embedder = np.array([sum(w * v.get(t, 0.0) for t, w in query.items())
                                  for v in vectors])
        assert from_index.max() > 0
        np.testing.assert_allclose(from_reranker, from_index, rtol=1e-12, atol=0)
        np.testing.assert_allclose(from_embedder, from_index, rtol=1e-12, atol=0)
        assert best_first(from_reranker).tolist() == best_first(from_index).tolist()
        assert best_first(from_embedder).tolist() == best_first(from_index).tolist()


def test_bm25_stats_formula_by_hand():
    stats = BM25Stats(n_docs=10, avgdl=4.0, k1=1.2, b=0.5)
    assert stats.idf([3]).tolist() == [pytest.approx(np.log(1 + 7.5 / 3.5))]
    # tf 2 in a document of length 8: 1.2·(1 − 0.5 + 0.5·8/4) = 1.8
    assert stats.weight(tf=2, length=8, idf=1.5) == pytest.approx(1.5 * 2 * 2.2 / (2 + 1.8))
    okapi = BM25Stats(n_docs=4, avgdl=1.0).idf([1, 4], "okapi", epsilon=0.5)
    high = np.log(3.5 / 1.5)
    assert okapi.tolist() == pytest.approx([high, 0.5 * (high + np.log(0.5 / 4.5)) / 2])
    assert BM25Stats.of_lengths([]).avgdl == BM25Stats.of_lengths([0, 0]).avgdl == 1.0
    assert BM25Stats.of_lengths([2, 4]) == BM25Stats(2, 3.0)
    for bad, message in (({"k1": -1}, "k1 must be"), ({"b": 1.5}, "b must be"),
                         ({"avgdl": 0}, "avgdl must be")):
        with pytest.raises(ValueError, match=message):
            BM25Stats(**{"n_docs": 1, "avgdl": 1.0, **bad})
