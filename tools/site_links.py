"""Check every internal link and anchor of a built website; list the external ones, unfetched.

A link is internal when it has no scheme: it must name a file inside the site, and its
``#fragment`` an ``id`` (or ``<a name>``) in that file. External links (``http:``, ``https:``,
``//host``) are only listed: checking them needs the network, which CI does not have.
Links that JavaScript builds at run time (the search results) are not seen here; the browser
test follows those.

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

import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

# Attributes that load or link something, per tag.
LINK_ATTRIBUTES = {"a": "href", "link": "href", "area": "href", "img": "src", "script": "src",
                   "iframe": "src", "source": "src", "video": "src", "audio": "src"}
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
        target = values.get(LINK_ATTRIBUTES.get(tag, ""))
        if target is not None:
            self.links.append(target.strip())


@dataclass
class LinkReport:
    """What `check_site` found: ``broken`` internal links (one line each), ``external`` URLs."""

    pages: int = 0
    internal: int = 0
    broken: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def check_site(root: Path) -> LinkReport:
    """Check the internal links and anchors of the ``.html`` files under ``root``; list the
    external ones."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"site folder {root} does not exist: build the site first "
                                "(make site)")
    # Theme assets under _static/ include Jinja macro files named .html: they are not pages.
    pages = {path: _parse(path) for path in sorted(root.rglob("*.html"))
             if "_static" not in path.relative_to(root).parts}
    report, external = LinkReport(pages=len(pages)), set()
    base_url = "file:///site/"
    for path, page in pages.items():
        name = path.relative_to(root).as_posix()
        for link in page.links:
            if not link or link.lower().startswith(NOT_LINKS):
                continue
            if urlsplit(link).scheme or link.startswith("//"):
                external.add(link)
                continue
            report.internal += 1
            url, fragment = urldefrag(urljoin(base_url + name, link))
            target_name = unquote(urlsplit(url).path).removeprefix("/site/")
            target = root / target_name
            if url.endswith("/") or target.is_dir():
                target = target / "index.html"
            if not target.resolve().is_relative_to(root):
                report.broken.append(f"{name}: {link}: leaves the site")
            elif not target.is_file():
                report.broken.append(f"{name}: {link}: no file "
                                     f"{target.relative_to(root).as_posix()}")
            elif fragment and target.suffix == ".html" and \
                    unquote(fragment) not in pages[target.resolve()].ids:
                report.broken.append(f"{name}: {link}: no id \"{unquote(fragment)}\" in "
                                     f"{target.relative_to(root).as_posix()}")
    report.external = sorted(external)
    return report


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/site_links.py SITE_FOLDER", file=sys.stderr)
        return 2
    report = check_site(Path(argv[0]))
    for line in report.broken:
        print(f"broken link: {line}", file=sys.stderr)
    print(f"{report.pages} pages, {report.internal} internal links checked, "
          f"{len(report.broken)} broken; {len(report.external)} external links (not fetched)")
    return 1 if report.broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
