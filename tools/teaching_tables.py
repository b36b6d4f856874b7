"""The measured tables of docs/teaching.md: each lab's time, memory and CPU, and how many
students a server holds — computed from ``benchmarks/notebook_resources.json`` (written by
``make bench``) and the lab times in the README's notebook table; and how many answers each
lab's self-check lets a learner try, with the brute force timed — from
``benchmarks/answer_space.json`` (written by ``make answer-space``).

    python tools/teaching_tables.py          # print the tables docs/teaching.md holds
    python tools/teaching_tables.py --write  # put them into docs/teaching.md

A test (tests/test_teaching_guide.py) checks that the guide holds exactly this output.

The sizing model, stated so a teacher can redo it for another server:

* **memory**: every student holds one Jupyter server (``SERVER_MB``, measured: JupyterLab
  with nbgrader's extensions, idle) and one kernel at the notebook's peak (its Run All);
  ``HEADROOM`` of the RAM is left to the system. Students = usable RAM / per student.
* **CPU**: everyone presses Run All at once. Each kernel is capped at 2 threads
  (``OMP_NUM_THREADS=2``), so with more students than half the cores they share: the
  Run Alls finish after about (students × CPU seconds) / cores. Students = the number for
  whom that stays within ``PATIENCE_S``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "benchmarks" / "notebook_resources.json"
SERVER_MB = 130  # a single-user JupyterLab server with nbgrader's extensions, idle (VmRSS)
HEADROOM = 0.10  # of the RAM, for the system
PATIENCE_S = 120  # a Run All, all students at once, should finish within 2 minutes
SERVERS = ((16, 64), (32, 128), (64, 256))  # (cores, GB) of the servers sized
BEGIN, END = "<!-- measured: begin -->", "<!-- measured: end -->"
ANSWER_SPACE = ROOT / "benchmarks" / "answer_space.json"
SPACE = ("<!-- answer space: begin -->", "<!-- answer space: end -->")
SPACE_SUMMARY = ("<!-- answer space summary: begin -->", "<!-- answer space summary: end -->")


def lab_times() -> dict[str, str]:
    """Each notebook's time from the README's notebook table (``| `NN_name` | ... | 40 min |``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `(\d\d_\w+)` \|.*\| ([^|]+?) \|$", text, flags=re.M))


def students(rss_mb: float, cpu_s: float, cores: int, ram_gb: float) -> tuple[int, int]:
    """(by memory, by CPU) students a server of ``cores`` and ``ram_gb`` holds at once.

    >>> students(1000, 60, 16, 64)
    (50, 32)
    """
    by_memory = math.floor((1 - HEADROOM) * ram_gb * 1000 / (rss_mb + SERVER_MB))
    by_cpu = math.floor(cores * PATIENCE_S / cpu_s)
    return by_memory, by_cpu


def tables() -> str:
    data = json.loads(RESOURCES.read_text(encoding="utf-8"))
    rows, machine = data["notebooks"], data["machine"]
    times = lab_times()
    baseline = rows["kernel start-up"]
    lines = [f"Measured by `make bench` on {machine['cores']} cores "
             f"({machine['cpu_model']}), OMP_NUM_THREADS={machine['OMP_NUM_THREADS']}, warm "
             f"cache; a kernel that has only started holds {baseline['peak_rss_mb']:.0f} MB.",
             "",
             "| lab | time | peak memory (MB) | CPU (s) | Run All (s) | "
             + " | ".join(f"students, {c} cores / {g} GB" for c, g in SERVERS) + " |",
             "|---|---|---|---|---|" + "---|" * len(SERVERS)]
    for name, row in rows.items():
        if name == "kernel start-up":
            continue
        sized = []
        for cores, gb in SERVERS:
            by_memory, by_cpu = students(row["peak_rss_mb"], row["cpu_s"], cores, gb)
            bound = "memory" if by_memory < by_cpu else "CPU"
            sized.append(f"{min(by_memory, by_cpu)} ({bound})")
        lines.append(f"| `{name}` | {times.get(name, '—')} | {row['peak_rss_mb']:.0f} | "
                     f"{row['cpu_s']:.0f} | {row['wall_s']:.0f} | " + " | ".join(sized) + " |")
    return "\n".join(lines)


def block() -> str:
    """The tables as they stand between the guide's markers."""
    return f"{BEGIN}\n{tables()}\n{END}"


def answer_space_table() -> str:
    """Each lab's answer space and brute force, as ``make answer-space`` measured them."""
    from course_lib.lab.answer_space import duration

    data = json.loads(ANSWER_SPACE.read_text(encoding="utf-8"))
    lines = ["| lab | each answer: the smallest family that holds it (candidates) | joint "
             "space | tries/s, one core | brute force, one core | release for grading |",
             "|---|---|---|---|---|---|"]
    for exercise, row in data["exercises"].items():
        families = "; ".join(f"`{a['name']}`: {a['family']} ({a['size']:,})"
                             for a in row["answers"])
        found = (f"found in {duration(row['seconds'])} (measured)" if row["measured"] else
                 f"{duration(row['seconds'])} on average, {duration(row['whole_s'])} for all "
                 f"(estimated)")
        lines.append(f"| {exercise} | {families} | {row['joint']:,} | {row['tries_per_s']:.0f} "
                     f"| {found} | {'self-check' if row['self_check'] else 'no self-check'} |")
    return "\n".join(lines)


def answer_space_summary() -> str:
    """Section 3's sentences: what the table says, in numbers."""
    from course_lib.lab.answer_space import duration

    data = json.loads(ANSWER_SPACE.read_text(encoding="utf-8"))
    rows = sorted(data["exercises"].items(), key=lambda item: item[1]["whole_s"])
    kept = sorted(exercise for exercise, row in rows if row["self_check"])
    return ("Measured (section 1's table), one core tries every answer tuple of "
            + ", ".join(f"{exercise} in {duration(row['whole_s'])}" for exercise, row in rows)
            + "; more cores divide these times, a GPU far more. By default a release for "
            f"grading has a self-check only where one core needs more than "
            f"{duration(data['threshold_s'])}: {', '.join(kept) or 'none'}.")


def blocks() -> list[tuple[str, str, str]]:
    """(begin marker, end marker, text) of every generated part of the guide."""
    return [(BEGIN, END, tables()), (*SPACE, answer_space_table()),
            (*SPACE_SUMMARY, answer_space_summary())]


GUIDE = ROOT / "docs" / "teaching.md"


def updated(text: str) -> str:
    """``text`` with today's text between each pair of markers, indented as its first marker
    is (a part inside a list item stays in it)."""
    for begin, end, body in blocks():
        start, stop = text.index(begin), text.index(end) + len(end)
        indent = text[text.rindex("\n", 0, start) + 1:start]
        lines = [begin, *body.splitlines(), end]
        text = text[:start] + f"\n{indent}".join(lines) + text[stop:]
    return text


def write() -> None:
    """Replace what stands between each pair of the guide's markers with today's text."""
    from course_lib.store.safe_folder import write_text_atomically

    write_text_atomically(GUIDE, updated(GUIDE.read_text(encoding="utf-8")))


if __name__ == "__main__":
    import sys

    if "--write" in sys.argv[1:]:
        write()
    else:
        print("\n\n".join(body for _, _, body in blocks()))
