"""Lines of course_lib: the core a learner reads (in reading order) and the plumbing.

``python tools/line_counts.py`` prints what the README's library section states; a test
(tests/test_readme.py) checks that the README says the same.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "course_lib"

# The order to read the core in: each module imports only those before it, and three import
# later ideas (LATER; tests/repo/test_readme_library.py checks both against the imports).
READING_PATH = ("ranking", "node", "readers", "text_splitter", "scripts", "text_tokens",
                "coverage", "bm25", "vectors", "similarity", "index", "document", "fusion",
                "retriever", "rerank_models", "rerank", "flow", "rag", "metrics")
# The imports of the reading path from the other ideas: the embedders and the LLM.
LATER = {"rerank_models": ("embedding_base",), "rerank": ("embeddings",), "rag": ("llm",)}
# The rest of the RAG ideas, read when their notebook comes up.
MORE_IDEAS = ("embedding_base", "e5_torch", "embedding_models", "embedding_remote",
              "embedding_shards", "embedding_cache", "embeddings", "llm", "llm_parsing",
              "word_tags", "offline_llm", "llm_groups", "rewriting", "related", "asked_type",
              "answerability")
PARTS = {"lab": "lab/", "store": "store/", "_support": "_support/"}


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def counts() -> dict[str, int]:
    """``reading path``, ``other ideas``, each part's total, and ``plumbing``."""
    result = {"reading path": sum(lines(PACKAGE / f"{m}.py") for m in READING_PATH),
              "other ideas": sum(lines(PACKAGE / f"{m}.py") for m in MORE_IDEAS)}
    root = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    unlisted = root - set(READING_PATH) - set(MORE_IDEAS)
    if unlisted:
        raise SystemExit(f"modules at the package root in neither list: {sorted(unlisted)}")
    for part in PARTS:
        result[part] = sum(lines(p) for p in (PACKAGE / part).rglob("*.py"))
    result["plumbing"] = sum(result[part] for part in PARTS)
    return result


if __name__ == "__main__":
    for name, value in counts().items():
        print(f"{name}: {value:,}")
