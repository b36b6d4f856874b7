"""Save a built knowledge base to a folder and load it back, much faster than rebuilding.

What is saved: the nodes of every group built so far (text, uid, parent, metadata; QA
answers), the document's ``global_metadata``, every BM25 index, and every dense vector
matrix with the name of the model that made it. ``manifest.json`` records a format
marker and version, the library version, what each file holds and the SHA-256 checksum
of every file.

What is promised
----------------
* **Nothing of yours is deleted.** :func:`save` replaces a folder only when it is empty
  or holds a knowledge base saved by this module and nothing else: a ``manifest.json``
  with this module's format marker (or, if that manifest is damaged, ``nodes.jsonl.gz``),
  files named as a save names them, and at most ``.DS_Store`` / ``Thumbs.db`` /
  ``desktop.ini``. Any other folder — your corpus, your notes, a knowledge base you
  added a file to — is refused with a ``ValueError`` that says what to do, and so is
  the folder Python runs in (``save(doc, ".")``). Besides ``NAME`` itself, a save
  touches only its own helpers beside it: ``.NAME-xxxxxxxx`` (a copy being written),
  ``.NAME-old`` (the previous copy, during the swap) and ``.NAME.lock``.
* **A crash leaves the old copy or the new one**, and **saves take turns**: the new copy
  is written beside the old one and swapped in with two renames, under a lock; the next
  save or load repairs what a crash left. How, and how far that holds after a power cut
  or on a network drive: :mod:`course_lib.store.safe_folder`.
* **Loading trusts nothing.** The manifest is checked against a schema (every field and
  its type); every file it names must be a plain name inside the folder and carry a
  checksum, which is checked before the file is parsed (:mod:`course_lib.store.saved_files`).
  Anything wrong — a damaged or missing file, another format version, vectors from
  another model, bytes that do not parse — raises :class:`PersistError` naming the file
  and the reason, and :func:`load_or_build` then rebuilds and saves afresh. A load that
  overlaps a save never mixes the two copies: if its read fails while a save is under
  way, it waits for the save's lock and reads again.

What is not promised: checksums detect damage, not forgery — whoever can write the
folder can write a matching manifest. Loading such a folder still reads nothing outside
it and runs no code, but its contents are whatever it says.

>>> import tempfile
>>> doc = Document(texts={"a.txt": "长城很长。\\n茶很香。"})
>>> doc.create_node_group("line", transform=lambda text: text.split("\\n"))
>>> [node.text for node in doc.get_nodes("line")]  # built, so it will be saved
['长城很长。', '茶很香。']
>>> with tempfile.TemporaryDirectory() as parent:
...     folder = save(doc, Path(parent) / "kb")
...     [node.text for node in load(folder).get_nodes("line")]
['长城很长。', '茶很香。']
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._support.validation import check_number
from ..bm25 import BM25Index
from ..document import ROOT, Document, as_embed_dict
from ..node import DocNode
from .json_shape import type_name
from .safe_folder import SafeFolder, is_regular
from .saved_files import (
    MANIFEST,
    NewFiles,
    PersistError,
    SavedFiles,
    check_shape,
    read_inside,
)

__all__ = ["PersistError", "load", "load_or_build", "save"]

FORMAT = "course_lib knowledge base"  # the marker: a manifest.json without it is not ours
# 3: the manifest holds the document's global_metadata. A folder saved with another
# version is refused with a PersistError saying so; load_or_build then rebuilds it.
FORMAT_VERSION = 3
LOCK_TIMEOUT_S = 120.0
NODES = "nodes.jsonl.gz"

# ============================================================ what a saved knowledge base is
# Shapes as in course_lib.store.json_shape. What _collect writes and _rebuild reads: change the
# three together (and _SAVED_NAME below).
_MANIFEST_SHAPE: dict[str, Any] = {
    "format": str, "format_version": int, "course_lib_version": str,
    "sha256": {str: str},
    "groups": [str], "parents": {str: str}, "global_metadata": {str: object},
    "bm25": [{"group": str, "similarity": str, "file": str,
              "k1": float, "b": float, "avgdl": float}],
    "vectors": [{"group": str, "key": str, "file": str, "model": (str, None)}],
}
_NODE_SHAPE: dict[str, Any] = {"uid": str, "group": str, "text": str, "parent": (str, None),
                               "metadata": {str: object}, "answer": (str, None)}
# Every name _collect gives a file (a folder holding only these and a manifest is a save's).
_SAVED_NAME = re.compile(r"nodes\.jsonl\.gz|bm25-\d+(\.npz|-idf\.npy|-vocabulary\.json)"
                         r"|vectors-\d+\.npy")


def _collect(doc: Document, out: NewFiles) -> dict[str, Any]:
    """Write what ``doc`` has built (nodes, BM25 indexes, dense vectors) through ``out``;
    return the manifest's fields that describe it (see ``_MANIFEST_SHAPE``).

    The only place that reads a Document for saving.
    """
    groups = doc.built_groups()
    records = [_node_record(node) for group in groups for node in doc.get_nodes(group)]
    try:
        out.jsonl_gz(NODES, records)
    except (TypeError, ValueError) as error:  # a metadata value JSON cannot store
        raise TypeError(_unsavable(records, error)) from None
    indexes, vectors = [], []
    for group in groups:
        index = doc.index(group)
        for similarity, bm25 in index.bm25.items():
            stem = f"bm25-{len(indexes)}"
            out.sparse_matrix(f"{stem}.npz", bm25.matrix)
            out.npy(f"{stem}-idf.npy", bm25.idf)
            out.json(f"{stem}-vocabulary.json",
                     sorted(bm25.vocabulary, key=bm25.vocabulary.get))
            indexes.append({"group": group, "similarity": similarity, "file": stem,
                            "k1": bm25.k1, "b": bm25.b, "avgdl": bm25.avgdl})
        for key, matrix in index.vectors.items():
            if isinstance(matrix, np.ndarray):  # sparse vectors are cheap: recomputed
                stem = f"vectors-{len(vectors)}"
                out.npy(f"{stem}.npy", matrix)
                vectors.append({"group": group, "key": key, "file": stem,
                                "model": _model_name(doc.embed.get(key))})
    parents = {group: doc.parent_of(group) for group in groups if group != ROOT}
    return {"groups": groups, "parents": parents, "global_metadata": doc.global_metadata,
            "bm25": indexes, "vectors": vectors}


def _rebuild(manifest: dict[str, Any], files: SavedFiles,
             embed: dict[str, Callable[[list[str]], Any]]) -> Document:
    """The Document a checked ``manifest`` describes, its files read through ``files``.

    The only place that builds a Document from saved parts. A constructor's
    ``ValueError`` is re-raised as :class:`PersistError` naming the files involved
    (and :func:`load` turns any other that slips through into one).
    """
    nodes_file = files.shown / NODES
    by_uid: dict[str, DocNode] = {}
    sizes = dict.fromkeys(manifest["groups"], 0)
    for number, record in enumerate(files.jsonl_gz(NODES, shape=_NODE_SHAPE), 1):
        if record["uid"] in by_uid:
            raise PersistError(f"{nodes_file} line {number}: uid {record['uid']!r} repeats")
        if record["group"] not in manifest["groups"]:
            raise PersistError(f"{nodes_file} line {number}: group {record['group']!r} is "
                               f"not among the manifest's groups {manifest['groups']}")
        parent = None
        if record["parent"] is not None:
            parent = by_uid.get(record["parent"])
            if parent is None:
                raise PersistError(f"{nodes_file} line {number}: parent {record['parent']!r}"
                                   " is not a node on an earlier line")
        by_uid[record["uid"]] = _restore_node(record, parent)
        sizes[record["group"]] += 1
    try:
        doc = Document.from_nodes(by_uid.values(), manifest["parents"], embed=embed,
                                  global_metadata=manifest["global_metadata"])
    except (ValueError, TypeError) as error:
        raise PersistError(f"{nodes_file} and the groups in {MANIFEST} do not fit "
                           f"together: {error}") from error

    for entry in manifest["bm25"]:
        stem = entry["file"]
        vocabulary = files.json(f"{stem}-vocabulary.json", shape=[str], what="the vocabulary")
        try:
            index = BM25Index.from_arrays(files.sparse_matrix(f"{stem}.npz"),
                                          files.npy(f"{stem}-idf.npy"), vocabulary,
                                          entry["k1"], entry["b"], entry["avgdl"])
        except ValueError as error:
            raise PersistError(f"{files.shown / stem}.npz, -idf.npy and -vocabulary.json do "
                               f"not make a BM25 index: {error}") from error
        size = sizes.get(entry["group"], 0)
        if len(index) != size:
            raise PersistError(f"{files.shown / stem}.npz scores {len(index)} nodes; group "
                               f"{entry['group']!r} has {size}")
        doc.index(entry["group"]).bm25[entry["similarity"]] = index
    for entry in manifest["vectors"]:
        embedder = doc.embed.get(entry["key"])
        if embedder is None:
            continue  # vectors without their embedder cannot embed queries: leave them
        if _model_name(embedder) != entry["model"]:
            raise PersistError(f"vectors of {entry['group']!r}/{entry['key']!r} were made by "
                               f"{entry['model']!r}, but the embedder given is "
                               f"{_model_name(embedder)!r}")
        vectors = files.npy(f"{entry['file']}.npy")
        if vectors.ndim != 2 or len(vectors) != sizes.get(entry["group"], 0):
            raise PersistError(f"{files.shown / entry['file']}.npy holds vectors of shape "
                               f"{vectors.shape}; group {entry['group']!r} has "
                               f"{sizes.get(entry['group'], 0)} nodes")
        doc.index(entry["group"]).attach_vectors(entry["key"], vectors)
    return doc


def _unsavable(records: list[dict[str, Any]], error: Exception) -> str:
    """Which node's which metadata field JSON could not store (for the error message)."""
    for record in records:
        for key, value in record["metadata"].items():
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                return (f"cannot save node {record['uid']!r} (group {record['group']!r}): its "
                        f"metadata field {key!r} holds {type(value).__name__} {value!r:.60}, "
                        "which JSON cannot store; keep metadata to strings, numbers, booleans, "
                        "None and lists or dicts of them (a set: sorted(...) as a list)")
    return f"cannot save the nodes: {error}"


