"""Milvus Lite: a real vector database in a local file (pip-installed, no server)."""

import numpy as np
import pytest

from course_lib import Document, Retriever
from course_lib.milvus_store import MilvusStore


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
