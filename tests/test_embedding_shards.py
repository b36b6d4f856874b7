"""The embedding cache's file format (course_lib.embedding_shards): shards named by the
SHA-256 of their own bytes, written once through a hidden temporary file, and checked when
read — a changed byte, a cut or a renamed shard is refused with DamagedShard, and a pickle
is refused without ever being unpickled."""

import hashlib
import io
import os
import shutil

import numpy as np
import pytest

from course_lib.embedding_shards import (
    DamagedCacheWarning,
    DamagedShard,
    read_cache,
    read_shard,
    text_hash,
    write_shard,
)

UNPICKLED: list[str] = []  # what a malicious pickle would leave behind if it ran


def _ran_on_load(note: str) -> str:
    UNPICKLED.append(note)
    return note


class _Payload:
    """An object whose unpickling calls :func:`_ran_on_load` (any code could run there)."""

    def __reduce__(self):
        return _ran_on_load, ("a cache file ran code",)


def _vectors(*texts: str, dim: int = 3) -> dict[str, np.ndarray]:
    return {text_hash(t): np.arange(dim, dtype=np.float32) + i for i, t in enumerate(texts)}


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _under_its_own_hash(folder, data: bytes):
    """``data`` saved under the name a shard of these bytes gets: only the content checks
    after the name's can refuse it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(data).hexdigest()}.npz"
    path.write_bytes(data)
    return path


def test_text_hash_is_the_sha1_of_the_utf8_bytes():
    for text in ["", "长城", "长城 ", "Great Wall", "😀"]:
        assert text_hash(text) == hashlib.sha1(text.encode("utf-8")).hexdigest()
    assert len(text_hash("长城")) == 40 and set(text_hash("长城")) <= set("0123456789abcdef")
    assert text_hash("长城") != text_hash("長城") != text_hash("长城 ")


def test_a_shard_is_named_by_the_sha256_of_its_bytes_and_round_trips(tmp_path):
    folder = tmp_path / "not" / "yet" / "there"  # created on the first write
    vectors = {"k1": np.array([1.0, 2.0]), "k2": np.array([0.5, -3.25])}  # float64 given
    path = write_shard(folder, vectors)
    assert path.parent == folder and path.suffix == ".npz"
    assert path.stem == hashlib.sha256(path.read_bytes()).hexdigest()
    assert sorted(p.name for p in folder.iterdir()) == [path.name]  # no temporary left
    read = read_shard(path, dim=2)
    assert list(read) == ["k1", "k2"]  # the keys, in the order given
    assert all(v.dtype == np.float32 for v in read.values())  # stored as float32
    assert read["k1"].tolist() == [1.0, 2.0] and read["k2"].tolist() == [0.5, -3.25]
    assert read_shard(path).keys() == read.keys()  # dim=0: any width


def test_the_same_vectors_make_the_same_shard_and_other_vectors_another(tmp_path):
    first = write_shard(tmp_path, _vectors("甲", "乙"))
    assert write_shard(tmp_path, _vectors("甲", "乙")) == first  # content-addressed
    other = write_shard(tmp_path, _vectors("甲", "丙"))
    assert other != first
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, other.name])


def test_shards_are_never_modified_by_later_writes(tmp_path):
    first = write_shard(tmp_path, _vectors("甲"))
    before = (first.read_bytes(), first.stat().st_mtime_ns)
    for text in ["乙", "丙", "丁"]:
        write_shard(tmp_path, _vectors(text))
    assert (first.read_bytes(), first.stat().st_mtime_ns) == before
    assert len(list(tmp_path.glob("*.npz"))) == 4


@pytest.mark.parametrize("at", [0, 10, "middle", -1])
def test_a_changed_byte_anywhere_is_refused(tmp_path, at):
    path = write_shard(tmp_path, _vectors("甲", "乙"))
    data = bytearray(path.read_bytes())
    index = len(data) // 2 if at == "middle" else at
    data[index] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(DamagedShard, match="do not match its name") as refused:
        read_shard(path)
    assert str(path) in str(refused.value)


def test_a_shard_cut_short_or_grown_is_refused(tmp_path):
    path = write_shard(tmp_path, _vectors("甲"))
    data = path.read_bytes()
    for changed in (data[:-1], data[: len(data) // 2], b"", data + b"\0"):
        path.write_bytes(changed)
        with pytest.raises(DamagedShard, match="do not match its name"):
            read_shard(path)


def test_a_renamed_shard_is_refused_even_under_another_shards_name(tmp_path):
    first = write_shard(tmp_path, _vectors("甲"))
    second = write_shard(tmp_path, _vectors("乙"))
    assert read_shard(first) and read_shard(second)  # both sound
    second.unlink()
    os.replace(first, second)  # 甲's bytes under 乙's name
    with pytest.raises(DamagedShard, match="do not match its name"):
        read_shard(second)
    renamed = tmp_path / ("0" * 64 + ".npz")
    os.replace(second, renamed)
    with pytest.raises(DamagedShard):
        read_shard(renamed)


def test_a_copy_under_its_own_name_is_sound_wherever_it_is(tmp_path):
    path = write_shard(tmp_path / "a", _vectors("甲"))
    (tmp_path / "b").mkdir()
    copy = shutil.copy(path, tmp_path / "b" / path.name)  # the name is the content
    assert read_shard(copy).keys() == read_shard(path).keys() == {text_hash("甲")}


def test_the_width_is_checked_only_when_given(tmp_path):
    path = write_shard(tmp_path, _vectors("甲", "乙", dim=4))
    assert len(read_shard(path, dim=4)) == 2 and len(read_shard(path, dim=0)) == 2
    with pytest.raises(DamagedShard, match=r"float32 \(2, 3\).*\(2, 4\)"):
        read_shard(path, dim=3)


def test_a_pickle_in_a_shard_is_refused_and_never_run(tmp_path):
    UNPICKLED.clear()
    keys = np.empty(2, dtype=object)
    keys[:] = [_Payload(), "b"]
    plants = [
        _npz(keys=keys, vectors=np.ones((2, 3), np.float32)),
        _npz(keys=np.array(["a", "b"]), vectors=np.array([_Payload(), None], dtype=object)),
    ]
    for data in plants:
        path = _under_its_own_hash(tmp_path, data)
        with pytest.raises(DamagedShard, match="not a shard"):
            read_shard(path)
        path.unlink()
    assert UNPICKLED == []


BAD_CONTENT = {
    "not a zip": b"this is not an npz file",
    "keys 2-d": _npz(keys=np.array([["a", "b"]]), vectors=np.ones((1, 3), np.float32)),
    "keys are bytes": _npz(keys=np.array([b"a"]), vectors=np.ones((1, 3), np.float32)),
    "vectors 1-d": _npz(keys=np.array(["a", "b", "c"]), vectors=np.ones(3, np.float32)),
    "vectors float16": _npz(keys=np.array(["a"]), vectors=np.ones((1, 3), np.float16)),
    "a row too many": _npz(keys=np.array(["a"]), vectors=np.ones((2, 3), np.float32)),
    "keys missing": _npz(vectors=np.ones((1, 3), np.float32)),
}


@pytest.mark.parametrize("data", BAD_CONTENT.values(), ids=BAD_CONTENT.keys())
def test_content_that_is_not_a_shard_is_refused_even_under_its_own_hash(tmp_path, data):
    path = _under_its_own_hash(tmp_path, data)
    with pytest.raises(DamagedShard) as refused:
        read_shard(path)
    assert path.name in str(refused.value)
    assert isinstance(refused.value, ValueError)  # DamagedShard is a ValueError


def test_a_failed_rename_leaves_neither_a_shard_nor_a_temporary(tmp_path, monkeypatch):
    write_shard(tmp_path, _vectors("甲"))
    before = sorted(p.name for p in tmp_path.iterdir())

    def failing_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_shard(tmp_path, _vectors("乙"))
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_shard_is_put_in_place_by_renaming_a_hidden_temporary(tmp_path, monkeypatch):
    renames = []
    replace = os.replace

    def recording_replace(source, target):
        renames.append((os.path.basename(source), os.path.basename(target)))
        replace(source, target)

    monkeypatch.setattr(os, "replace", recording_replace)
    path = write_shard(tmp_path, _vectors("甲"))
    ((source, target),) = renames
    assert source.startswith(".") and source.endswith(".tmp") and target == path.name


def test_read_cache_gathers_every_shard_and_ignores_other_files(tmp_path):
    write_shard(tmp_path, _vectors("甲", "乙"))
    write_shard(tmp_path, _vectors("丙"))
    (tmp_path / ".half-written.tmp").write_bytes(b"a kill mid-write left this")
    (tmp_path / "notes.txt").write_text("not a shard")
    cache = read_cache(tmp_path, dim=3)
    assert set(cache) == {text_hash(t) for t in ["甲", "乙", "丙"]}
    assert read_cache(str(tmp_path)).keys() == cache.keys()  # a str folder is fine too
    assert read_cache(tmp_path / "empty") == {}  # no folder yet: nothing cached


def test_read_cache_raises_where_the_cached_embedder_would_rebuild(tmp_path):
    write_shard(tmp_path, _vectors("甲"))
    bad = write_shard(tmp_path, _vectors("乙"))
    bad.write_bytes(bad.read_bytes()[:-10])
    with pytest.raises(DamagedShard, match=bad.name):
        read_cache(tmp_path)
    assert bad.exists()  # inspection deletes nothing
    assert issubclass(DamagedCacheWarning, UserWarning)