def _node_record(node: DocNode) -> dict[str, Any]:
    return {"uid": node.uid, "group": node.group, "text": node.text,
            "parent": node.parent.uid if node.parent is not None else None,
            "metadata": node.metadata, "answer": getattr(node, "answer", None)}


def _restore_node(record: dict[str, Any], parent: DocNode | None) -> DocNode:
    fields = {"text": record["text"], "group": record["group"], "uid": record["uid"],
              "parent": parent, "metadata": record["metadata"]}
    if record["answer"] is not None:
        from ..llm_groups import QADocNode

        return QADocNode(**fields, answer=record["answer"])
    return DocNode(**fields)


def _model_name(embedder: Any) -> str | None:
    name = getattr(embedder, "name", None)
    return None if name is None else str(name)


# ============================================================ which folders are ours
def _kb_folder(directory: str | os.PathLike[str]) -> SafeFolder:
    return SafeFolder(directory, "a saved knowledge base", _why_not_saved, last=MANIFEST)


def _why_not_saved(folder: Path, names: list[str]) -> str | None:
    """``None`` if ``folder``, holding ``names``, is a knowledge base a save wrote and
    nothing else (a copy whose manifest is damaged is recognised by its nodes file and
    file names); otherwise the reason, for a message."""
    listed = _listed_files(folder)
    if listed is None and NODES not in names:
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        return f"it has no {MANIFEST} written by course_lib.store.persist; it holds {shown}"
    extra = [name for name in names if not (
        (name == MANIFEST or name in (listed or set()) or _SAVED_NAME.fullmatch(name))
        and is_regular(folder / name))]
    if extra:
        return f"besides a saved knowledge base it holds {', '.join(extra[:4])}"
    return None


