"""CachedEmbedder and expected_queries (course_lib.embedding_cache), on a tiny fake embedder
that counts what it is asked: each text is computed once, the cache outlives the object,
one model's vectors are never served for another's, batches become shards that stay within
the documented merge rule, and announced queries are embedded together in batches."""

import warnings

import numpy as np
import pytest

from course_lib.embedding_base import Embedder
from course_lib.embedding_cache import CachedEmbedder, expected_queries
from course_lib.embedding_shards import read_cache, read_shard, text_hash


class Counting(Embedder):
    """A fake model: a text's vector is [its length, a code for the model and the side];
    every batch asked for is recorded, passages and queries apart."""

    dim = 3

    def __init__(self, name: str = "counting", code: float = 1.0):
        self.name, self.code = name, code
        self.passages: list[list[str]] = []
        self.queries: list[list[str]] = []

    def _vector(self, text: str, side: float) -> list[float]:
        return [float(len(text)), self.code, side]

    def _embed(self, texts):
        self.passages.append(list(texts))
        return np.array([self._vector(t, 0.0) for t in texts])  # float64 on purpose

    def embed_query(self, text):
        return self.embed_queries([text])[0]

    def embed_queries(self, texts):
        self.queries.append(list(texts))
        return np.array([self._vector(t, 1.0) for t in texts])


def _computed(batches: list[list[str]]) -> list[str]:
    return [t for batch in batches for t in batch]


