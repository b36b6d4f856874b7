"""The stand-in embedding service of notebook 06 and the check of its "try it"."""

import httpx
import numpy as np
import pytest

from course_lib.embeddings import E5Embedder, HTTPEmbedder
from course_lib.lab.systems.embedding_service import EmbeddingService
from course_lib.lab.teaching.try_it_checks import check_encode_embedder

TEXTS = ["泡绿茶时，水温以八十摄氏度左右为宜。", "长城是中国古代修建的大型军事防御工程。"]
QUERY = "泡绿茶的水温应该是多少？"


@pytest.fixture(scope="module")
def service():
    # e5 itself (no cache): its query and passage sides differ, so the check can tell them apart
    with EmbeddingService(E5Embedder(threads=1)) as running:
        yield running


class V1(HTTPEmbedder):
    def request_body(self, texts, is_query):
        return {"model": "m", "texts": texts, "input_type": "query" if is_query else "passage"}

    def parse_vectors(self, reply):
        return [item["embedding"] for item in reply["embeddings"]]


class Encode(HTTPEmbedder):
    """The correct answer to the "try it"."""

    def request_body(self, texts, is_query):
        return {"inputs": texts, "kind": "query" if is_query else "document"}

    def parse_vectors(self, reply):
        return reply["result"]["vectors"]


class EncodeAlwaysDocument(Encode):
    """A plausible mistake: every text sent as a document."""

    def request_body(self, texts, is_query):
        return {"inputs": texts, "kind": "document"}


class EncodeReversed(Encode):
    def parse_vectors(self, reply):
        return reply["result"]["vectors"][::-1]


def test_the_service_returns_the_embedders_vectors_exactly_through_json(service):
    client = V1(service.url + "/v1/embed", batch_size=1)
    np.testing.assert_array_equal(client.embed(TEXTS), service.embedder.embed(TEXTS))
    np.testing.assert_array_equal(client.embed_query(QUERY), service.embedder.embed_query(QUERY))
    assert service.requests[-1] == {"model": "m", "texts": [QUERY], "input_type": "query"}
    assert not np.array_equal(client.embed([QUERY])[0], client.embed_query(QUERY))


def test_the_service_says_what_a_request_lacks(service):
    reply = httpx.post(service.url + "/v2/encode", json={"inputs": "一"})
    assert reply.status_code == 400
    assert reply.json() == {"error": "inputs must be a list of strings, got '一'"}
    reply = httpx.post(service.url + "/v1/embed", json={"texts": ["一"], "input_type": "doc"})
    assert "input_type must be one of ['passage', 'query'], got 'doc'" in reply.json()["error"]
    reply = httpx.post(service.url + "/v1/embed", content=b"{not json")
    assert (reply.status_code, reply.json()) == (400, {"error": "the body is not JSON"})
    reply = httpx.post(service.url + "/v3", json={})
    assert reply.status_code == 404 and "/v2/encode" in reply.json()["error"]
    empty = httpx.post(service.url + "/v2/encode", json={"inputs": [], "kind": "query"})
    assert empty.json() == {"result": {"dim": 0, "vectors": []}}


def test_the_try_it_check_passes_the_right_class_and_says_what_is_wrong(service):
    assert check_encode_embedder(Encode, service, TEXTS, QUERY) is True
    assert "send kind='query'" in check_encode_embedder(EncodeAlwaysDocument, service, TEXTS,
                                                          QUERY)
    assert "order of the vectors" in check_encode_embedder(EncodeReversed, service, TEXTS, QUERY)
    assert "subclasses HTTPEmbedder" in check_encode_embedder(dict, service, TEXTS, QUERY)
    with pytest.raises(RuntimeError, match=r"embedding endpoint .*/v2/encode refused the "
                                           r"request \(HTTP 400\).*inputs must be a list"):
        check_encode_embedder(V1, service, TEXTS, QUERY)  # the other dialect


def test_a_closed_service_frees_its_port():
    service = EmbeddingService(E5Embedder(threads=1))
    url = service.url
    service.close()
    with pytest.raises(httpx.ConnectError):
        httpx.post(url + "/v1/embed", json={}, timeout=2)


def test_the_try_it_checks_of_notebook_08_pass_right_answers_and_name_wrong_ones():
    from course_lib.flow import INPUT, PREVIOUS, bind, parallel, pipeline
    from course_lib.lab.teaching.try_it_checks import (
        check_bind_pipeline,
        check_joined_context,
        check_swapped_score,
    )
    from course_lib.node import DocNode
    from course_lib.rerank import Reranker

    def shared(query, texts):
        return [len(set(query) & set(text)) for text in texts]

    def ordered(query, texts):  # a scorer for which the order of the pair matters
        return [len(query) - len(text) for text in texts]

    assert check_swapped_score(3.0, ordered, "abcd", "a") is True
    assert "swap the two" in check_swapped_score(-3.0, ordered, "abcd", "a")
    assert "not the score" in check_swapped_score(7.0, ordered, "abcd", "a")
    assert "a number" in check_swapped_score("3", ordered, "abcd", "a")

    right = Reranker(model=shared, topk=3, output_format="content", join="\n---\n")
    assert check_joined_context(right) is True
    assert "run into each other" in check_joined_context(
        Reranker(model=shared, topk=3, output_format="content", join=True))
    assert "not one string" in check_joined_context(
        Reranker(model=shared, topk=3, output_format="content"))
    assert "need 2 separators" in check_joined_context(
        Reranker(model=shared, topk=2, output_format="content", join="\n---\n"))
    assert "give a Reranker" in check_joined_context("\n---\n".join)

    nodes = [DocNode(t, uid=t, metadata={"file_name": f"{t}.txt"}) for t in ("长城", "西湖", "茶")]
    def find(query):
        return list(nodes)

    def by_hand(query):
        return Reranker(model=shared, topk=1, output_format="dict")(query, find(query))[0]["uid"]

    good = pipeline(parallel(find).sum, Reranker(model=shared, topk=1, output_format="dict")
                    | bind(INPUT, PREVIOUS), lambda rows: rows[0]["uid"])
    fixed = pipeline(find, Reranker(model=shared, topk=1, output_format="dict")
                     | bind("长城", PREVIOUS), lambda rows: rows[0]["uid"])
    assert check_bind_pipeline(good, by_hand, ["长城在哪", "西湖在哪"]) is True
    assert check_bind_pipeline(fixed, by_hand, ["长城在哪", "西湖在哪"]) == (
        "for '西湖在哪' the pipeline gave '长城', the plain function '西湖'")
    assert "give a pipeline" in check_bind_pipeline(by_hand, by_hand, ["长城"])
