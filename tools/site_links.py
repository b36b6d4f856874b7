"""Check every internal link and anchor of a built website; list the external ones, unfetched.

A link is internal when it has no scheme and no host: it must be relative (a link from the
site's root, ``/page.html``, breaks when the site is served from a sub-path), name a file
inside the site, and its ``#fragment`` must be an ``id`` (or ``<a name>``) of that file when
it is a page. External links (``http:``, ``https:``, ``//host``) are only listed: checking
them needs the network, which CI does not have; a ``file:`` link is broken on any host.
Checked: ``href``, ``src``, ``srcset``, ``<form action>`` and ``<object data>`` of the pages
(theme files under ``_static/`` are not pages). Not seen: ``url(...)`` in CSS, and links that
JavaScript builds at run time (the search results) — the browser test follows those.

    python tools/site_links.py _build/site/html

>>> import tempfile, pathlib
>>> site = pathlib.Path(tempfile.mkdtemp())
>>> _ = (site / "a.html").write_text('<h1 id="top">A</h1><a href="b.html#gone">b</a>')
>>> _ = (site / "b.html").write_text('<a href="a.html#top">a</a> <a href="https://x.org">x</a>')
>>> report = check_site(site)
>>> report.broken
['a.html: b.html#gone: no id "gone" in b.html']
>>> report.external
['https://x.org']
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Attributes that load or link something, per tag.
LINK_ATTRIBUTES = {"a": ("href",), "link": ("href",), "area": ("href",), "img": ("src", "srcset"),
                   "script": ("src",), "iframe": ("src",), "source": ("src", "srcset"),
                   "video": ("src",), "audio": ("src",), "form": ("action",), "object": ("data",)}
NOT_LINKS = ("mailto:", "javascript:", "data:", "tel:")


class _Page(HTMLParser):
    """The ids and the links of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("id",) + (("name",) if tag == "a" else ()):
            if values.get(name):
                self.ids.add(values[name])
        for attribute in LINK_ATTRIBUTES.get(tag, ()):
            value = values.get(attribute)
            if value is None:
                continue
            if attribute == "srcset":  # "a.png 1x, b.png 2x": the first word of each part
                self.links += [part.split()[0] for part in value.split(",") if part.strip()]
            else:
                self.links.append(value.strip())


@dataclass
class LinkReport:
    """What `check_site` found: ``broken`` internal links (one line each), ``external`` URLs."""

    pages: int = 0
    internal: int = 0
    broken: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def _problem(root: Path, name: str, link: str, ids_of: Callable[[Path], set[str]]) -> str | None:
    """What is wrong with the internal ``link`` of page ``name``, or ``None``."""
    parts = urlsplit(link)
    if parts.path.startswith("/"):
        return "a link from the site's root (breaks under a sub-path): make it relative"
    target = posixpath.normpath(posixpath.join(posixpath.dirname(name), unquote(parts.path))) \
        if parts.path else name
    if target == ".." or target.startswith("../"):
        return "leaves the site"
    path = root / target
    if path.is_dir():
        path, target = path / "index.html", posixpath.join(target, "index.html")
    if not path.is_file():
        return f"no file {posixpath.normpath(target)}"
    fragment = unquote(parts.fragment)
    if fragment and path.suffix == ".html" and fragment not in ids_of(path):
        return f'no id "{fragment}" in {posixpath.normpath(target)}'
    return None


def check_site(root: Path) -> LinkReport:
    """Check the internal links and anchors of the ``.html`` pages under ``root``; list the
    external ones."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"site folder {root} does not exist: build the site first "
                                "(make site)")
    # Theme assets under _static/ include Jinja macro files named .html: they are not pages.
    pages = {path: _parse(path) for path in sorted(root.rglob("*.html"))
             if "_static" not in path.relative_to(root).parts}
    parsed = dict(pages)

    def ids_of(path: Path) -> set[str]:
        if path not in parsed:
            parsed[path] = _parse(path)
        return parsed[path].ids

    report, external = LinkReport(pages=len(pages)), set()
    for path, page in pages.items():
        name = path.relative_to(root).as_posix()
        for link in page.links:
            if not link or link.lower().startswith(NOT_LINKS):
                continue
            try:
                parts = urlsplit(link)
            except ValueError as error:  # e.g. "https://[bad"
                report.broken.append(f"{name}: {link}: not a URL ({error})")
                continue
            if parts.scheme == "file":
                report.broken.append(f"{name}: {link}: a file: link works on one machine only")
            elif parts.scheme or parts.netloc:
                external.add(link)
            else:
                report.internal += 1
                problem = _problem(root, name, link, ids_of)
                if problem:
                    report.broken.append(f"{name}: {link}: {problem}")
    report.external = sorted(external)
    return report


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/site_links.py SITE_FOLDER", file=sys.stderr)
        return 2
    report = check_site(Path(argv[0]))
    for line in report.broken:
        print(f"broken link: {line}", file=sys.stderr)
    print(f"{report.pages} pages: {report.internal} internal links checked (file and anchor), "
          f"{len(report.broken)} broken; {len(report.external)} external links (not fetched)")
    return 1 if report.broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
