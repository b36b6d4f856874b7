"""Save a built knowledge base to a folder and load it back, much faster than rebuilding.

What is saved: the nodes of every group built so far (text, uid, parent, metadata; QA
answers), every BM25 index, and every dense embedding matrix with the name of the
model that made it. A ``manifest.json`` records the format version, the library
version and a SHA-256 checksum of every file.

Loading checks all of that. A damaged file, a different format version or vectors
from another model raise :class:`PersistError` with the reason — they are never used
silently — and :func:`load_or_build` then rebuilds and saves afresh. Writes go to a
temporary folder that replaces the target in one step, so a crash leaves the old
copy or the new one, never half of each.

>>> doc = Document(texts={"a.txt": "甲。\\n乙。"})          # doctest: +SKIP
>>> save(doc, "kb") and load("kb").get_nodes("root")[0].text  # doctest: +SKIP
'甲。\\n乙。'
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from .bm25 import BM25Index
from .datasets import sha256_of
from .document import ROOT, Document, GroupRule, _as_embed_dict
from .node import DocNode

FORMAT_VERSION = 1


class PersistError(RuntimeError):
    """A saved knowledge base cannot be used as it is (and should be rebuilt)."""


def _node_record(node: DocNode) -> dict[str, Any]:
    record = {"uid": node.uid, "group": node.group, "text": node.text,
              "parent": node.parent.uid if node.parent is not None else None,
              "metadata": node.metadata}
    answer = getattr(node, "answer", None)
    if answer is not None:
        record["answer"] = answer
    return record


def save(doc: Document, directory: str | os.PathLike[str]) -> Path:
    """Write ``doc``'s built groups, BM25 indexes and dense vectors to ``directory``."""
    from . import __version__

    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    try:
        groups = doc.built_groups()
        with gzip.open(tmp / "nodes.jsonl.gz", "wt", encoding="utf-8") as out:
            for group in groups:
                for node in doc.get_nodes(group):
                    out.write(json.dumps(_node_record(node), ensure_ascii=False) + "\n")
        indexes, vectors = [], []
        for group in groups:
            for name, value in doc.cache_for(group).items():
                if isinstance(value, BM25Index):
                    stem = f"bm25-{len(indexes)}"
                    sparse.save_npz(tmp / f"{stem}.npz", value.matrix.tocsc())
                    np.save(tmp / f"{stem}-idf.npy", value.idf)
                    vocabulary = sorted(value.vocabulary, key=value.vocabulary.get)
                    (tmp / f"{stem}-vocabulary.json").write_text(
                        json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
                    indexes.append({"group": group, "similarity": name, "file": stem,
                                    "k1": value.k1, "b": value.b, "avgdl": value.avgdl})
                elif name.startswith("embeddings:") and isinstance(value, np.ndarray):
                    key = name.split(":", 1)[1]
                    stem = f"vectors-{len(vectors)}"
                    np.save(tmp / f"{stem}.npy", value)
                    vectors.append({"group": group, "key": key, "file": stem,
                                    "model": getattr(doc.embed.get(key), "name", None)})
        rules = {name: doc.parent_of(name) for name in groups if name != ROOT}
        files = sorted(p.name for p in tmp.iterdir())
        manifest = {"format_version": FORMAT_VERSION, "course_lib_version": __version__,
                    "groups": groups, "parents": rules, "bm25": indexes, "vectors": vectors,
                    "sha256": {name: sha256_of(tmp / name) for name in files}}
        (tmp / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1),
                                           encoding="utf-8")
        if target.exists():
            old = target.with_name(f".{target.name}-old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
        return target
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load(directory: str | os.PathLike[str], embed: Any = None) -> Document:
    """Load a saved knowledge base. ``embed`` re-attaches embedders (functions are not
    saved); saved vectors are reused only when the embedder's ``name`` matches."""
    from . import __version__

    folder = Path(directory)
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise PersistError(f"{folder} holds no saved knowledge base (no manifest.json)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise PersistError(f"{manifest_path} is damaged: {error}") from error
    if manifest.get("format_version") != FORMAT_VERSION:
        raise PersistError(f"{folder} uses format version {manifest.get('format_version')}; "
                           f"this course_lib reads version {FORMAT_VERSION}")
    if manifest.get("course_lib_version") != __version__:
        raise PersistError(f"{folder} was saved by course_lib {manifest.get('course_lib_version')}"
                           f", this is {__version__}")
    for name, expected in manifest["sha256"].items():
        path = folder / name
        if not path.is_file() or sha256_of(path) != expected:
            raise PersistError(f"{path} is missing or damaged (checksum mismatch)")

    doc = Document.__new__(Document)
    doc._rules, doc._nodes, doc._caches = {}, {}, {}
    doc.embed = _as_embed_dict(embed)
    doc.store = None
    by_uid: dict[str, DocNode] = {}
    with gzip.open(folder / "nodes.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            node = _restore_node(record, by_uid)
            by_uid[node.uid] = node
            doc._nodes.setdefault(node.group, []).append(node)
            if node.parent is not None:
                node.parent.children.setdefault(node.group, []).append(node)
    for name, parent in manifest["parents"].items():
        doc._rules[name] = GroupRule(name, _restored_transform(name), parent, False, 0)
    for entry in manifest["bm25"]:
        index = BM25Index.__new__(BM25Index)
        index.matrix = sparse.load_npz(folder / f"{entry['file']}.npz").tocsc()
        index.idf = np.load(folder / f"{entry['file']}-idf.npy")
        vocabulary = json.loads((folder / f"{entry['file']}-vocabulary.json").read_text("utf-8"))
        index.vocabulary = {term: i for i, term in enumerate(vocabulary)}
        index.k1, index.b, index.avgdl = entry["k1"], entry["b"], entry["avgdl"]
        doc.cache_for(entry["group"])[entry["similarity"]] = index
    for entry in manifest["vectors"]:
        embedder = doc.embed.get(entry["key"])
        if embedder is None:
            continue  # vectors without their embedder cannot embed queries: leave them
        if getattr(embedder, "name", None) != entry["model"]:
            raise PersistError(f"vectors of {entry['group']!r}/{entry['key']!r} were made by "
                               f"{entry['model']!r}, but the embedder given is "
                               f"{getattr(embedder, 'name', None)!r}")
        vectors = np.load(folder / f"{entry['file']}.npy")
        for node, vector in zip(doc._nodes[entry["group"]], vectors, strict=True):
            node.embeddings[entry["key"]] = vector
        doc.cache_for(entry["group"])[f"embeddings:{entry['key']}"] = vectors
    return doc


def _restore_node(record: dict[str, Any], by_uid: dict[str, DocNode]) -> DocNode:
    parent = by_uid.get(record["parent"]) if record["parent"] else None
    fields = {"text": record["text"], "group": record["group"], "uid": record["uid"],
              "parent": parent, "metadata": record["metadata"]}
    if "answer" in record:
        from .llm_groups import QADocNode

        return QADocNode(**fields, answer=record["answer"])
    return DocNode(**fields)


def _restored_transform(name: str) -> Callable[[Any], Any]:
    def restored(_: Any) -> Any:
        raise PersistError(f"group {name!r} was loaded from disk; its transform was not saved")

    return restored


def load_or_build(directory: str | os.PathLike[str], build: Callable[[], Document],
                  embed: Any = None, report: Callable[[str], Any] = print) -> Document:
    """Load ``directory`` if it is sound; otherwise say why, ``build()``, save and return."""
    try:
        return load(directory, embed=embed)
    except PersistError as error:
        report(f"rebuilding the knowledge base: {error}")
    doc = build()
    save(doc, directory)
    return doc
