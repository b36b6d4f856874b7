"""参考解答：13 检索评测中的统计方法。

`13_statistics_for_retrieval_solutions.ipynb` 以本文件为准：
`make sync` 从本文件生成那个笔记本。
单元格之间用 `# %%` 行分隔。

方法：在 load_held_out_kb() 上评测两条流水线；取它们逐问题的 'mrr@5' 列；
paired_difference(hybrid, e5, clusters=[q.paragraph for q in dev.questions])（以段落为簇）给出置信区间的下端和上端。

评分标准 clusters：
- 2 分：差异为 +0.0087；按段落重采样得到约 −0.0007 到 +0.019，包含 0（不可检测）；按问题重采样得到约 +0.0012 到
  +0.0167，则不包含它。一个段落的问题（在 dev 上约 3.5 个）共享这个段落的难度 —— 某条流水线读错一个段落，就会在它的
  所有问题上失分 —— 所以这 898 个问题并不是 898 次独立的抽样：逐个重采样问题会低估变异；重采样 256 个段落则把它们放在
  一起，所以置信区间更宽，也更诚实。应报告按段落重采样的那个。
- 1 分：选择正确但理由含糊（“更保守”），或者有理由却没有做出选择。
- 0 分：因为按问题重采样的那个不包含 0，就报告它。

评分标准 not-detectable：
- 2 分：可以写：在 dev 上，MRR@5 无可检测的差异 —— 这些问题分辨不出来；估计值偏向混合流水线（+0.0087），置信区间
  容许从微小的损失到约 +0.02 之间的任何结果。不可以写：“没有差异”，也不可以写“混合流水线更好”。要想得出定论：在更多
  段落上用更多问题（新段落会增加独立的证据；在同样的段落上增加问题作用不大），并事先确定检验 —— 问题数要足以达到这么
  小的差异所需的检验功效（第 3 节：一个百分点就需要数千个问题）—— 而不是再看一次 trial，也不是改用更窄的置信区间。
- 1 分：把“不显著”读成“没有差异”，或者说了该怎么做却没说它意味着什么。
- 0 分：声称混合流水线领先。
"""

# %%
from course_lib import evaluate
from course_lib.lab.data.datasets import load_held_out_kb
from course_lib.lab.measure.significance import paired_difference

dev = load_held_out_kb()
hybrid = evaluate(dev, "hybrid-rrf", with_intervals=False)["per_question"]
e5 = evaluate(dev, "cosine-paragraph", with_intervals=False)["per_question"]
paragraphs = [q.paragraph for q in dev.questions]
by_paragraph = paired_difference(hybrid["mrr@5"], e5["mrr@5"], clusters=paragraphs)
low, high = by_paragraph["low"], by_paragraph["high"]
by_question = paired_difference(hybrid["mrr@5"], e5["mrr@5"])
print(f"hybrid-rrf − cosine-paragraph, MRR@5 on dev: {by_paragraph['difference']:+.4f}; "
      f"paragraphs [{low:+.4f}, {high:+.4f}], questions [{by_question['low']:+.4f}, "
      f"{by_question['high']:+.4f}]")

# %%
# Resampling questions, the interval excludes zero; keeping paragraphs together, it does not:
# the hybrid's lead over e5 in MRR@5 is not detectable on dev.
assert low < 0 < high and by_question["low"] > 0


# %%
def mistakes():
    """Plausible wrong methods, each run for real: {hint: the answers it gives}."""
    from course_lib import load_cmrc2018_kb

    by_file = paired_difference(hybrid["mrr@5"], e5["mrr@5"],
                                clusters=[q.file_name for q in dev.questions])
    recall = paired_difference(hybrid["recall@1"], e5["recall@1"], clusters=paragraphs)
    reversed_ = paired_difference(e5["mrr@5"], hybrid["mrr@5"], clusters=paragraphs)
    trial = load_cmrc2018_kb()
    on_trial = paired_difference(
        evaluate(trial, "hybrid-rrf", with_intervals=False)["per_question"]["mrr@5"],
        evaluate(trial, "cosine-paragraph", with_intervals=False)["per_question"]["mrr@5"],
        clusters=[q.paragraph for q in trial.questions])

    def ends(row):
        return {"low": row["low"], "high": row["high"]}

    return {
        "The interval resamples single questions; the exercise resamples whole paragraphs, "
        "whose questions rise and fall together (section 2).": ends(by_question),
        "The clusters are the knowledge base's files of ten paragraphs; the exercise's cluster "
        "is each question's own paragraph.": ends(by_file),
        "That is recall@1; the exercise reports MRR@5.": ends(recall),
        "The difference is the wrong way round: the hybrid minus e5.": ends(reversed_),
        "Those are trial's questions; report on the held-out dev set.": ends(on_trial),
    }
