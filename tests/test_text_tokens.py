"""Tokenisers (course_lib.text_tokens): where jieba keeps its dictionary cache."""

from __future__ import annotations

import marshal
import os
import stat
import subprocess
import sys


def _words_in_a_fresh_process(code: str, tmp_path) -> str:
    env = {**os.environ, "TMPDIR": str(tmp_path / "shared-tmp"), "HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-c", code + "\nprint(jieba.lcut('长城很长'))"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_a_jieba_cache_another_user_plants_in_tmp_changes_nothing(tmp_path):
    """jieba's default cache is ``$TMPDIR/jieba.cache``, loaded whatever its owner: on a
    shared server anyone can plant one and change every user's words. Shown succeeding with
    jieba alone, then failing once the course library has moved the cache to the user's own
    folder."""
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    planted = {"长城很长": 10, "长": 1, "长城": 1, "长城很": 1, "城": 1, "很": 1}
    (shared / "jieba.cache").write_bytes(marshal.dumps((planted, 15)))
    assert _words_in_a_fresh_process("import jieba", tmp_path) == "['长城很长']"  # the attack
    assert _words_in_a_fresh_process("import course_lib.text_tokens, jieba",
                                     tmp_path) == "['长城', '很长']"
    private = tmp_path / "home" / ".cache" / "course_lib-private"
    assert (private / "jieba.cache").is_file()
    assert stat.S_IMODE(private.stat().st_mode) == 0o700


def test_a_private_folder_others_can_write_is_not_used(tmp_path, monkeypatch):
    from course_lib._support.places import private_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / ".cache" / "course_lib-private"
    assert private_dir() == folder and stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o777)  # as if another user had made it, open to all
    chosen = private_dir()
    assert chosen != folder and stat.S_IMODE(chosen.stat().st_mode) == 0o700
    chosen.rmdir()
