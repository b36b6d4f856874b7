"""`make bench`: what each course notebook costs its kernel — peak memory and CPU of a Run All.

For every notebook in ``notebooks/`` (00 … 12, in order) and for a one-cell notebook (the
**kernel start-up** baseline: ipykernel and its imports, nothing of the course), it records

* ``peak_rss_mb``: the kernel's peak resident memory, ``VmHWM`` of the kernel process in
  ``/proc/<pid>/status``, read after the last cell and before the kernel is shut down —
  the kernel's own number, not the executor's;
* ``cpu_s``: the kernel's CPU seconds (user + system, all its threads, plus any children it
  waited for), from ``/proc/<pid>/stat`` at the same moment — start-up included, so the
  baseline row is what a notebook costs before its first cell;
* ``wall_s``: seconds of the Run All (first cell to last, the kernel already started).

Method: each notebook runs in a **fresh Python child process** (this script with
``--child``), which executes it with nbclient cell by cell, working directory
``notebooks/`` (so relative paths work), the kernel ``python3`` of this environment, and
the environment as given (``OMP_NUM_THREADS`` included). The executed notebook goes to a
temporary file (or to ``--executed-dir``): the committed notebook is never written. As a
cross-check the child also reports ``getrusage(RUSAGE_CHILDREN)`` once the kernel has been
shut down and waited for: its only child is the kernel, so ``ru_maxrss`` there is the max
over the kernel and its waited-for descendants (``rusage_maxrss_mb``, ``rusage_cpu_s``,
the latter including shutdown; the former also counts the executor's image the kernel was
forked from before its exec, so it reads about 70 MB for a kernel that holds less). Run
on a warm data cache (``make data`` first) — a cold one measures downloads and embedding
the knowledge base instead.

Writes ``benchmarks/notebook_resources.json`` (rows per notebook and the machine: cores,
total RAM, ``OMP_NUM_THREADS``; with ``--notebooks`` the named rows are replaced and the
others kept) and prints a markdown table.

    python benchmarks/notebooks.py [--notebooks 07 08] [--executed-dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOTEBOOKS = ROOT / "notebooks"
BASELINE = "kernel start-up"
CELL_TIMEOUT_S = 3600
MB = 1e6


def proc_status_kb(pid: int, field: str) -> int:
    """A ``kB`` field (``VmHWM``, ``VmRSS``) of ``/proc/<pid>/status``."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def proc_cpu_s(pid: int) -> float:
    """utime + stime + cutime + cstime of ``pid`` (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the command's ")": state is field 3, so utime (14) .. cstime (17) are [11:15].
    ticks = sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def kernel_pid(client) -> int:
    """The PID of the kernel process nbclient started (jupyter_client's local provisioner)."""
    process = getattr(client.km.provisioner, "process", None)
    if process is None:
        raise RuntimeError("not a local kernel: no process to measure")
    return process.pid


def run_child(path: Path, executed: Path) -> dict:
    """Execute ``path`` in a new kernel; the kernel's peak RSS, CPU, wall (runs in the child)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    row: dict = {}
    with client.setup_kernel():
        pid = kernel_pid(client)
        info = client.wait_for_reply(client.kc.kernel_info())
        client.nb.metadata["language_info"] = info["content"]["language_info"]
        row["startup_rss_mb"] = round(proc_status_kb(pid, "VmRSS") * 1e3 / MB, 1)
        row["startup_cpu_s"] = round(proc_cpu_s(pid), 2)
        started = time.perf_counter()
        for index, cell in enumerate(client.nb.cells):
            client.execute_cell(cell, index)
        row["wall_s"] = round(time.perf_counter() - started, 2)
        row["peak_rss_mb"] = round(proc_status_kb(pid, "VmHWM") * 1e3 / MB, 1)
        row["end_rss_mb"] = round(proc_status_kb(pid, "VmRSS") * 1e3 / MB, 1)
        row["cpu_s"] = round(proc_cpu_s(pid), 2)
    nbformat.write(client.nb, executed)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel, shut down and waited for
    row["rusage_maxrss_mb"] = round(usage.ru_maxrss * 1e3 / MB, 1)  # ru_maxrss is in KiB
    row["rusage_cpu_s"] = round(usage.ru_utime + usage.ru_stime, 2)
    row["cells"] = len(nb.cells)
    return row


def baseline_notebook(folder: Path) -> Path:
    """A notebook of one trivial cell: what a kernel costs before any course code."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = folder / "baseline.ipynb"
    nbformat.write(nb, path)
    return path


def measure(path: Path, executed: Path) -> dict:
    """Run ``path`` in a fresh child process (this script, ``--child``); its JSON row."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(path),
               "--executed", str(executed)]
    done = subprocess.run(command, cwd=NOTEBOOKS, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
        return {"error": "\n".join(tail)}
    return json.loads(done.stdout.strip().splitlines()[-1])


def machine() -> dict:
    """Facts that the numbers depend on."""
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    total_kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal:"))
    cpu_model = ""
    try:
        cpu_model = next((line.split(":", 1)[1].strip()
                          for line in Path("/proc/cpuinfo").read_text().splitlines()
                          if line.startswith("model name")), "")
    except OSError:
        pass
    return {
        "cores": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model,
        "total_ram_gb": round(total_kb * 1e3 / 1e9, 1),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def select(names: list[str] | None) -> list[Path]:
    """The course notebooks, in order; ``names`` are prefixes (``07``) or file names."""
    every = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if not names:
        return every
    chosen = [p for p in every if any(p.name.startswith(n) or p.stem == n for n in names)]
    missing = [n for n in names if not any(p.name.startswith(n) for p in chosen)]
    if missing:
        raise SystemExit(f"no notebook matches {missing}")
    return chosen


def table(rows: dict) -> str:
    """The rows as a markdown table."""
    lines = ["| notebook | peak RSS (MB) | CPU (s) | wall (s) |", "|---|---:|---:|---:|"]
    for name, row in rows.items():
        if "error" in row:
            lines.append(f"| {name} | failed | | |")
        else:
            lines.append(f"| {name} | {row['peak_rss_mb']:,.0f} | {row['cpu_s']:.1f} | "
                         f"{row['wall_s']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="+", metavar="NN",
                        help="only these (prefixes such as 07 08); default: all")
    parser.add_argument("--executed-dir", type=Path,
                        help="keep the executed notebooks here (default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=HERE / "notebook_resources.json")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--executed", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:  # one notebook, in this fresh process: print its row as JSON
        row = run_child(args.child.resolve(), args.executed)
        print(json.dumps(row))
        return row

    paths = select(args.notebooks)
    results: dict = {"notebooks": {}}
    if args.notebooks and args.out.exists():
        results = json.loads(args.out.read_text())
    results["machine"] = machine()
    results["method"] = ("kernel VmHWM and /proc/<pid>/stat CPU (start-up included) after the "
                         "last cell; wall = the cells; one fresh executor per notebook")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.executed_dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        rows = results["notebooks"]
        failed = False
        for name, path in [(BASELINE, baseline_notebook(Path(scratch)))] + \
                          [(p.stem, p) for p in paths]:
            row = measure(path, folder / path.name)
            row["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
            rows[name] = row
            failed |= "error" in row
            summary = row.get("error") or (f"peak RSS {row['peak_rss_mb']:,.0f} MB, CPU "
                                           f"{row['cpu_s']:.1f} s, wall {row['wall_s']:.1f} s")
            print(f"{name}: {summary}", file=sys.stderr, flush=True)
    order = [BASELINE] + [p.stem for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]
    results["notebooks"] = {n: rows[n] for n in order if n in rows}
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    m = results["machine"]
    print(f"\n{m['cores']} cores, {m['total_ram_gb']} GB RAM, "
          f"OMP_NUM_THREADS={m['OMP_NUM_THREADS']}\n")
    print(table(results["notebooks"]))
    if failed:
        raise SystemExit(1)
    return results


if __name__ == "__main__":
    main()
