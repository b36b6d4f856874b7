"""Drive the course's notebooks in a real JupyterLab in headless Chromium (Playwright).

``JupyterLab`` starts a throw-away server on 127.0.0.1 over *copies* of the notebooks (the
repository's files are never opened by it); ``NotebookPage`` opens one notebook in a browser
page and runs, inspects and pokes it as a learner would. Both are used by ``conftest.py``.

Waits are on concrete conditions (a cell's execution count, the kernel's status, a text in
an output), never on fixed sleeps, so a slow machine only makes the test slower.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Where a learner or CI may have Chromium (or Chrome); COURSE_CHROMIUM overrides.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Chromium flags: root in CI needs --no-sandbox; the rest keep it off the (closed) network,
# where its background services would otherwise retry lookups at every start.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

# JupyterLab user settings for the throw-away config folder: no autosave (the copies must not
# change under us either), every cell in the DOM (the default windowing leaves cells out of
# view unrendered, which would look like blank outputs), no news or update checks (offline).
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}

# Text that means a picture or a widget did not render (the repr shown instead of it).
NOISE = re.compile(
    r"Error displaying widget|model not found|<IPython\.core\.display\.\w+ object>"
    r"|<Figure size|\b(?:[VH]Box|Box|GridBox|Accordion|Tab)\(children=")


REPO = Path(__file__).resolve().parent.parent


def artifacts_dir() -> Path:
    """Where a failing run's screenshots and logs go: ``$CI_LOG_DIR/browser_tests`` when CI
    names a log folder, else ``browser_tests/artifacts/`` (git-ignored).

    >>> artifacts_dir().name in ("browser_tests", "artifacts")
    True
    """
    log_dir = os.environ.get("CI_LOG_DIR")
    return Path(log_dir) / "browser_tests" if log_dir else REPO / "browser_tests" / "artifacts"


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome executable, or None: ``$COURSE_CHROMIUM`` first, then PATH.

    >>> find_chromium() is None or Path(find_chromium()).exists()
    True
    """
    override = os.environ.get("COURSE_CHROMIUM")
    if override:
        return override if Path(override).is_file() else None
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def noise_in(text: str) -> list[str]:
    """The snippets of ``text`` that are a picture's or a widget's repr instead of the thing.

    >>> noise_in("<IPython.core.display.SVG object>")
    ['<IPython.core.display.SVG object>']
    >>> noise_in("VBox(children=(Combobox(value='x'),))")
    ['VBox(children=']
    >>> noise_in("recall@5 0.979")
    []
    """
    return [m.group(0) for m in NOISE.finditer(text)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    """A JupyterLab server on 127.0.0.1 with a token, throw-away config/data/runtime folders
    (so no trust database: notebooks open untrusted, as in a fresh clone) and copies of
    ``notebooks`` in a temporary folder. Kernels inherit this process's environment, as
    under nbval (COURSE_DATA_MIRROR, COURSE_DATA_CACHE, OMP_NUM_THREADS, HF_*_OFFLINE...).

    Use as a context manager; ``stop()`` ends the server, its kernels and their children by
    PID, also after a failure.
    """

    def __init__(self, notebooks: Iterable[Path], start_timeout: float = 120.0) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="course-browser-test-"))
        self.root = self.home / "notebooks"
        self.root.mkdir()
        for notebook in notebooks:
            shutil.copy2(notebook, self.root / notebook.name)
        self.token = secrets.token_hex(24)
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = self.home / "jupyterlab.log"
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None

    # -- lifetime ---------------------------------------------------------------------
    def __enter__(self) -> JupyterLab:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def environment(self) -> dict[str, str]:
        config, data = self.home / "config", self.home / "data"
        env = dict(os.environ)
        env.update(JUPYTER_CONFIG_DIR=str(config), JUPYTER_DATA_DIR=str(data),
                   JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
                   JUPYTERLAB_SETTINGS_DIR=str(config / "lab" / "user-settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(data / "lab" / "workspaces"))
        return env

    def start(self) -> None:
        env = self.environment()
        settings = Path(env["JUPYTERLAB_SETTINGS_DIR"])
        for plugin, values in LAB_SETTINGS.items():
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        command = [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            # offline: no news feed, no PyPI extension manager
            "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
            # window.jupyterapp: read cell states from the notebook model instead of the DOM
            "--LabApp.expose_app_in_browser=True",
        ]
        with open(self.log_path, "wb") as log:
            # A session (and process group) of its own: stop() can end it and all it started.
            self.process = subprocess.Popen(command, env=env, cwd=self.root, stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with status {self.process.returncode} "
                                   f"before serving:\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status", timeout=2)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not answer on {self.base} within "
                                       f"{self.start_timeout:.0f} s:\n{self.log_tail()}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        """Shut down the kernels and the server; kill, by PID, whatever is left of them."""
        process, self.process = self.process, None
        try:
            if process is not None and process.poll() is None:
                children = _descendants(process.pid)
                try:  # kernels first, politely: the server waits for them
                    for kernel in self.api("GET", "/api/kernels", timeout=5):
                        self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=15)
                except OSError:
                    pass
                _end(process.pid, group=True)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    _end(process.pid, group=True, sig=signal.SIGKILL)
                    process.wait(timeout=5)
                for pid in children:  # kernels run in sessions of their own
                    _end(pid, group=False, sig=signal.SIGKILL)
        finally:
            shutil.rmtree(self.home, ignore_errors=True)

    # -- helpers ----------------------------------------------------------------------
    def api(self, method: str, path: str, timeout: float = 10) -> Any:
        request = urllib.request.Request(f"{self.base}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def url(self, notebook: str) -> str:
        """The page of one notebook, in a fresh workspace (``reset``)."""
        return f"{self.base}/lab/tree/{notebook}?reset&token={self.token}"

    def shutdown_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}", timeout=15)

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no server log)"


def _descendants(pid: int) -> list[int]:
    try:
        import psutil  # installed with ipykernel
    except ImportError:
        return []
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _end(pid: int, group: bool, sig: int = signal.SIGTERM) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# JavaScript run in the page: helpers, then one arrow function called with Playwright's
# argument. window.jupyterapp exists because the server runs with expose_app_in_browser.
_JS_HELPERS = """
const panel = () => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!w || !w.content || !w.content.model) throw new Error('no notebook is open');
  return w;
};
const kernelStatus = () => {
  const s = panel().sessionContext.session;
  return s && s.kernel ? s.kernel.status : 'none';
};
const runState = () => {
  const cells = panel().content.model.cells;
  const errors = []; let pending = 0, running = 0, code = 0;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    code++;
    for (let j = 0; j < c.outputs.length; j++) {
      const o = c.outputs.get(j).toJSON();
      if (o.output_type === 'error') errors.push({cell: i, ename: o.ename, evalue: o.evalue,
                                                  source: c.sharedModel.getSource().slice(0, 300)});
    }
    if (c.executionState === 'running') running++;
    else if (c.executionCount === null) pending++;
  }
  return {code, pending, running, errors, kernel: kernelStatus()};
};
"""


def _fn(body: str) -> str:
    """A JS function of one argument: the helpers above, then ``body`` (an arrow function)."""
    return f"(arg) => {{ {_JS_HELPERS}\n return ({body})(arg); }}"


_OUTPUTS = """
() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')].flatMap(
  (cell, index) => [...cell.querySelectorAll('.jp-OutputArea-output')].map(out => {
    // an output area inside a widget (an Output widget) is listed on its own: count each
    // element in the innermost output area holding it
    const own = selector => [...out.querySelectorAll(selector)].filter(
      e => e.parentElement.closest('.jp-OutputArea-output') === out);
    const media = own('img, svg, canvas, iframe, input, button, select, textarea').filter(
      e => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height > 0);
    // an <img> with no source is no picture (plotly's extension keeps a hidden one)
    const images = own('img').filter(i => i.getAttribute('src'));
    return {
      cell: index,
      mime: out.getAttribute('data-mime-type'),
      text: out.innerText,
      height: out.getBoundingClientRect().height,
      media: media.length + out.querySelectorAll('.jp-OutputArea-output').length,
      images: images.length,
      loaded: images.filter(i => i.complete && i.naturalWidth > 0).length,
      broken: images.filter(i => i.complete && i.naturalWidth === 0).length,
    };
  }))
