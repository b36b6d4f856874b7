import random

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from course_lib.bm25 import BM25Index, idf_of
from course_lib.datasets import load_sample
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
