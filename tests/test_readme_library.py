"""The README's library section says what the package holds: every module has a row, and
the line counts of the reading path and the plumbing are today's (tools/line_counts.py)."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
_spec = importlib.util.spec_from_file_location("line_counts", ROOT / "tools" / "line_counts.py")
line_counts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(line_counts)


def _section() -> str:
    start = README.index("## The library, `course_lib`")
    return README[start:README.index("\n## ", start + 1)]


def test_the_readme_states_todays_line_counts():
    counts = line_counts.counts()
    section = " ".join(_section().split())
    expected = {"reading path": rf"\(({counts['reading path']:,}) lines\)",
                "other ideas": rf"notebooks \(({counts['other ideas']:,}) lines\)",
                "plumbing": rf"plumbing holds ({counts['plumbing']:,}) lines",
                "lab": rf"`lab/` ({counts['lab']:,}) ",
                "store": rf"`store/` ({counts['store']:,}) ",
                "_support": rf"`_support/` ({counts['_support']:,}) "}
    for name, pattern in expected.items():
        assert re.search(pattern, section), (
            f"README's library section does not say {name}: {counts[name]:,} lines "
            f"(python tools/line_counts.py)")


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