"""


class NotebookPage:
    """One notebook open in a browser page, with the console log recorded."""

    def __init__(self, page: Any, lab: JupyterLab, name: str, test: str = "browser") -> None:
        self.page, self.lab, self.name = page, lab, name
        self.stem = re.sub(r"[^\w.-]+", "_", f"{test}-{Path(name).stem}")
        self.saved: list[str] = []  # files written by save_artifacts
        self.console: list[str] = []  # every message, for the artifacts of a failing run
        self.errors: list[str] = []   # console errors and uncaught page errors
        page.on("console", lambda message: self._record(message.type, message.text))
        page.on("pageerror", lambda error: self._record("pageerror", str(error)))

    def _record(self, kind: str, text: str) -> None:
        self.console.append(f"[{kind}] {text}")
        if kind in ("error", "pageerror"):
            self.errors.append(f"[{kind}] {text}")

    def js(self, body: str, arg: Any = None) -> Any:
        """Evaluate the arrow function ``body`` (with the helpers) in the page."""
        return self.page.evaluate(_fn(body), arg)

    def wait_for(self, body: str, arg: Any = None, timeout_s: float = 60) -> Any:
        """Wait until the arrow function ``body`` returns something truthy; return it."""
        return self.page.wait_for_function(_fn(body), arg=arg,
                                           timeout=timeout_s * 1000).json_value()

    # -- opening and running ----------------------------------------------------------
    def open(self, timeout_s: float = 120) -> None:
        """Open the notebook and wait until its cells are shown and its kernel is idle."""
        self.page.goto(self.lab.url(self.name))
        try:
            self.wait_for("""name => { try { const p = panel();
                return p.context.path.endsWith(name) && p.content.widgets.length > 0
                       && kernelStatus() === 'idle'; } catch (e) { return false; } }""",
                          self.name, timeout_s)
        except Exception as error:
            raise AssertionError(f"{self.name} did not open with an idle kernel within "
                                 f"{timeout_s:.0f} s ({error.__class__.__name__}); the "
                                 f"server's log ends:\n{self.lab.log_tail(3000)}") from None

    def committed_picture_outputs(self) -> int:
        """How many outputs of the notebook's file hold a picture (image/* data)."""
        notebook = json.loads((self.lab.root / self.name).read_text(encoding="utf-8"))
        return sum(1 for cell in notebook["cells"] for output in cell.get("outputs", [])
                   if any(key.startswith("image/") for key in output.get("data", {})))

    def outputs(self) -> list[dict[str, Any]]:
        """Every output area shown: its text, size, media elements and images."""
        return self.page.evaluate(_OUTPUTS)

    def wait_images_loaded(self, at_least: int, timeout_s: float = 30) -> None:
        """Wait until ``at_least`` <img> elements in outputs have loaded, or one is broken."""
        self.page.wait_for_function("""n => {
            const imgs = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) '
                + '.jp-OutputArea-output img[src]:not([src=""])')];
            return imgs.some(i => i.complete && i.naturalWidth === 0)
                || imgs.filter(i => i.complete && i.naturalWidth > 0).length >= n; }""",
            arg=at_least, timeout=timeout_s * 1000)

    def menu(self, menu: str, item: str) -> None:
        """Click a main-menu item, as a learner does (e.g. Run → Run All Cells)."""
        self.page.locator("#jp-MainMenu .lm-MenuBar-itemLabel").get_by_text(
            menu, exact=True).click()
        self.page.locator(".lm-Menu-content .lm-Menu-itemLabel").get_by_text(
            item, exact=True).click()

    def run_all(self, timeout_s: float = 240) -> dict[str, Any]:
        """Edit → Clear Outputs of All Cells (so that 'every cell has run' can be seen), then
        Run → Run All Cells; wait until every code cell has run or one failed. Returns the
        final state, with any error outputs."""
        self.menu("Edit", "Clear Outputs of All Cells")
        self.wait_for("() => { const s = runState(); return s.pending === s.code; }")
        self.menu("Run", "Run All Cells")
        return self.wait_run(timeout_s)

    def wait_run(self, timeout_s: float = 240) -> dict[str, Any]:
        """Wait until no code cell runs or waits and the kernel is idle, or a cell failed and
        nothing runs any more."""
        try:
            return self.wait_for("""() => { const s = runState();
                if (s.running > 0 || s.kernel !== 'idle') return false;
                return (s.pending === 0 || s.errors.length > 0) ? s : false; }""",
                                 timeout_s=timeout_s)
        except Exception as error:
            raise AssertionError(f"{self.name}: Run All did not finish within {timeout_s:.0f} s "
                                 f"({error.__class__.__name__}); cells now: {self.state()}"
                                 ) from None

    def state(self) -> dict[str, Any]:
        return self.js("() => runState()")

    def wait_kernel_idle(self, timeout_s: float = 120) -> None:
        self.wait_for("() => kernelStatus() === 'idle'", timeout_s=timeout_s)

    def barrier(self, timeout_s: float = 120) -> None:
        """Wait until the kernel has handled everything sent to it so far (widget events
        included) and the page has received what that produced: a silent, empty execute
        request queues behind them, and its reply and 'idle' come after their messages."""
        self.page.evaluate(_fn("""async () => {
            await panel().sessionContext.session.kernel.requestExecute(
                {code: '', silent: true, store_history: false}).done; }"""))
        self.wait_kernel_idle(timeout_s)

    # -- cells ------------------------------------------------------------------------
    def cell_index(self, snippet: str) -> int:
        """Index of the first code cell whose source contains ``snippet``."""
        index = self.js("""snippet => {
            const cells = panel().content.model.cells;
            for (let i = 0; i < cells.length; i++) {
              const c = cells.get(i);
              if (c.type === 'code' && c.sharedModel.getSource().includes(snippet)) return i;
            }
            return -1; }""", snippet)
        if index < 0:
            raise AssertionError(f"{self.name}: no code cell contains {snippet!r}")
        return index

    def cell(self, index: int) -> Any:
        """The locator of cell ``index`` (every cell is in the DOM: windowing is off)."""
        return self.page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)

    def insert_code_cell(self, index: int, source: str) -> None:
        """Insert a code cell at ``index`` (before the cell now there)."""
        self.js("""([index, source]) => panel().content.model.sharedModel.insertCell(index,
                       {cell_type: 'code', source: source, metadata: {}})""", [index, source])

    def run_cell(self, index: int, timeout_s: float = 60) -> str:
        """Run cell ``index`` (select it, then the command behind Run → Run Selected Cell and
        Do not Advance) and return the text of its output."""
        self.wait_kernel_idle(timeout_s)
        self.js("""index => { const p = panel(); p.content.activeCellIndex = index;
                              p.content.deselectAll();
                              p.content.model.cells.get(index).executionCount = null; }""",
                index)
        self.js("() => { window.jupyterapp.commands.execute('notebook:run-cell'); }")
        self.wait_for("""index => { const c = panel().content.model.cells.get(index);
            return c.executionCount !== null && c.executionState === 'idle'
                   && kernelStatus() === 'idle'; }""", index, timeout_s)
        return self.cell(index).locator(".jp-OutputArea").inner_text()

    def run_code(self, source: str, timeout_s: float = 60) -> str:
        """Append a code cell with ``source``, run it, and return its output text."""
        index = self.js("() => panel().content.model.cells.length")
        self.insert_code_cell(index, source)
        return self.run_cell(index, timeout_s)

    # -- evidence of a failure ------------------------------------------------------------
    def save_artifacts(self, label: str, cells: Iterable[int] | None = ()) -> None:
        """Save, in :func:`artifacts_dir`, a screenshot of the page and of ``cells`` (None:
        every cell with an output), the browser's console log and the server's log."""
        folder = artifacts_dir()
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{self.stem}-{label}"
        try:
            self.page.screenshot(path=folder / f"{stem}.png")
            self.saved.append(f"{stem}.png")
            if cells is None:
                count = self.js("() => panel().content.widgets.length")
                cells = [i for i in range(count)
                         if self.cell(i).locator(".jp-OutputArea-output").count()]
            for index in cells:
                cell = self.cell(index)
                cell.scroll_into_view_if_needed()
                cell.screenshot(path=folder / f"{stem}-cell{index:02d}.png")
                self.saved.append(f"{stem}-cell{index:02d}.png")
        except Exception as error:  # a dead page must not hide the failure being recorded
            print(f"(screenshot failed: {error})")
        (folder / f"{self.stem}-console.log").write_text("\n".join(self.console) + "\n")
        (folder / f"{self.stem}-jupyterlab.log").write_text(self.lab.log_tail(200_000))
        for log in (f"{self.stem}-console.log", f"{self.stem}-jupyterlab.log"):
            if log not in self.saved:
                self.saved.append(log)
