"""Every picture of docs/report.html says what it shows (tools/alt_text.py, `make report`)."""

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import alt_text  # noqa: E402

bs4 = pytest.importorskip("bs4")


def test_every_picture_of_the_report_has_its_description():
    page = bs4.BeautifulSoup((ROOT / "docs" / "report.html").read_text(encoding="utf-8"),
                             "html.parser")
    alts = [img.get("alt", "") for img in page.find_all("img")]
    assert alts and all(alt.startswith("Picture: ") for alt in alts)
    assert alts == alt_text.descriptions(ROOT / "notebooks" / "10_benchmark_report.ipynb")


def test_a_page_that_does_not_match_its_notebook_is_refused_and_kept(tmp_path):
    picture = nbformat.v4.new_output("display_data",
                                     {"image/png": "iVBOR", "text/plain": "Picture: a"})
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[picture])])
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    page = tmp_path / "p.html"
    page.write_text("<p><img alt='x'><img alt='y'></p>", encoding="utf-8")
    with pytest.raises(SystemExit, match="2 pictures but .* has 1 PNG"):
        alt_text.add_alt_text(path, page)
    assert page.read_text(encoding="utf-8") == "<p><img alt='x'><img alt='y'></p>"
    page.write_text("<p><img alt='x'></p>", encoding="utf-8")
    assert alt_text.add_alt_text(path, page) == 1
    assert 'alt="Picture: a"' in page.read_text(encoding="utf-8")
