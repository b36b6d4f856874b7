"""The measured tables of docs/teaching.md: each lab's time, memory and CPU, alone and with a
class at once, and how many students a server holds — computed from
``benchmarks/notebook_resources.json`` (``make bench``),
``benchmarks/classroom_resources.json`` (``make bench-classroom``) and the lab times in the
README's notebook table; and how many answers each lab's self-check lets a learner try, with
the brute force timed — from
``benchmarks/answer_space.json`` (written by ``make answer-space``).

    python tools/teaching_tables.py          # print the tables docs/teaching.md holds
    python tools/teaching_tables.py --write  # put them into docs/teaching.md

A test (tests/repo/test_teaching_guide.py) checks that the guide holds exactly this output.

The sizing model, stated so a teacher can redo it for another server:

* **memory**: every student needs what they needed in ``make bench-classroom``'s largest
  class: the largest per-student peak PSS of the lab (their server, kernel and Chromium; PSS
  splits what students share, so the sums add up); the hub needs what it held; ``HEADROOM``
  of the RAM is left to the system. Students = (usable RAM − hub) / per student.
* **CPU**: everyone presses Run All at once. Each kernel is capped at 2 threads
  (``OMP_NUM_THREADS=2``), so with more students than half the cores they share: the
  Run Alls finish after about (students × CPU seconds per student) / cores — the
  measured class shows how close that is. Students = the number for whom that stays within
  ``PATIENCE_S``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "benchmarks" / "notebook_resources.json"
CLASSROOM = ROOT / "benchmarks" / "classroom_resources.json"
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


def students(student_mb: float, cpu_s: float, cores: int, ram_gb: float,
             hub_mb: float) -> tuple[int, int]:
    """(by memory, by CPU) students a server of ``cores`` and ``ram_gb`` holds at once, each
    needing ``student_mb`` (everything of theirs) and ``cpu_s``, beside a hub of ``hub_mb``.

    >>> students(1000, 60, 16, 64, hub_mb=200)
    (57, 32)
    """
    by_memory = math.floor(((1 - HEADROOM) * ram_gb * 1000 - hub_mb) / student_mb)
    by_cpu = math.floor(cores * PATIENCE_S / cpu_s)
    return by_memory, by_cpu


def tables() -> str:
    """Each lab measured alone (``make bench``) and with a class at once on the hub
    (``make bench-classroom``), then how many students each server holds, from the class."""
    data = json.loads(RESOURCES.read_text(encoding="utf-8"))
    rows, machine = data["notebooks"], data["machine"]
    runs = json.loads(CLASSROOM.read_text(encoding="utf-8"))["runs"]
    largest = max(runs, key=lambda run: run["students"])
    times = lab_times()
    at_once = [f"{run['students']} at once: memory / CPU per student, Run All"
               for run in runs]
    lines = [f"Measured on {machine['cores']} cores ({machine['cpu_model']}, "
             f"{machine['total_ram_gb']} GB), OMP_NUM_THREADS={machine['OMP_NUM_THREADS']}, "
             f"warm cache. *Alone*: `make bench`, one kernel (its peak resident memory, "
             f"`VmHWM`). *At once*: `make bench-classroom`, that many students on the hub "
             f"running every lab in the same order at the same time; a student's memory is "
             f"the peak of the PSS summed over all their processes (their JupyterLab server, "
             f"the kernel, plotly's Chromium), CPU the seconds of those processes, Run All "
             f"the mean over the students. The hub itself (JupyterHub and its proxy) held "
             + ", ".join(f"{run['hub_pss_mb']} MB with {run['students']}" for run in runs)
             + ".",
             "",
             "| lab | time | alone: memory (MB), CPU (s), Run All (s) | "
             + " | ".join(at_once) + " |",
             "|---|---|---|" + "---|" * len(runs)]
    for name, row in rows.items():
        if name == "kernel start-up":
            continue
        cells = [f"{row['peak_rss_mb']:.0f} MB, {row['cpu_s']:.0f} s, {row['wall_s']:.0f} s"]
        for run in runs:
            memory, cpu, wall = class_lab(run, name)
            cells.append(f"{memory:.0f} MB, {cpu:.0f} s, {wall:.0f} s")
        lines.append(f"| `{name}` | {times.get(name, '—')} | " + " | ".join(cells) + " |")
    lines += ["", f"How many students a server holds, from the run with {largest['students']} "
              f"at once (the model above):", "",
              "| lab | " + " | ".join(f"{c} cores / {g} GB" for c, g in SERVERS) + " |",
              "|---|" + "---|" * len(SERVERS)]
    for name in rows:
        if name == "kernel start-up":
            continue
        memory, cpu, _ = class_lab(largest, name)
        sized = []
        for cores, gb in SERVERS:
            by_memory, by_cpu = students(memory, cpu, cores, gb, largest["hub_pss_mb"])
            bound = "memory" if by_memory < by_cpu else "CPU"
            sized.append(f"{min(by_memory, by_cpu)} ({bound})")
        lines.append(f"| `{name}` | " + " | ".join(sized) + " |")
    labs = [name for name in rows if name != "kernel start-up"]
    ratios = sorted(class_lab(largest, name)[2]
                    / (largest["students"] * class_lab(largest, name)[1] / machine["cores"])
                    for name in labs if class_lab(largest, name)[1] >= 5)
    smallest = min(runs, key=lambda run: run["students"])
    growth = max(class_lab(largest, name)[0] / class_lab(smallest, name)[0] - 1
                 for name in labs)
    fell = sum(class_lab(largest, name)[0] < class_lab(smallest, name)[0] for name in labs)
    lines += ["", f"The model against the class: with {largest['students']} students on "
              f"{machine['cores']} cores it predicts a Run All of {largest['students']} × CPU "
              f"seconds per student / {machine['cores']}; the measured Run Alls took "
              f"{ratios[0]:.2f} to {ratios[-1]:.2f} times that (median "
              f"{ratios[len(ratios) // 2]:.2f}; labs of at least 5 CPU seconds): the CPU bounds "
              f"above are that much too generous. Memory per student from {smallest['students']} "
              f"to {largest['students']} at once: lower in {fell} of {len(labs)} labs, and at "
              f"most {growth:+.1%} in any."]
    return "\n".join(lines)


def class_lab(run: dict, name: str) -> tuple[float, float, float]:
    """(the largest per-student peak PSS in MB, the mean per-student CPU seconds, the mean
    Run All seconds) of lab ``name`` in one ``make bench-classroom`` run."""
    labs = [row["labs"][name[:2]] for row in run["rows"]]
    return (max(lab["peak_pss_mb"] for lab in labs),
            sum(lab["cpu_s"] for lab in labs) / len(labs),
            sum(lab["wall_s"] for lab in labs) / len(labs))


def block() -> str:
    """The tables as they stand between the guide's markers."""
    return f"{BEGIN}\n{tables()}\n{END}"


def answer_space_table() -> str:
    """Each lab's answer space and brute force, as ``make answer-space`` measured them."""
    from course_lib.lab.teaching.answer_space import duration

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
    from course_lib.lab.teaching.answer_space import duration

    data = json.loads(ANSWER_SPACE.read_text(encoding="utf-8"))
    rows = sorted(data["exercises"].items(), key=lambda item: item[1]["whole_s"])
    kept = sorted(exercise for exercise, row in rows if row["self_check"])
    return ("From section 1's table (the rates measured, the times for a whole space computed "
            "from them), one core tries every answer tuple of "
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
