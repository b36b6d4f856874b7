"""参考解答：06 嵌入与相似度。

`06_embeddings_and_similarity_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：建两个检索器，dot = Retriever(multi, 'paragraph', 'dot', topk=1, embed_keys=['sparse']) 和 chars =
Retriever(cmrc, 'paragraph', 'bm25_char', topk=1)；对每个问题 q，比较两者排第一的段落 dot(q.question)[0] 与
chars(q.question)[0]：文本相同吗？它们的 .score 值呢？

评分标准 same-formula：
- 2 分：两者在每个问题上都一致，排第一的段落和分数都相同（比例 1.0，除去舍入误差，最大差距为 0）：说明是同一个
  公式。BM25 是对查询的各个词项求和，每一项是一个只取决于该词项和该段落的权重（idf 和饱和后的词频）；稀疏
  嵌入器把这些权重原样存进段落的向量，把查询的词项计数存进查询的向量，所以它们的点积就是这个和。稀疏键就是
  以嵌入形式出现的 BM25：嵌入能去的地方它都能去 —— 进入向量存储，作为同一个文档上稠密键旁边的第二个键，与稠密键融合。
- 1 分：说“同一个公式”却没有说明两个向量各装着什么，或者给出了解释却没有给出用途。
- 0 分：只有数字，或者“它们很相似”。

评分标准 scales：
- 2 分：点积是一个 BM25 分数（排第一的分数均值约为 79；查询的词项越多它越大，不同问题之间差异很大），而 e5
  的余弦值落在 1 以下的一个窄带里（约 0.8 到 0.96）：直接相加，结果就只由稀疏键决定，而且没有哪个固定权重能让
  两者在每个查询上都处于同一尺度。名次则处于同一尺度（Σ 1/(60 + rank)）。名次丢掉的是：一个段落领先多少 ——
  明显的赢家和几乎打平算作一样 —— 而且在两个键意见不一时，等权投票无法判断哪个键是对的（第 3 节：融合的
  recall@1 介于两个键各自的值之间）；要在融合后的候选中做选择，需要重排序器。
- 1 分：只答出两半中的一半。
- 0 分：“分数不一样”，却没有说出后果。
"""

# %%
from course_lib import Document, Retriever, load_cmrc2018_kb, split_paragraphs
from course_lib.embeddings import CharNgramSparseEmbedder, default_embedder
from course_lib.lab.measure.evaluation import retrieve_all
from course_lib.lab.systems.pipelines import knowledge_base_document

kb = load_cmrc2018_kb()
sparse = Document(texts=kb.files, embed={"sparse": CharNgramSparseEmbedder()})
sparse.create_node_group("paragraph", transform=split_paragraphs)
cmrc = knowledge_base_document(kb)
chars_first = [r[0] for r in retrieve_all(kb, Retriever(cmrc, "paragraph", "bm25_char", topk=1))]


def compare(retriever, reference=chars_first):
    """(same first paragraph share, mean first score, largest first-score gap) against
    the reference's first paragraphs."""
    firsts = [r[0] for r in retrieve_all(kb, retriever)]
    same = sum(a.text == b.text for a, b in zip(firsts, reference, strict=True)) / len(firsts)
    mean = sum(a.score for a in firsts) / len(firsts)
    gap = max(abs(a.score - b.score) for a, b in zip(firsts, reference, strict=True))
    return same, mean, gap


dot = Retriever(sparse, "paragraph", "dot", topk=1, embed_keys=["sparse"])
same_first_share, mean_first_score, largest_score_gap = compare(dot)
print(same_first_share, mean_first_score, largest_score_gap)

# %%
# Same formula, same numbers: every question gets the same first paragraph with the same
# score, so the sparse dot product *is* BM25 on characters.
assert same_first_share == 1.0 and largest_score_gap < 1e-6
assert mean_first_score > 1.0  # a BM25 scale, not a cosine


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    def answers(values):
        return dict(zip(("same_first_share", "mean_first_score", "largest_score_gap"), values,
                        strict=True))

    multi = Document(texts=kb.files, embed={"dense": default_embedder(),
                                            "sparse": CharNgramSparseEmbedder()})
    multi.create_node_group("paragraph", transform=split_paragraphs)
    cosine = compare(Retriever(multi, "paragraph", "cosine", topk=1, embed_keys=["sparse"]))
    fused = compare(Retriever(multi, "paragraph", "dot", topk=1))
    words_first = [r[0] for r in retrieve_all(kb, Retriever(cmrc, "paragraph", "bm25_chinese",
                                                            topk=1))]
    words = compare(dot, reference=words_first)
    return {
        "Your scores are below 1: the cosine divides by the vectors' lengths. The exercise "
        "asks for the plain dot product (the 'dot' similarity).": answers(cosine),
        "Your scores are sums of 1/(60 + rank): with both embedding keys the retriever fuses "
        "the dense and the sparse key by reciprocal rank. Search the sparse key alone.":
            answers(fused),
        "You compared with BM25 on jieba words (bm25_chinese); the sparse embedder's terms "
        "are character n-grams: compare with bm25_char.":
            {"same_first_share": words[0], "largest_score_gap": words[2]},
    }
