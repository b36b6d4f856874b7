"""The package root imports lazily: importing an idea loads nothing of ``lab/``, and every
name ``from course_lib import ...`` offers still resolves (issue: Library v4, layers)."""

import subprocess
import sys
from pathlib import Path

import pytest

import course_lib

ROOT = Path(__file__).resolve().parents[2]
IDEAS = sorted(p.stem for p in (ROOT / "course_lib").glob("*.py")
               if p.stem not in ("__init__", "__main__"))
LOADED = ("import sys, importlib; importlib.import_module({module!r}); "
          "print(' '.join(m for m in sys.modules if m.startswith('course_lib.lab')))")


@pytest.mark.parametrize("idea", IDEAS)
def test_importing_an_idea_loads_no_lab_module(idea):
    out = subprocess.run([sys.executable, "-c", LOADED.format(module=f"course_lib.{idea}")],
                         cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == [], f"course_lib.{idea} loads {out.stdout.split()}"


def test_the_package_root_loads_only_support():
    script = ("import sys, course_lib; print(' '.join(m for m in sys.modules "
              "if m.startswith('course_lib.') and not m.startswith('course_lib._support')))")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120)
    assert out.stdout.split() == []


def test_every_name_of_the_root_resolves_and_an_unknown_one_is_named():
    for name in course_lib.__all__:
        assert getattr(course_lib, name) is not None, name
    assert set(course_lib.__all__) <= set(dir(course_lib))
    with pytest.raises(AttributeError, match="no attribute 'load_cmrc'"):
        course_lib.load_cmrc  # noqa: B018


def test_no_module_of_the_package_is_over_500_lines():
    """One idea per module: a module that grows past a screenful of screens is two ideas."""
    sizes = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in (ROOT / "course_lib").rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > 500} == {}
