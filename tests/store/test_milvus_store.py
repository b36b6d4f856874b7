"""Milvus Lite: a real vector database in a local folder (pip-installed, no server)."""

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from bad_inputs import (
    Case,
    clear_error_test,
    plain_file,
)
from pymilvus import DataType

from course_lib import Document, Retriever
from course_lib.store.milvus_store import MilvusStore, MilvusStoreError, fingerprint


@pytest.fixture()
def store(tmp_path):
    milvus = MilvusStore(uri=str(tmp_path / "milvus.db"))
    yield milvus
    milvus.close()


def vectors_for(texts):
    rng = np.random.default_rng(0)
    table = rng.normal(size=(100, 16))
    return np.array([table[int(t.split("_")[1]) % 100] for t in texts])


def test_milvus_search_matches_faiss(store):
    texts = {f"doc_{i}.txt": f"text_{i}" for i in range(100)}
    doc = Document(texts=texts, embed={"v": vectors_for}, store=store)
    queries = [f"text_{i}" for i in (3, 42, 77)]
    for query in queries:
        exact = Retriever(doc, "root", "cosine", topk=5)(query)
        milvus = Retriever(doc, "root", "cosine", topk=5, index="milvus")(query)
        assert [n.uid for n in milvus] == [n.uid for n in exact]
        np.testing.assert_allclose([n.score for n in milvus], [n.score for n in exact],
                                   atol=1e-4)
    assert store.count("root", "v") == 100
    filtered = Retriever(doc, "root", "cosine", topk=3, index="milvus",
                         filters={"file_name": ["doc_7.txt", "doc_8.txt"]})("text_7")
    assert [n.uid for n in filtered][0] == "doc_7.txt" and len(filtered) == 2


def test_milvus_store_survives_a_new_process_and_checks_its_setup(tmp_path):
    uri = str(tmp_path / "milvus.db")
    texts = {f"doc_{i}.txt": f"text_{i}" for i in range(20)}
    first = MilvusStore(uri=uri)
    Retriever(Document(texts=texts, embed={"v": vectors_for}, store=first), "root", "cosine",
              index="milvus")("text_1")
    first.close()
    reopened = MilvusStore(uri=uri)
    assert reopened.count("root", "v") == 20  # kept on disk
    reopened.close()
    with pytest.raises(ValueError, match="needs a vector store"):
        Retriever(Document(texts=texts, embed={"v": vectors_for}), "root", "cosine",
                  index="milvus")
    with pytest.raises(ValueError, match="metric"):
        MilvusStore(uri=uri, metric="L2")
    inner = MilvusStore(uri=uri, metric="IP")
    doc = Document(texts=texts, embed={"v": vectors_for}, store=inner)
    with pytest.raises(ValueError, match="does not match"):
        Retriever(doc, "root", "cosine", index="milvus")("text_1")
    inner.close()


# MilvusStore directly: the index layer's contract, and which collection is searched.

def node_set(prefix, numbers):
    """uids, texts and vectors of a small document: node i is ``text_{numbers[i]}``."""
    texts = [f"text_{i}" for i in numbers]
    return [f"{prefix}{i}" for i in range(len(numbers))], texts, vectors_for(texts)


def test_two_documents_sharing_a_store_get_their_own_results(store):
    a = node_set("a", range(0, 10))
    b = node_set("b", range(10, 20))  # same group, key and count; other texts
    for uids, texts, vectors in (a, b, a):  # alternating: A, B, A
        index = store.vector_index("root", "v", uids, texts, vectors, model="m")
        ids, scores = index.search(vectors[2], k=3)
        assert ids[0] == 2 and scores[0] == pytest.approx(1.0, abs=1e-5)
        assert ids.dtype == np.int64 and scores.dtype == np.float64
    names = {store.vector_index("root", "v", *docs, model="m").collection for docs in (a, b)}
    assert len(names) == 2 and set(store.collections("root", "v")) == names


def test_same_texts_under_another_model_or_dimension_get_another_collection(store):
    uids, texts, vectors = node_set("a", range(10))
    first = store.vector_index("root", "v", uids, texts, vectors, model="m")
    narrow = store.vector_index("root", "v", uids, texts, vectors[:, :8], model="m")
    assert narrow.search(vectors[4, :8], k=1)[0].tolist() == [4]
    assert narrow.dimension == 8 and narrow.collection != first.collection
    renamed = store.vector_index("root", "v", uids, texts, vectors, model="other")
    assert renamed.collection != first.collection
    assert first.search(vectors[4], k=1)[0].tolist() == [4]  # the 16-d one still works
    with pytest.raises(ValueError, match="dimension 16 but collection"):
        narrow.search(vectors[4], k=1)


@pytest.mark.parametrize("change", ["group", "key", "model", "metric", "uid", "text",
                                    "vector", "dimension"])
def test_the_fingerprint_sees_every_input(change):
    uids, texts, vectors = node_set("a", range(5))
    args = {"group": "root", "key": "v", "model": "m", "metric": "COSINE", "uids": uids,
            "texts": texts, "vectors": vectors}
    base = fingerprint(**args)
    assert fingerprint(**{**args, "vectors": vectors.copy()}) == base
    changed = {"uid": {"uids": [*uids[:-1], "other"]}, "text": {"texts": [*texts[:-1], "x"]},
               "vector": {"vectors": vectors + np.eye(5, 16) * 1e-6},
               "dimension": {"vectors": vectors[:, :8]},
               "metric": {"metric": "IP"}}.get(change, {change: "other"})
    assert fingerprint(**{**args, **changed}) != base