def test_a_text_is_computed_once_across_calls(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    first = cached(["甲", "乙乙"])
    second = cached(["乙乙", "丙丙丙", "甲", "丙丙丙"])
    assert _computed(inner.passages) == ["甲", "乙乙", "丙丙丙"]
    assert second.dtype == np.float32 and second.shape == (4, 3)
    assert second[:, 0].tolist() == [2.0, 3.0, 1.0, 3.0]  # each row its own text's vector
    np.testing.assert_array_equal(second[[2, 0]], first)


def test_the_cache_outlives_the_object_and_serves_a_new_one_bit_for_bit(tmp_path):
    texts = [f"文本{i}" * (i + 1) for i in range(7)]
    first = CachedEmbedder(Counting(), cache_dir=tmp_path, batch_size=3)
    vectors = first(texts)
    later_inner = Counting()
    later = CachedEmbedder(later_inner, cache_dir=tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a sound cache loads silently
        again = later(texts[::-1])
    assert later_inner.passages == []
    np.testing.assert_array_equal(again, vectors[::-1])
    later(texts + ["新的"])
    assert later_inner.passages == [["新的"]]  # only what the cache lacks


def test_different_embedder_names_do_not_share_vectors(tmp_path):
    one, other = Counting("model-one", code=1.0), Counting("model-two", code=2.0)
    CachedEmbedder(one, cache_dir=tmp_path)(["长城", "故宫"])
    served = CachedEmbedder(other, cache_dir=tmp_path)(["长城", "故宫"])
    assert other.passages == [["长城", "故宫"]]  # computed again by the other model
    assert served[:, 1].tolist() == [2.0, 2.0]  # the other model's vectors, not the first's
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model-one", "model-two"]
    assert CachedEmbedder(Counting("model-one"), cache_dir=tmp_path)(["长城"])[0, 1] == 1.0


def test_a_name_that_is_not_a_file_name_still_gets_one_folder_in_the_cache(tmp_path):
    inner = Counting("org/model:v1 (q4)")
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    cached(["长城"])
    (folder,) = tmp_path.iterdir()
    assert folder == cached.folder and folder.is_dir() and "/" not in folder.name
    assert set(read_cache(folder)) == {text_hash("长城")}
    assert cached.name == "org/model:v1 (q4)" and cached.dim == 3


def test_names_that_differ_only_in_punctuation_do_not_share_vectors(tmp_path):
    CachedEmbedder(Counting("m/1", code=1.0), cache_dir=tmp_path)(["长城"])
    other = Counting("m:1", code=2.0)
    assert CachedEmbedder(other, cache_dir=tmp_path)(["长城"])[0, 1] == 2.0
    assert other.passages == [["长城"]]


def test_missing_texts_are_embedded_in_batches_each_a_shard_at_once(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path, batch_size=2)
    cached(["a", "bb", "ccc", "dddd", "eeeee"])
    assert [len(b) for b in inner.passages] == [2, 2, 1]
    assert set(read_cache(cached.folder)) == {text_hash(t) for t in "a bb ccc dddd eeeee".split()}
    assert not [p for p in cached.folder.iterdir() if p.suffix != ".npz"]  # no temporaries


def test_the_folder_keeps_the_largest_shard_ahead_of_all_the_others(tmp_path):
    """The documented invariant: the largest shard plus batch-sized ones that together hold
    fewer vectors than it, checked after every batch; nothing is lost by the merges."""
    cached = CachedEmbedder(Counting(), cache_dir=tmp_path, batch_size=3)
    texts = [f"t{i}" for i in range(40)]
    for i, text in enumerate(texts):
        cached([text] * 2 + texts[:i])  # one new text per call, the rest already cached
        sizes = sorted(len(read_shard(p, dim=3)) for p in cached.folder.glob("*.npz"))
        assert sum(sizes[:-1]) < sizes[-1], (i, sizes)
        assert sum(sizes) == i + 1  # every vector in exactly one shard
    assert len(list(cached.folder.glob("*.npz"))) < len(texts) // 2  # merged as it grows


def test_queries_are_cached_apart_from_passages(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    assert cached.embed_queries(["长城"])[0].tolist() == [2.0, 1.0, 1.0]
    assert cached(["长城"])[0].tolist() == [2.0, 1.0, 0.0]
    assert inner.queries == [["长城"]] and inner.passages == [["长城"]]
    on_disk = read_cache(cached.folder)
    assert len(on_disk) == 2 and text_hash("长城") in on_disk  # two keys for one text


def test_a_sparse_embedder_is_refused():
    class Sparse(Embedder):
        sparse = True

    with pytest.raises(TypeError, match="dense"):
        CachedEmbedder(Sparse())


def test_an_unannounced_query_is_computed_once_and_not_written(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    for _ in range(3):
        assert cached.embed_query("故宫在哪里").tolist() == [5.0, 1.0, 1.0]
    assert inner.queries == [["故宫在哪里"]]
    assert read_cache(cached.folder) == {}
    fresh = Counting()
    CachedEmbedder(fresh, cache_dir=tmp_path).embed_query("故宫在哪里")
    assert fresh.queries == [["故宫在哪里"]]  # another object computes it again


def test_announced_queries_are_embedded_in_batches_and_written(tmp_path):
    questions = [f"问题{i}" for i in range(5)]
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path, batch_size=2)
    with expected_queries(questions):
        assert cached.embed_query(questions[3]).tolist() == [3.0, 1.0, 1.0]
        assert inner.queries == [questions[:2], questions[2:4], questions[4:]]
        for question in questions:
            cached.embed_query(question)
    assert len(inner.queries) == 3 and inner.passages == []
    # Written to disk: a new object serves them without being told about them again.
    later = Counting()
    again = CachedEmbedder(later, cache_dir=tmp_path)
    assert [again.embed_query(q)[0] for q in questions] == [3.0] * 5
    assert later.queries == []


def test_an_announcement_costs_nothing_when_no_query_is_asked(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    with expected_queries(["甲", "乙"]):
        cached(["丙"])  # passages only
    assert inner.queries == [] and inner.passages == [["丙"]]
    assert set(read_cache(cached.folder)) == {text_hash("丙")}  # no query written


def test_nested_announcements_add_up_and_each_exit_restores_the_outer_one(tmp_path):
    def first_batch(name: str, query: str) -> list[str]:
        inner = Counting(name)
        CachedEmbedder(inner, cache_dir=tmp_path).embed_query(query)
        return sorted(inner.queries[0])

    with expected_queries(["a1", "a2"]):
        with expected_queries(["b1"]):
            assert first_batch("inside-both", "a1") == ["a1", "a2", "b1"]
        assert first_batch("outer-only", "a1") == ["a1", "a2"]  # b1 no longer announced
        assert first_batch("outer-only-b", "b1") == ["b1"]  # asked alone
    assert first_batch("none", "a1") == ["a1"]
    assert read_cache(tmp_path / "none") == {}


def test_an_announcement_ends_even_when_the_loop_fails(tmp_path):
    with pytest.raises(RuntimeError), expected_queries(["甲", "乙", "丙"]):
        raise RuntimeError("the evaluation failed")
    inner = Counting()
    CachedEmbedder(inner, cache_dir=tmp_path).embed_query("甲")
    assert inner.queries == [["甲"]]


def test_empty_inputs_and_bad_text(tmp_path):
    inner = Counting()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    assert cached([]).shape == (0, 3) and cached.embed_queries([]).shape == (0, 3)
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        cached(["ok", "bad\ud800"])
    with pytest.raises(ValueError, match="query"):
        cached.embed_query("bad\ud800")
    assert inner.passages == [] and inner.queries == []
    assert not cached.folder.exists()  # nothing written for nothing embedded
