"""Where the course keeps its files: the repository it runs from and the data cache.

>>> cache_dir().name in {"cache", "course_lib"} or bool(os.environ.get(CACHE_ENV))
True
"""

from __future__ import annotations

import os
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