def _listed_files(folder: Path) -> set[str] | None:
    """The files listed by ``folder``'s manifest if it is one this module wrote
    (format marker, or a version-1 manifest from before the marker); else ``None``."""
    try:
        manifest = _manifest_json(folder, folder / MANIFEST)
    except PersistError:
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("sha256"), dict):
        return None
    version_1 = manifest.get("format_version") == 1 and "course_lib_version" in manifest
    if manifest.get("format") != FORMAT and not version_1:
        return None
    return set(manifest["sha256"])


# ============================================================ the public functions
def save(doc: Document, directory: str | os.PathLike[str], *,
         timeout: float = LOCK_TIMEOUT_S) -> Path:
    """Write ``doc``'s built groups, BM25 indexes and dense vectors to ``directory``.

    ``directory`` must be new, empty, or a knowledge base saved here (it is then
    replaced as a whole, in one step); anything else raises ``ValueError`` and nothing
    is touched. A save of the same folder in progress elsewhere is waited for, up to
    ``timeout`` seconds (then ``TimeoutError``). Returns ``Path(directory)``.
    """
    from .._support.version import __version__

    if not isinstance(doc, Document):
        raise TypeError(f"save(doc, directory): doc must be a Document, got {type(doc).__name__}")
    timeout = check_number(timeout, "timeout", low=0)

    def write(folder: Path) -> None:
        out = NewFiles(folder)
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                    "course_lib_version": __version__, **_collect(doc, out),
                    "sha256": out.sha256}
        check_shape(manifest, _MANIFEST_SHAPE, "manifest", "the manifest being saved")
        out.manifest(manifest)

    _kb_folder(directory).replace(write, timeout=timeout)
    return Path(directory)


