"""docs/teaching.md states measured numbers: they must be what `make bench` recorded."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("teaching_tables",
                                              ROOT / "tools" / "teaching_tables.py")
teaching_tables = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(teaching_tables)


def test_the_guide_holds_the_measured_tables():
    """Every generated part: the labs' resources, the class's sizing, the answer spaces."""
    guide = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert teaching_tables.block() in guide, "run `python tools/teaching_tables.py --write`"
    assert teaching_tables.updated(guide) == guide, "run `python tools/teaching_tables.py --write`"


def test_every_notebook_is_measured_and_has_a_lab_time():
    import json

    rows = json.loads(teaching_tables.RESOURCES.read_text(encoding="utf-8"))["notebooks"]
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(set(rows) - {"kernel start-up"}) == notebooks
    assert sorted(teaching_tables.lab_times()) == notebooks
    for name, row in rows.items():
        assert row["peak_rss_mb"] > 0 and row["cpu_s"] > 0, name


def test_the_sizing_model_takes_the_tighter_bound():
    by_memory, by_cpu = teaching_tables.students(student_mb=1000, cpu_s=30, cores=16,
                                                 ram_gb=64, hub_mb=600)
    assert by_memory == 57  # (0.9 * 64,000 MB - 600 MB) / 1,000 MB
    assert by_cpu == 64     # 16 cores * 120 s / 30 s


def test_the_class_was_measured_at_two_sizes_on_every_lab_without_errors():
    import json

    runs = json.loads(teaching_tables.CLASSROOM.read_text(encoding="utf-8"))["runs"]
    notebooks = sorted(p.stem[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(run["students"] for run in runs)[:2] == [2, 4]
    for run in runs:
        assert len(run["rows"]) == run["students"] and run["hub_pss_mb"] > 0
        for row in run["rows"]:
            assert sorted(row["labs"]) == notebooks, row["student"]
            assert not row["errors"], (run["students"], row["student"], row["errors"])
