"""`make report`: give each picture of an exported notebook its alt text.

nbconvert's HTML export writes ``alt="No description has been provided for this image"`` on
every ``<img>``; each course chart carries its description as the output's ``text/plain``
("Picture: …", :func:`course_lib.lab.show.plots.show`). This copies that description onto the
picture, in order — the n-th PNG output of the notebook is the n-th ``<img>`` of the page —
and refuses (exit 1, nothing written) when the two counts differ.

    python tools/alt_text.py NOTEBOOK.ipynb PAGE.html
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup


def descriptions(notebook: Path) -> list[str]:
    """Each PNG output's ``text/plain``, in order ("" where it has none)."""
    cells = nbformat.read(notebook, as_version=4).cells
    return [str(output.get("data", {}).get("text/plain", "")).strip()
            for cell in cells for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})]


def add_alt_text(notebook: Path, page: Path) -> int:
    """Write ``page`` again (atomically) with each ``<img>``'s alt from ``notebook``;
    returns how many pictures were described."""
    texts = descriptions(notebook)
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    images = soup.find_all("img")
    if len(images) != len(texts):
        raise SystemExit(f"{page}: {len(images)} pictures but {notebook} has {len(texts)} PNG "
                         "outputs: export the notebook again (make report)")
    for image, text in zip(images, texts, strict=True):
        if text:
            image["alt"] = text
    handle, name = tempfile.mkstemp(dir=page.parent, suffix=".html")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(str(soup))
    os.replace(name, page)
    return sum(bool(t) for t in texts)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(f"{add_alt_text(Path(sys.argv[1]), Path(sys.argv[2]))} pictures described")
