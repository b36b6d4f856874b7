import gzip
import hashlib
import io
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bad_inputs import (
    Case,
    clear_error_test,
    plain_file,
)

from course_lib import (
    Document,
    Retriever,
    load_sample,
    split_paragraphs,
)
from course_lib.embeddings import (
    CachedEmbedder,
    USEEmbedder,
)
from course_lib.llm import OfflineLLM
from course_lib.llm_groups import LLMParser, QADocNode
from course_lib.store import safe_folder
from course_lib.store.persist import PersistError, load, load_or_build, save


class NamedEmbedder:
    """A deterministic embedder with a model name (character counts)."""

    def __init__(self, name="chars-v1"):
        self.name = name

    def __call__(self, texts):
        return np.array([[t.count(c) for c in "长城茶奥运光Python"] + [1.0] for t in texts])


def built_document(embed=None):
    texts, _ = load_sample()
    doc = Document(texts=texts, embed=embed)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    doc.create_node_group("qa", parent="paragraph",
                          transform=LLMParser(OfflineLLM(), task_type="qa"))
    Retriever(doc, "paragraph", "bm25_chinese")("长城")
    Retriever(doc, "qa", "bm25_char")("长城")
    if embed:
        Retriever(doc, "paragraph", "cosine")("长城")
    return doc


def test_round_trip_gives_the_same_tree_indexes_and_results(tmp_path):
    doc = built_document(embed={"chars": NamedEmbedder()})
    save(doc, tmp_path / "kb")
    loaded = load(tmp_path / "kb", embed={"chars": NamedEmbedder()})
    assert loaded.built_groups() == doc.built_groups()
    for group in doc.built_groups():
        assert [(n.uid, n.text) for n in loaded.get_nodes(group)] == \
            [(n.uid, n.text) for n in doc.get_nodes(group)]
    qa = loaded.get_nodes("qa")[0]
    assert isinstance(qa, QADocNode) and qa.answer and qa.parent.group == "paragraph"
    assert qa.root.uid in {n.uid for n in loaded.get_nodes("root")}
    for similarity, group in (("bm25_chinese", "paragraph"), ("bm25_char", "qa"),
                              ("cosine", "paragraph")):
        before = [(n.uid, round(n.score, 9)) for n in Retriever(doc, group, similarity)("长城")]
        after = [(n.uid, round(n.score, 9)) for n in Retriever(loaded, group, similarity)("长城")]
        assert before == after
    # The loaded document keeps working: small-to-big and new groups.
    assert loaded.find("paragraph")([qa])[0].uid == qa.parent.uid
    loaded.create_node_group("first_char", parent="paragraph", transform=lambda t: t[:1])
    assert len(loaded.get_nodes("first_char")) == len(loaded.get_nodes("paragraph"))


