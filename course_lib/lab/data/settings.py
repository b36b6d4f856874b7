"""Where each upgrade should win: knowledge bases a real user meets, built from the files.

On CMRC 2018 every question was written by looking at one paragraph, and a paragraph is
a whole article, so one BM25 line finds almost every answer and the upgrades have no
room. These settings give them room — and keep beside each a setting where its
mechanism should *not* help, so the measurement decides:

* :func:`drcd_articles` — **articles as files** (DRCD, Traditional Chinese): each
  article one document, its paragraphs in order. Chunking and the node-group tree now
  decide what a retrieved unit holds; sibling paragraphs share the question's topic.
* :func:`cross_script` — **questions in the other script**: the same questions converted
  to Simplified with OpenCC, asked of the Traditional knowledge base (a mainland reader
  querying a Taiwanese wiki).
* :func:`mixed_kb` — **one knowledge base, two corpora**: the course's held-out CMRC 2018
  dev paragraphs (Simplified) and DRCD test (Traditional) together, 1,256 paragraphs,
  questions from both.

Every setting comes in two halves (:func:`course_lib.lab.data.datasets.split_by_article`):
settings are chosen on ``"choose"`` and reported on ``"report"``. The knowledge base is
the same in both halves (all of DRCD; CMRC's held-out paragraphs + DRCD), only the
questions differ:
a paragraph of the other half stays in the knowledge base as a distractor, its questions
are not asked. No gold label crosses the split.

>>> kb = drcd_articles("choose")                  # doctest: +SKIP
>>> len(kb.files), len(kb.paragraphs)              # doctest: +SKIP
(378, 1000)
"""

from __future__ import annotations

from dataclasses import replace

from ...scripts import convert
from .datasets import (
    HALVES,
    HELD_OUT,
    KnowledgeBase,
    SquadSet,
    article_half,
    build_article_knowledge_base,
    build_knowledge_base,
    fetch_cmrc2018,
    keep_paragraphs,
    load_drcd,
    load_squad,
    merge_squads,
)


def _half_questions(kb: KnowledgeBase, squad: SquadSet, half: str | None) -> KnowledgeBase:
    """``kb`` asking only the questions of ``half``'s articles (all for ``None``)."""
    if half is None:
        return kb
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES} or None, got {half!r}")
    in_half = {pid for a in squad.articles if article_half(a.key) == half
               for pid in a.paragraph_ids}
    asked = [q for q in kb.questions if q.paragraph_id in in_half]
    ids = {q.id for q in asked}
    return replace(kb, questions=asked,
                   fixed_offsets=[i for i in kb.fixed_offsets if i in ids],
                   dropped_answers=[i for i in kb.dropped_answers if i in ids])


def drcd_articles(half: str | None = None) -> KnowledgeBase:
    """DRCD test, articles as files (378 files, 1,000 paragraphs), asking the questions
    of ``half`` (``"choose"``, ``"report"``, or ``None`` for all 3,493)."""
    squad = load_drcd()
    return _half_questions(build_article_knowledge_base(squad), squad, half)


def cross_script(kb: KnowledgeBase, config: str = "t2s") -> KnowledgeBase:
    """``kb`` with every question converted by OpenCC (``"t2s"``: to Simplified), the
    knowledge base unchanged: the same questions as a reader of the other script asks
    them. Gold, answers and ids stay as they were (the answer is still in the
    knowledge base's script)."""
    questions = [replace(q, question=convert(q.question, config)) for q in kb.questions]
    return replace(kb, questions=questions)


def mixed_kb(half: str | None = None) -> KnowledgeBase:
    """The course's held-out CMRC 2018 dev set (its first 256 paragraphs, Simplified, 10
    per file as the chapter's: :data:`~course_lib.lab.data.datasets.HELD_OUT`) and DRCD test
    (1,000 paragraphs, Traditional, articles as files) as one knowledge base of 1,256
    paragraphs, asking the questions of ``half`` of both (CMRC's articles are its
    paragraphs). The whole dev set (848 paragraphs) would cost set-up nine more minutes
    of e5 for the same lesson: distractors in the other script."""
    cmrc = load_squad(fetch_cmrc2018(split=HELD_OUT["split"]))
    cmrc = keep_paragraphs(cmrc, {pid for pid, _ in cmrc.paragraphs[:HELD_OUT["paragraphs"]]})
    drcd = load_drcd()
    ids = [pid for pid, _ in cmrc.paragraphs]
    width = len(str(len(ids) // 10 + 1))
    groups = [(f"cmrc_{start // 10 + 1:0{width}d}.txt", ids[start:start + 10])
              for start in range(0, len(ids), 10)]
    groups += [(f"drcd_{a.key}.txt", a.paragraph_ids) for a in drcd.articles]
    both = merge_squads(cmrc, drcd)
    return _half_questions(build_knowledge_base(both, groups=groups), both, half)


def embed_settings() -> int:
    """Fill the e5 cache for these settings, once, at set-up (``python -m course_lib data
    --embed``): the paragraphs of :func:`mixed_kb` (CMRC's held-out set + DRCD: every
    paragraph of :func:`drcd_articles` too) and the sentences the offline reranker reads, the
    questions of both corpora, and DRCD's questions in Simplified (:func:`cross_script`).
    USE is not embedded here. Returns how many texts were embedded or found cached.
    """
    from ...embeddings import default_embedder
    from ...rerank import FeatureReranker, candidate_sentences
    from .kb_document import knowledge_base_document

    kb = mixed_kb()
    doc = knowledge_base_document(kb, embed=True)
    doc.index("paragraph").embeddings("e5")
    paragraphs = [n.text for n in doc.get_nodes("paragraph")]
    questions = [q.question for q in kb.questions]
    simplified = [convert(q.question, "t2s") for q in kb.questions
                  if q.file_name.startswith("drcd_")]
    default_embedder("e5").embed_queries(questions + simplified)
    FeatureReranker().prepare(paragraphs)  # and their sentences: the largest part, last
    return (len(paragraphs) + sum(len(candidate_sentences(p)) for p in paragraphs)
            + len(questions) + len(simplified))
