"""Where the course keeps its files: the repository it runs from and the data cache.

>>> cache_dir().name in {"cache", "course_lib"} or bool(os.environ.get(CACHE_ENV))
True
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

# The repository folder when the library runs from a clone (``pip install -e .``);
# an installed wheel has no such folder next to it, and nothing below relies on it.
COURSE_ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = "COURSE_DATA_CACHE"


def cache_dir() -> Path:
    """The data cache: ``$COURSE_DATA_CACHE``, else ``data/cache`` in the course folder,
    else ``~/.cache/course_lib`` (an installed library)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    course_data = COURSE_ROOT / "data"
    if course_data.is_dir():
        return course_data / "cache"
    return Path.home() / ".cache" / "course_lib"


def private_dir() -> Path:
    """A folder only this user can write, for caches one user's processes share (jieba's
    dictionary cache): ``~/.cache/course_lib-private`` (mode 0700), or where the home cannot
    be written or that folder is not this user's alone, a new temporary one. Never a folder
    every user can write: a file there (``/tmp/jieba.cache``, jieba's default) can be
    replaced by anyone, and with it every user's tokenisation."""
    home = Path.home() / ".cache" / "course_lib-private"
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = home.lstat()
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not (
                info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return home
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="course_lib-private-"))