def load(directory: str | os.PathLike[str], embed: Any = None) -> Document:
    """Load a saved knowledge base. ``embed`` re-attaches embedders (functions are not
    saved); saved vectors are reused only when the embedder's ``name`` matches.

    Anything wrong with the folder raises :class:`PersistError` with the reason. If the
    read fails while a save of the folder is under way (or has just swapped a new copy
    in, or was interrupted mid-swap), load waits for that save's lock, repairs an
    interrupted swap, and reads again.
    """
    embed = as_embed_dict(embed)  # a wrong argument is a TypeError, not a damaged folder
    kb = _kb_folder(directory)
    shown = Path(directory)

    def read() -> Document:
        manifest = _read_manifest(kb.path, shown)
        files = SavedFiles(kb.path, shown, manifest["sha256"])
        try:
            doc = _rebuild(manifest, files, embed)
        except (ValueError, TypeError, KeyError, IndexError) as error:
            raise PersistError(f"{shown} cannot be loaded: {error}") from error
        files.check_unread()
        return doc

    return kb.read(read, PersistError, timeout=LOCK_TIMEOUT_S)


def _read_manifest(folder: Path, shown: Path) -> dict[str, Any]:
    """``folder``'s manifest, checked field by field; else :class:`PersistError`."""
    from .._support.version import __version__

    if not os.path.lexists(folder / MANIFEST):
        raise PersistError(f"{shown} holds no saved knowledge base (no {MANIFEST})")
    where = shown / MANIFEST
    manifest = _manifest_json(folder, where)
    if not isinstance(manifest, dict):
        raise PersistError(f"{where} must hold a JSON object, got {type_name(type(manifest))}")
    if manifest.get("format", FORMAT) != FORMAT:
        raise PersistError(f"{where} is not a course_lib knowledge base (format "
                           f"{manifest['format']!r:.60})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise PersistError(f"{shown} uses format version {manifest.get('format_version')!r:.20}"
                           f"; this course_lib reads version {FORMAT_VERSION}: build the "
                           "knowledge base again and save it (load_or_build does both)")
    if manifest.get("course_lib_version") != __version__:
        raise PersistError(f"{shown} was saved by course_lib "
                           f"{manifest.get('course_lib_version')!r:.20}, this is {__version__}")
    check_shape(manifest, _MANIFEST_SHAPE, "manifest", where)
    return manifest


def _manifest_json(folder: Path, where: Path) -> Any:
    """The JSON value in ``folder``'s manifest, unchecked; :class:`PersistError` if none."""
    try:
        return json.loads(read_inside(folder, MANIFEST, where).decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise PersistError(f"{where} is damaged: {error}") from error


def load_or_build(directory: str | os.PathLike[str], build: Callable[[], Document],
                  embed: Any = None, report: Callable[[str], Any] = print) -> Document:
    """Load ``directory`` if it is sound; otherwise say why, ``build()``, save and return.

    A folder that :func:`save` would refuse (one that is not a saved knowledge base)
    raises ``ValueError`` before ``build`` runs.
    """
    try:
        return load(directory, embed=embed)
    except PersistError as error:
        _kb_folder(directory).check_replaceable()  # refuse before saying "rebuilding"
        report(f"rebuilding the knowledge base: {error}")
    doc = build()
    if not isinstance(doc, Document):
        raise TypeError(f"build() must return a Document, got {type(doc).__name__}")
    save(doc, directory)
    return doc
