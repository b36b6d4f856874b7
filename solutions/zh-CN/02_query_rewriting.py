"""参考解答：02 查询改写。

`02_query_rewriting_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：bm25 = lambda k: Retriever(doc, 'paragraph', 'bm25_chinese', topk=k)（返回前 k 个段落的检索器）；
对每一对 (a, b)，texts = {n.text for n in retrieve(a.question + b.question)}；满足 a.paragraph in texts and
b.paragraph in texts 时计数；share = count / len(pairs)，分别对 retrieve = bm25(2) 和
retrieve = SubQuestionRetriever(bm25(1), OfflineLLM()) 计算。

评分标准 sub-questions：
- 2 分：普通 BM25 给每个段落打分时，对粘在一起的问题的全部词项求和，所以词项更多或更罕见的那一半占主导：
  它的段落（以及一个与之相近的段落）可能占满两个名额，而另一半的段落被挤了出去。拆分让每个需求都有自己的
  检索和自己的名额（各取前 1 个）：成功的问题对占 0.92，对比 0.88（50 对中的 46 对，对比 44 对）。可能出错的地方：在错误的
  位置拆分或根本没有拆分（离线替身在问号处拆分；LLM 可能改写或丢掉一部分）；子问题离开另一半就含糊不清；
  一个需求要两个段落才能满足；以及每个问题多一次模型调用。
- 1 分：讲了机制却没讲名额，或者没讲它可能怎样出错。
- 0 分：“查询越多，找到的越多”（两者都交出两个段落），或者没有机制。

评分标准 fifty-pairs：
- 2 分：只有两种方法结果不一致的问题对才算数；假如全部朝一个方向，5 对给出精确 McNemar p 0.0625，6 对给出
  0.031，所以至少要 6 对（如果有朝另一个方向的，还要更多）。这个结果由 2 对决定（50 对中 44 对比 46 对，p 最小
  也是 0.5）：这是一个方向，不是一个发现。在下任何结论之前：事先确定比较方案，在多得多的问题对上运行它，
  并在留出的 dev 集上运行。
- 1 分：问题对的数目算对了却没有解读结果，或者解读了结果却没有给出数目。
- 0 分：把 0.88 与 0.92 相比，好像 4 个百分点就是一个发现；或者不配对地检验两个总数。
"""

# %%
from course_lib import Retriever, knowledge_base_document, load_cmrc2018_kb
from course_lib.llm import OfflineLLM
from course_lib.rewriting import SubQuestionRetriever

kb = load_cmrc2018_kb()
doc = knowledge_base_document(kb)


def bm25(topk):
    return Retriever(doc, "paragraph", "bm25_chinese", topk=topk)


def shares(plain, sub, pairs, both=True):
    """For each retriever, the share of pairs whose glued question gets both gold
    paragraphs back (with ``both=False``: at least one of them)."""
    rule = all if both else any

    def share(retrieve):
        return sum(rule(gold in {n.text for n in retrieve(a.question + b.question)}
                        for gold in (a.paragraph, b.paragraph)) for a, b in pairs) / len(pairs)

    return share(plain), share(sub)


pairs = [(kb.questions[i], kb.questions[i + 500]) for i in range(0, 100, 2)]
plain_share, sub_share = shares(bm25(2), SubQuestionRetriever(bm25(1), OfflineLLM()), pairs)
print(plain_share, sub_share)

# %%
# Splitting lets each need claim its own slot: here 46 pairs against 44 of 50. Two pairs
# decide, too few for a paired test (at best exact McNemar p = 0.5): read it as a direction
# to test on more pairs, and on dev, not as a finding.
assert sub_share > plain_share


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    sub1 = SubQuestionRetriever(bm25(1), OfflineLLM())

    def answers(plain, sub, pairs=pairs, both=True):
        return dict(zip(("plain_share", "sub_share"), shares(plain, sub, pairs, both),
                        strict=True))

    return {
        "Your plain BM25 returned 1 paragraph for two needs: let it return its top 2, as many "
        "as the two sub-questions bring together.": answers(bm25(1), sub1),
        "Each of your sub-questions retrieved 2 paragraphs (4 in all): give SubQuestionRetriever "
        "a top-1 retriever, so both methods hand over 2 paragraphs.":
            answers(bm25(2), SubQuestionRetriever(bm25(2), OfflineLLM())),
        "You counted the pairs where either gold paragraph was retrieved; count only those "
        "where both are.": answers(bm25(2), sub1, both=False),
        "You glued neighbouring questions (one and the next), which often ask about the same "
        "paragraph; glue each question with the one 500 places later.":
            answers(bm25(2), sub1, [(kb.questions[i], kb.questions[i + 1])
                                    for i in range(0, 100, 2)]),
        "You made 100 pairs (every one of the first 100 questions); the exercise takes every "
        "second one: 50 pairs.":
            answers(bm25(2), sub1, [(kb.questions[i], kb.questions[i + 500])
                                    for i in range(100)]),
    }
