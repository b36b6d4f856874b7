"""The README's library section says what the package holds: every module has a row, and
the line counts of the reading path and the plumbing are today's to within 10 %
(tools/line_counts.py): a guide to sizes, not a pin that every edit must update. The rules
themselves are tested: the reading order (below), the layering (test_architecture.py) and
the size limit of a module (test_package_root.py)."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
_spec = importlib.util.spec_from_file_location("line_counts", ROOT / "tools" / "line_counts.py")
line_counts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(line_counts)


def _section() -> str:
    start = README.index("## The library, `course_lib`")
    return README[start:README.index("\n## ", start + 1)]


TOLERANCE = 0.10  # how far the README's counts may drift from today's before they are updated


def test_the_readme_states_the_line_counts_to_within_10_percent():
    counts = line_counts.counts()
    section = " ".join(_section().split())
    number = r"(\d[\d,]*)"
    patterns = {"reading path": rf"\({number} lines\)",
                "other ideas": rf"notebooks \({number} lines\)",
                "plumbing": rf"plumbing holds {number} lines",
                "lab": rf"`lab/` {number} ",
                "store": rf"`store/` {number} ",
                "_support": rf"`_support/` {number} "}
    for name, pattern in patterns.items():
        found = re.search(pattern, section)
        assert found, f"README's library section does not give the lines of {name}"
        stated = int(found.group(1).replace(",", ""))
        assert abs(stated - counts[name]) <= TOLERANCE * counts[name], (
            f"README's library section says {name}: {stated:,} lines, today {counts[name]:,}: "
            f"more than {TOLERANCE:.0%} off (python tools/line_counts.py)")


def test_every_module_has_a_row_in_its_part():
    section = _section()
    for path in sorted((ROOT / "course_lib").rglob("*.py")):
        if path.name.startswith("__"):
            continue
        assert f"`{path.name}`" in section, f"README's library tables have no row for {path}"
    assert line_counts.READING_PATH == tuple(re.findall(
        r"`(\w+)`", section[section.index("**A reading path.**"):section.index("lines).")]))


def test_the_reading_path_is_true_each_module_imports_only_those_before_it():
    """Every import (lazy ones too) of a reading-path module from another idea: one before it
    on the path, or one of the later ideas the README names (``line_counts.LATER``)."""
    grimp = __import__("pytest").importorskip("grimp")
    graph = grimp.build_graph("course_lib", cache_dir=None)
    path, ideas = line_counts.READING_PATH, {*line_counts.READING_PATH, *line_counts.MORE_IDEAS}
    wrong, later = [], {}
    for i, module in enumerate(path):
        imported = {m.split(".")[1] for m in graph.find_modules_directly_imported_by(
            f"course_lib.{module}")} & ideas
        wrong += [(module, m) for m in sorted(imported & set(path[i + 1:]))]
        if imported & set(line_counts.MORE_IDEAS):
            later[module] = tuple(sorted(imported & set(line_counts.MORE_IDEAS)))
    assert wrong == [], "on the reading path, these import a module after them"
    assert later == line_counts.LATER
    section = " ".join(_section().split())
    sentence = section[section.index("**A reading path.**"):section.index("The other ideas")]
    for module, names in later.items():
        assert all(f"`{name}`" in sentence for name in (module, *names)), module
