"""Names that moved to another module: the old place still gives them, and warns.

A learner's notebook from an earlier term (``from course_lib.fusion import pipeline``) keeps
running after ``pipeline`` moved to :mod:`course_lib.flow`; the ``DeprecationWarning`` names
the new place. The old module imports nothing of the new one until such a name is asked
for, so the layers and the import order stay as they are. (Modules that moved, the lab's,
are found by a finder in :mod:`course_lib.lab`.)

>>> old_getattr = moved_names("old_home", {"sqrt": "math"})
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old_getattr("sqrt")(9.0), str(caught[0].message)
(3.0, 'old_home.sqrt is now math.sqrt')
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def moved_names(module: str, new_home: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``module``: each name of ``new_home`` comes from
    the module named there, with a ``DeprecationWarning``; any other name is an
    ``AttributeError``, as without it."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (the name Python looks up)
        if name not in new_home:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is now {new_home[name]}.{name}", DeprecationWarning,
                      stacklevel=2)
        return getattr(importlib.import_module(new_home[name]), name)

    return __getattr__