def test_damage_version_and_model_mismatch_are_refused(tmp_path):
    save(built_document(embed={"chars": NamedEmbedder()}), tmp_path / "kb")
    with pytest.raises(PersistError, match="made by 'chars-v1'"):
        load(tmp_path / "kb", embed={"chars": NamedEmbedder("chars-v2")})
    index_file = next((tmp_path / "kb").glob("bm25-0.npz"))
    index_file.write_bytes(index_file.read_bytes()[:-10])
    with pytest.raises(PersistError, match="damaged"):
        load(tmp_path / "kb")
    save(built_document(), tmp_path / "kb")
    manifest = json.loads((tmp_path / "kb" / "manifest.json").read_text())
    manifest["format_version"] = 99
    (tmp_path / "kb" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(PersistError, match="format version 99"):
        load(tmp_path / "kb")
    with pytest.raises(PersistError, match="no saved knowledge base"):
        load(tmp_path / "nothing")


def test_load_or_build_rebuilds_and_says_why(tmp_path):
    messages, builds = [], []

    def build():
        builds.append(1)
        return built_document()

    first = load_or_build(tmp_path / "kb", build, report=messages.append)
    second = load_or_build(tmp_path / "kb", build, report=messages.append)
    assert len(builds) == 1 and len(messages) == 1 and "no saved knowledge base" in messages[0]
    assert [n.uid for n in second.get_nodes("qa")] == [n.uid for n in first.get_nodes("qa")]
    (tmp_path / "kb" / "nodes.jsonl.gz").write_bytes(b"garbage")
    load_or_build(tmp_path / "kb", build, report=messages.append)
    assert len(builds) == 2 and "damaged" in messages[-1]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp leftovers


def test_saved_use_vectors_are_reused_with_the_same_model(tmp_path):
    embedder = CachedEmbedder(USEEmbedder(threads=1), cache_dir=tmp_path / "cache")
    doc = built_document(embed={"use": embedder})
    save(doc, tmp_path / "kb")
    loaded = load(tmp_path / "kb", embed={"use": embedder})
    np.testing.assert_array_equal(loaded.index("paragraph").embeddings("use"),
                                  doc.index("paragraph").embeddings("use"))


# ------------------------------------------------------------------ a small knowledge base
def small_document(second_line="茶很香。", embed=None):
    doc = Document(texts={"a.txt": f"长城很长。\n{second_line}", "b.txt": "奥运会。\n光很快。"},
                   embed=embed)
    doc.create_node_group("line", transform=lambda text: text.split("\n"))
    Retriever(doc, "line", "bm25_chinese")("长城")
    if embed:
        Retriever(doc, "line", "cosine")("长城")
    return doc


def lines_of(doc_or_folder):
    doc = doc_or_folder if isinstance(doc_or_folder, Document) else load(doc_or_folder)
    return [node.text for node in doc.get_nodes("line")]


def snapshot(folder):
    """Every path under ``folder`` with its bytes (None for a folder)."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


def names_in(folder):
    return sorted(p.name for p in folder.iterdir())


class CountingEmbedder(NamedEmbedder):
    def __init__(self):
        super().__init__()
        self.texts = 0

    def __call__(self, texts):
        self.texts += len(texts)
        return super().__call__(texts)


# ------------------------------------------------------------------ never destroy
@pytest.mark.parametrize("files", [
    {"tea.txt": "茶。", "great_wall.txt": "长城。", "my_notes.md": "# 笔记"},
    {"manifest.json": '{"name": "my web app", "sha256": {}}', "index.html": "<p>hi</p>"},
    {"manifest.json": "[1, 2]", "data.npy": "not ours"},
], ids=["a learner's corpus", "someone else's manifest", "an unrecognisable manifest"])
def test_save_refuses_a_folder_that_is_not_a_knowledge_base_and_touches_nothing(
        tmp_path, monkeypatch, files):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mykb").mkdir()
    for name, text in files.items():
        (tmp_path / "mykb" / name).write_text(text, encoding="utf-8")
    before, builds = snapshot(tmp_path), []
    with pytest.raises(ValueError, match="'mykb' is not a saved knowledge base.*new folder"):
        load_or_build("mykb", lambda: builds.append(1) or Document("mykb"), report=print)
    with pytest.raises(ValueError, match="not a saved knowledge base"):
        save(small_document(), "mykb")
    assert snapshot(tmp_path) == before and builds == []  # refused before building


def test_a_knowledge_base_with_your_files_in_it_or_a_file_is_not_replaced(tmp_path):
    save(small_document(), tmp_path / "kb")
    (tmp_path / "kb" / "my_notes.md").write_text("mine")
    (tmp_path / "afile").write_text("mine too")
    before = snapshot(tmp_path)
    with pytest.raises(ValueError, match="besides a saved knowledge base it holds my_notes.md"):
        save(small_document("新的。"), tmp_path / "kb")
    with pytest.raises(ValueError, match="it is not a folder"):
        save(small_document(), tmp_path / "afile")
    assert snapshot(tmp_path) == before


def test_saving_into_the_folder_python_runs_in_is_refused_clearly(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for directory in (".", "", str(tmp_path), ".."):
        with pytest.raises(ValueError, match="is the folder Python runs in"):
            save(small_document(), directory)
    assert list(tmp_path.iterdir()) == []
    save(small_document(), "kb")  # a subfolder, relative to it, is fine
    assert lines_of("kb") == lines_of(small_document())


def test_save_replaces_an_empty_folder_and_its_own_copies(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    save(small_document("一。"), kb)
    (kb / ".DS_Store").write_bytes(b"made by a file browser")
    save(small_document("二。"), kb)
    (kb / "manifest.json").write_text("{damaged")  # still recognisably a saved copy
    messages = []
    doc = load_or_build(kb, lambda: small_document("三。"), report=messages.append)
    assert "manifest.json is damaged" in messages[0]
    assert lines_of(kb) == lines_of(doc) and lines_of(kb)[1] == "三。"
    assert names_in(tmp_path) == ["kb"]


# ------------------------------------------------------------------ survive a crash
class Killed(BaseException):
    """Stands for kill -9: not an Exception, so no ``except Exception`` clean-up runs."""


@pytest.mark.parametrize("had_a_copy", [True, False])
def test_a_crash_at_any_step_of_save_leaves_the_old_or_the_new_copy(tmp_path, monkeypatch,
                                                                     had_a_copy):
    kb = tmp_path / "kb"
    old_doc, new_doc, next_doc = (small_document(t) for t in ("旧的。", "新的。", "再一次。"))
    outcomes, gaps = set(), 0
    for crash_at in range(1, 100):
        if had_a_copy:
            save(old_doc, kb)
        steps = []

        def step(label, steps=steps, crash_at=crash_at):
            steps.append(label)
            if len(steps) == crash_at:
                raise Killed(label)

        monkeypatch.setattr(safe_folder, "crash_point", step)
        try:
            save(new_doc, kb)
        except Killed:
            pass
        monkeypatch.setattr(safe_folder, "crash_point", lambda label: None)
        if len(steps) < crash_at:
            break  # this save ran to the end: every step before it has been crashed at
        gaps += had_a_copy and not kb.exists()  # between the two renames
        try:
            found = lines_of(kb)  # load repairs an interrupted swap
        except PersistError as error:
            assert not had_a_copy and "no saved knowledge base" in str(error), steps[-1]
            found = None
        expected = [lines_of(old_doc) if had_a_copy else None, lines_of(new_doc)]
        assert found in expected, f"after a crash at {steps[-1]!r}"
        outcomes.add(expected.index(found))
        save(next_doc, kb)  # the next save cleans up what the crash left
        assert lines_of(kb) == lines_of(next_doc) and names_in(tmp_path) == ["kb"]
        if not had_a_copy:
            shutil.rmtree(kb)
    assert crash_at > (15 if had_a_copy else 8)  # the crash test reached many steps
    assert outcomes == {0, 1}  # and crashes left the old copy (or none) and the new one
    assert gaps == (1 if had_a_copy else 0)


def test_an_error_while_saving_keeps_the_old_copy_and_leaves_nothing(tmp_path, monkeypatch):
    kb = tmp_path / "kb"
    save(small_document("旧的。"), kb)
    unsavable = small_document("新的。")
    unsavable.get_nodes("root")[0].metadata["tags"] = {"a set is not JSON"}
    with pytest.raises(TypeError):
        save(unsavable, kb)
    assert names_in(tmp_path) == ["kb"]  # the unfinished copy is deleted at once
    real_replace = os.replace

    def failing_replace(source, destination):
        if re.fullmatch(r"\.kb-[0-9a-f]{8}", Path(source).name):  # the new copy moving in
            raise PermissionError("simulated: the folder is in use")
        return real_replace(source, destination)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(PermissionError, match="simulated"):
        save(small_document("新的。"), kb)
    monkeypatch.undo()
    assert names_in(tmp_path) == ["kb"]  # the old copy is back, the new one deleted
    assert lines_of(kb)[1] == "旧的。"


# ------------------------------------------------------------------ saves take turns
def test_saves_of_one_folder_take_turns_and_a_load_meanwhile_sees_a_whole_copy(
        tmp_path, monkeypatch):
    kb = tmp_path / "kb"
    save(small_document("旧的。"), kb)
    docs = {"A": small_document("甲的。"), "B": small_document("乙的。")}
    in_the_gap, go_on = threading.Event(), threading.Event()

    def step(label):
        if threading.current_thread().name == "A" and label == "moved the old copy aside":
            in_the_gap.set()
            assert go_on.wait(20)

    monkeypatch.setattr(safe_folder, "crash_point", step)
    results, errors = {}, []

    def run(name, job):
        try:
            results[name] = job()
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    jobs = {"A": lambda: save(docs["A"], kb), "B": lambda: save(docs["B"], kb),
            "C": lambda: lines_of(kb)}
    threads = {name: threading.Thread(target=run, args=(name, job), name=name)
               for name, job in jobs.items()}
    threads["A"].start()
    assert in_the_gap.wait(20) and not kb.exists()  # A is between its two renames
    threads["B"].start()
    threads["C"].start()
    threads["B"].join(0.5)
    assert threads["B"].is_alive() and threads["C"].is_alive()  # both wait for A's lock
    go_on.set()
    for thread in threads.values():
        thread.join(20)
    assert not errors
    assert results["C"] in (lines_of(docs["A"]), lines_of(docs["B"]))
    assert lines_of(kb) == lines_of(docs["B"]) and names_in(tmp_path) == ["kb"]


@pytest.mark.skipif(safe_folder.fcntl is None, reason="deletes a file that is open")
def test_a_lock_file_replaced_while_it_is_being_locked_is_not_trusted(tmp_path, monkeypatch):
    real_open, lock_file, other_save = os.open, str(tmp_path / ".kb.lock"), []

    def open_just_before_a_swap(path, flags, *args):
        fd = real_open(path, flags, *args)
        if str(path) == lock_file and not other_save:
            # meanwhile, a save let go (deleting the file) and another took a new one:
            os.unlink(lock_file)  # the file fd points at is stale
            other_save.append(real_open(lock_file, os.O_RDWR | os.O_CREAT))
            fcntl = safe_folder.fcntl
            fcntl.flock(other_save[0], fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd

    monkeypatch.setattr(os, "open", open_just_before_a_swap)
    try:
        with pytest.raises(TimeoutError), safe_folder._folder_lock(tmp_path / "kb", timeout=0.2):
            pass  # holding a deleted file's lock would let two saves in at once
    finally:
        os.close(other_save[0])


@pytest.mark.skipif(safe_folder.fcntl is None, reason="the holder below uses POSIX flock")
def test_a_lock_held_by_another_process_is_waited_for_and_freed_when_it_dies(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\nos.write(fd, b'%d' % os.getpid())\n"
         "print('locked', flush=True)\ntime.sleep(60)", str(tmp_path / ".kb.lock")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(TimeoutError, match=f"another save .*process {holder.pid}"):
            save(small_document(), tmp_path / "kb", timeout=0.2)
        assert names_in(tmp_path) == [".kb.lock"]
    finally:
        holder.kill()  # kill -9: its lock file stays behind
        holder.wait()
        holder.stdout.close()
    save(small_document(), tmp_path / "kb", timeout=0)  # a dead process's lock: no wait
    assert names_in(tmp_path) == ["kb"]


# ------------------------------------------------------------------ trust nothing
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved") / "kb"
    save(small_document(embed={"chars": NamedEmbedder()}), folder)
    return folder


@pytest.fixture
def kb(saved, tmp_path):
    shutil.copytree(saved, tmp_path / "kb")
    return tmp_path / "kb"


def edit_manifest(kb, change):
    path = kb / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(change(manifest)), encoding="utf-8")


def plant(kb, name, data):
    """Replace a file AND its checksum: a folder consistent but for a malformed file."""
    (kb / name).write_bytes(data)

    def change(manifest):
        manifest["sha256"][name] = hashlib.sha256(data).hexdigest()
        return manifest

    edit_manifest(kb, change)


def refused_then_rebuilt(kb, *patterns):
    with pytest.raises(PersistError) as caught:
        load(kb, embed={"chars": NamedEmbedder()})
    for pattern in patterns:
        assert re.search(pattern, str(caught.value)), str(caught.value)
    messages = []
    doc = load_or_build(kb, lambda: small_document(embed={"chars": NamedEmbedder()}),
                        embed={"chars": NamedEmbedder()}, report=messages.append)
    assert len(messages) == 1 and lines_of(kb) == lines_of(doc)


def without(field, entry=None):
    def change(manifest):
        del (manifest if entry is None else manifest[entry][0])[field]
        return manifest
    return change


def setting(value, *path):
    def change(manifest):
        target = manifest
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return manifest
    return change


@pytest.mark.parametrize(("change", "message"), [
    (lambda manifest: [manifest], "must hold a JSON object, got a list"),
    *[(without(field), f"manifest lacks the field '{field}'")
      for field in ("sha256", "groups", "parents", "bm25", "vectors", "format")],
    (without("file", "bm25"), r"manifest.bm25\[0\] lacks the field 'file'"),
    (without("model", "vectors"), r"manifest.vectors\[0\] lacks the field 'model'"),
    (setting(["nodes.jsonl.gz"], "sha256"), "manifest.sha256 must be an object, got a list"),
    (setting(5, "sha256", "nodes.jsonl.gz"), r"sha256\['nodes.jsonl.gz'\] must be a string"),
    (setting("abc", "sha256", "nodes.jsonl.gz"), "is not a SHA-256"),
    (setting("root", "groups"), "manifest.groups must be a list"),
    (setting(None, "parents", "line"), r"parents\['line'\] must be a string, got None"),
    (setting("1.5", "bm25", 0, "k1"), r"bm25\[0\].k1 must be a number, got '1.5'"),
    (setting(True, "bm25", 0, "b"), r"bm25\[0\].b must be a number, got True"),
    (setting(3, "vectors", 0, "model"), r"vectors\[0\].model must be a string or null"),
    (setting("yes", "bm25", 0, "extra"), r"bm25\[0\] has an unknown field 'extra'"),
    (setting("2", "format_version"), "uses format version '2'"),
    (setting("someone else's", "format"), "is not a course_lib knowledge base"),
    (setting("nowhere", "parents", "line"), "do not fit together: .*'nowhere' has no path"),
])
def test_a_manifest_of_the_wrong_shape_is_refused_with_the_reason(kb, change, message):
    edit_manifest(kb, change)
    refused_then_rebuilt(kb, "manifest.json|kb", message)


@pytest.mark.parametrize("stem", ["../outside", "ABSOLUTE", "sub/bm25", "..", ".hidden",
                                  "C:bm25"])
def test_file_names_in_the_manifest_must_stay_inside_the_folder(kb, stem):
    """A valid BM25 index planted outside (with correct checksums) is never read."""
    stem = stem.replace("ABSOLUTE", str(kb.parent / "absolute"))
    if stem.startswith(("../", str(kb.parent))):
        for suffix in (".npz", "-idf.npy", "-vocabulary.json"):
            shutil.copy(kb / f"bm25-0{suffix}", kb / f"{stem}{suffix}")

    def change(manifest):
        manifest["bm25"][0]["file"] = stem
        for suffix in (".npz", "-idf.npy", "-vocabulary.json"):
            manifest["sha256"][stem + suffix] = manifest["sha256"].pop(f"bm25-0{suffix}")
        return manifest

    edit_manifest(kb, change)
    refused_then_rebuilt(kb, "is not a plain file name inside the folder")


def test_a_symbolic_link_or_a_file_without_a_checksum_is_refused(kb, tmp_path):
    shutil.copytree(kb, tmp_path / "unlisted")
    edit_manifest(tmp_path / "unlisted", lambda m: {**m, "sha256": {
        k: v for k, v in m["sha256"].items() if k != "bm25-0-idf.npy"}})
    refused_then_rebuilt(tmp_path / "unlisted",
                         r"bm25-0-idf.npy is not listed in manifest.json with a checksum")
    (kb / "bm25-0.npz").rename(tmp_path / "elsewhere.npz")
    (kb / "bm25-0.npz").symlink_to(tmp_path / "elsewhere.npz")  # same bytes, same checksum
    with pytest.raises(PersistError, match="bm25-0.npz is a symbolic link"):
        load(kb)


def gzip_lines(*lines):
    return gzip.compress("".join(line + "\n" for line in lines).encode("utf-8"))


def node_line(**changes):
    record = {"uid": "a.txt", "group": "root", "text": "长城。", "parent": None,
              "metadata": {}, "answer": None}
    return json.dumps({**record, **changes}, ensure_ascii=False)


def object_array_npy():
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return buffer.getvalue()


def npz_bytes():
    buffer = io.BytesIO()
    np.savez(buffer, a=np.ones(3))
    return buffer.getvalue()


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "data", "message"), ids=lambda value: "" if isinstance(
    value, bytes) else None, argvalues=[
    ("bm25-0.npz", pickle.dumps({"matrix": [1, 2]}), "bm25-0.npz is not a valid .npz"),
    ("bm25-0-idf.npy", pickle.dumps(np.ones(3)), "bm25-0-idf.npy is not a valid .npy.*pickle"),
    ("vectors-0.npy", object_array_npy(), "vectors-0.npy is not a valid .npy.*allow_pickle"),
    ("vectors-0.npy", npz_bytes(), r"vectors-0.npy is not a valid .npy array \(a .npz\)"),
    ("vectors-0.npy", npy_bytes(np.ones((1, 9))),
     r"vectors-0.npy holds vectors of shape \(1, 9\); group 'line' has 4"),
    ("bm25-0-idf.npy", npy_bytes(np.ones(1)),
     "bm25-0.npz, -idf.npy and -vocabulary.json do not make a BM25 index: idf must have"),
    ("bm25-0-vocabulary.json", b'{"a": 0}', "vocabulary.json is malformed: the vocabulary "
     "must be a list"),
    ("bm25-0-vocabulary.json", b"[1, 2", "bm25-0-vocabulary.json is not valid UTF-8 JSON"),
    ("nodes.jsonl.gz", gzip_lines(node_line())[:-9], "nodes.jsonl.gz is not valid gzip"),
    ("nodes.jsonl.gz", b"plain text", "nodes.jsonl.gz is not valid gzip"),
    ("nodes.jsonl.gz", gzip_lines(node_line(), "{not json"),
     "nodes.jsonl.gz line 2 is not valid JSON"),
    ("nodes.jsonl.gz", gzip_lines('["a list"]'), "nodes.jsonl.gz is malformed: line 1 must "
     "be an object"),
    ("nodes.jsonl.gz", gzip_lines(node_line(text=None)), "nodes.jsonl.gz is malformed: line "
     "1.text must be a string"),
    ("nodes.jsonl.gz", gzip_lines(node_line(group="elsewhere")),
     "nodes.jsonl.gz line 1: group 'elsewhere' is not among"),
    ("nodes.jsonl.gz", gzip_lines(node_line(), node_line(uid="x", group="line",
                                                          parent="nope")),
     "nodes.jsonl.gz line 2: parent 'nope' is not a node on an earlier line"),
    ("nodes.jsonl.gz", gzip_lines(node_line(), node_line()),
     "nodes.jsonl.gz line 2: uid 'a.txt' repeats"),
    ("nodes.jsonl.gz", gzip_lines(node_line(), node_line(uid="x", group="line",
                                                          parent="a.txt"),
                                  node_line(uid="y", group="line", parent="x")),
     "nodes.jsonl.gz and the groups in manifest.json do not fit together: node 'y' of "
     "group 'line' has a parent in 'line'; expected 'root'"),
    ("nodes.jsonl.gz", gzip_lines(node_line()), "bm25-0.npz scores 4 nodes; group 'line' has 0"),
])
def test_a_malformed_file_is_refused_naming_it_and_the_reason(kb, name, data, message):
    plant(kb, name, data)
    refused_then_rebuilt(kb, message)


def test_saved_vectors_are_used_not_recomputed(tmp_path):
    doc = small_document(embed={"chars": CountingEmbedder()})
    save(doc, tmp_path / "kb")
    fresh = CountingEmbedder()
    loaded = load(tmp_path / "kb", embed={"chars": fresh})
    before = [(n.uid, n.score) for n in Retriever(doc, "line", "cosine")("长城")]
    assert [(n.uid, n.score) for n in Retriever(loaded, "line", "cosine")("长城")] == before
    assert fresh.texts == 1  # the query only: the nodes' vectors came from the folder


def test_metadata_json_cannot_store_is_refused_naming_the_node_and_field(tmp_path):
    """It used to fail with "Object of type set is not JSON serializable", naming nothing."""
    doc = small_document()
    node = doc.get_nodes("line")[1]
    node.metadata["tags"] = {"茶", "香"}
    folder = tmp_path / "kb"
    save(small_document(), folder)  # an earlier good copy
    before = lines_of(folder)
    with pytest.raises(TypeError, match=rf"cannot save node '{re.escape(node.uid)}' \(group "
                                         r"'line'\): its metadata field 'tags' holds set"):
        save(doc, folder)
    assert lines_of(folder) == before  # the old copy is intact


# ==================================================================== bad inputs
# save, load and load_or_build refuse what would lose a learner's files or read nothing.

def _corpus_with_notes(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.txt").write_text("我的笔记", encoding="utf-8")
    return corpus


def _save_into_corpus(tmp_path: Path) -> None:
    from course_lib.store.persist import save

    corpus = _corpus_with_notes(tmp_path)
    try:
        save(Document(texts={"a": "甲。"}), corpus)
    finally:  # refused, and nothing of the learner's lost
        assert sorted(p.name for p in corpus.iterdir()) == ["notes.txt"]


def _load_or_build_over_corpus(tmp_path: Path) -> None:
    from course_lib.store.persist import load_or_build

    corpus, reports, built = _corpus_with_notes(tmp_path), [], []
    try:
        load_or_build(corpus, lambda: built.append(1) or Document(texts={"a": "甲。"}),
                      report=reports.append)
    finally:  # refused before building or announcing a rebuild
        assert built == [] and reports == []
        assert sorted(p.name for p in corpus.iterdir()) == ["notes.txt"]


def _persist(name: str) -> Any:
    from course_lib.store import persist

    return getattr(persist, name)


STORE_CASES: list[Case] = [
    Case("stores", "save-into-a-corpus-folder", _save_into_corpus, ValueError,
         r"corpus' is not a saved knowledge base, so it is left untouched.*notes\.txt"
         r".*Save into a new folder"),
    Case("stores", "load-or-build-over-a-corpus-folder", _load_or_build_over_corpus, ValueError,
         r"is not a saved knowledge base.*Save into a new folder"),
    Case("stores", "save-into-the-working-folder",
         lambda tmp: _persist("save")(Document(texts={"a": "甲。"}), "."), ValueError,
         r"directory '\.' is the folder Python runs in.*save\(doc, 'kb'\)"),
    Case("stores", "save-over-a-plain-file",
         lambda tmp: _persist("save")(Document(texts={"a": "甲。"}), plain_file(tmp)),
         ValueError, r"file' is not a saved knowledge base.*it is not a folder"),
    Case("stores", "save-not-a-document",
         lambda tmp: _persist("save")("a document", tmp / "kb"), TypeError,
         r"doc must be a Document, got str"),
    Case("stores", "build-returns-not-a-document",
         lambda tmp: _persist("load_or_build")(tmp / "kb", lambda: "a document",
                                               report=lambda _: None),
         TypeError, r"build\(\) must return a Document, got str"),
    Case("stores", "load-a-folder-without-a-knowledge-base",
         lambda tmp: _persist("load")(_corpus_with_notes(tmp)), RuntimeError,
         r"corpus holds no saved knowledge base \(no manifest\.json\)"),
    Case("stores", "load-a-number", lambda tmp: _persist("load")(42), TypeError,
         r"directory must be a str or Path, got int"),
    Case("stores", "save-timeout-negative",
         lambda tmp: _persist("save")(Document(texts={"a": "甲。"}), tmp / "kb", timeout=-1),
         ValueError, r"timeout must be a number >= 0, got -1"),
]


test_bad_input_gets_a_clear_error = clear_error_test(STORE_CASES)