def test_a_build_interrupted_half_way_is_built_again(tmp_path, monkeypatch):
    store = MilvusStore(uri=str(tmp_path / "milvus.db"), batch_size=4)
    uids, texts, vectors = node_set("a", range(10))
    insert, calls = store.client.insert, []

    def crash_on_the_second_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the kernel was interrupted half-way through
        return insert(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(store.client, "insert", crash_on_the_second_batch)
        with pytest.raises(KeyboardInterrupt):
            store.vector_index("root", "v", uids, texts, vectors, model="m")
    half = store.collection("root", "v")
    assert store.count("root", "v") == 4  # one batch of rows went in
    index = store.vector_index("root", "v", uids, texts, vectors, model="m")
    assert index.collection == half and store.count("root", "v") == 10
    assert index.search(vectors[6], k=1)[0].tolist() == [6]
    store.close()


def test_old_collections_are_dropped_beyond_keep_and_others_are_left_alone(tmp_path):
    store = MilvusStore(uri=str(tmp_path / "milvus.db"), keep=2)
    mine = store.client.create_schema()  # the learner's own collection, with our prefix
    mine.add_field("id", DataType.INT64, is_primary=True)
    mine.add_field("vector", DataType.FLOAT_VECTOR, dim=4)
    store.client.create_collection("course_mine", schema=mine)
    other = store.vector_index("root", "w", *node_set("a", range(3)), model="m")
    made = [store.vector_index("root", "v", *node_set("a", range(i, i + 3)), model="m")
            for i in range(3)]
    assert store.collections("root", "v") == [made[2].collection, made[1].collection]
    assert store.collections("root", "w") == [other.collection]
    assert store.client.has_collection("course_mine")
    query = node_set("a", range(3))[2][1]
    assert made[0].search(query, k=1)[0].tolist() == [1]  # dropped, so built again
    assert store.collections("root", "v") == [made[0].collection, made[2].collection]
    store.close()


def test_search_follows_the_index_contract(store):
    uids, texts, vectors = node_set("a", [1, 2, 1, 3, 1])  # nodes 0, 2, 4 are the same vector
    index = store.vector_index("root", "v", uids, texts, vectors, model="m")
    ids, scores = index.search(vectors[0], k=2)
    assert ids.tolist() == [0, 2]  # a tie: by position
    mask = np.array([False, True, False, True, True])
    ids, scores = index.search(vectors[0], k=2, mask=mask)
    assert ids[0] == 4 and len(ids) == 2 and mask[ids].all()
    assert scores[0] == pytest.approx(1.0, abs=1e-5) and scores[0] >= scores[1]
    assert index.search(vectors[0], k=3, mask=np.zeros(5, dtype=bool))[0].size == 0
    with pytest.raises(ValueError, match="mask must be"):
        index.search(vectors[0], k=1, mask=np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match="one row per node"):
        store.vector_index("root", "v", uids, texts[:4], vectors, model="m")


def test_a_database_held_by_another_process_is_named_with_the_reason(tmp_path):
    path = tmp_path / "held.db"
    holder = subprocess.Popen(  # Milvus Lite's own lock, taken the way every opener takes it
        [sys.executable, "-c", "import sys; from milvus_lite.db import MilvusLite; "
         f"MilvusLite({str(path)!r}); print('ready', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "ready\n", holder.stderr.read()
        with pytest.raises(MilvusStoreError, match="another process") as error:
            MilvusStore(uri=str(path))
        assert str(path) in str(error.value)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_a_folder_that_cannot_hold_the_database_is_named_with_the_reason(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a folder")
    with pytest.raises(MilvusStoreError, match=r"notes\.txt is a file, not a folder"):
        MilvusStore(uri=str(blocker / "milvus.db"))
    (tmp_path / "old.db").write_bytes(b"an older Milvus Lite kept one file")
    with pytest.raises(MilvusStoreError, match="it is a file"):
        MilvusStore(uri=str(tmp_path / "old.db"))


def test_an_unwritable_folder_is_named_with_the_reason(tmp_path):
    locked = tmp_path / "read_only"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("permissions are not enforced for this user (root)")
        with pytest.raises(MilvusStoreError, match="not writable") as error:
            MilvusStore(uri=str(locked / "milvus.db"))
        assert str(locked) in str(error.value)
    finally:
        locked.chmod(0o755)


# ==================================================================== bad inputs
# MilvusStore's arguments: a wrong metric or database folder is a clear error.

def _milvus(**kwargs: Any) -> Any:
    from course_lib.store.milvus_store import MilvusStore

    return MilvusStore(**kwargs)


def _milvus_error() -> type[BaseException]:
    from course_lib.store.milvus_store import MilvusStoreError

    return MilvusStoreError


STORE_CASES: list[Case] = [
    Case("stores", "milvus-metric-unknown", lambda tmp: _milvus(metric="L2"), ValueError,
         r"metric must be 'COSINE' or 'IP', got 'L2'"),
    Case("stores", "milvus-folder-missing",
         lambda tmp: _milvus(uri=str(tmp / "missing" / "m.db")), _milvus_error(),
         r"cannot open the Milvus Lite database .*m\.db: the folder .*missing does not exist"),
    Case("stores", "milvus-folder-is-a-file",
         lambda tmp: _milvus(uri=str(plain_file(tmp) / "m.db")), _milvus_error(),
         r"cannot open the Milvus Lite database .*: .*file is a file, not a folder"),
]


test_bad_input_gets_a_clear_error = clear_error_test(STORE_CASES)
