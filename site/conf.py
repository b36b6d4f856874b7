"""Sphinx configuration of the course's website: `make site` (tools/build_site.py stages the pages).

Jupyter Book's Sphinx stack: myst-parser for Markdown, myst-nb for the notebooks, the
sphinx-book-theme. The notebooks are never executed here: the site shows the outputs that are
committed, the ones CI verified. Everything a page needs is served from the site itself — no
CDN: MathJax is copied from the sphinx-mathjax-offline package, the theme bundles its fonts,
and widgets (which need a running kernel) show the sentence they print without one.
"""

from __future__ import annotations

import shutil
from importlib.metadata import distribution
from pathlib import Path

from sphinx.search.zh import SearchChinese

project = "Upgrading the recall of a RAG system"
author = "the course's authors"
copyright = "the course's authors"
language = "en"
root_doc = "index"

extensions = ["myst_nb", "sphinx_design", "sphinx.ext.mathjax"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
# No warning is silenced: `make site` builds with warnings as errors.

# --- Markdown and notebooks -----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3          # `[text](#a-heading)` links to headings work, checked
smartquotes = False               # a method's 'paragraph' stays Python, not ‘paragraph’
nb_execution_mode = "off"         # the committed outputs, as CI verified them
nb_merge_streams = True           # one block per cell, as in JupyterLab
# A saved widget is drawn by JavaScript from a CDN; a static site shows what the widget
# says without a kernel (its text/plain: "run the cell in Jupyter to use it ...").
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]

# --- Math without a CDN -----------------------------------------------------------------------
mathjax_path = "mathjax/tex-chtml.js"
# tex-chtml.js, its fonts, the TeX extensions it loads on demand, and what its menu's options
# load (ui/; a11y/ with sre/ and the MathML input for speech and the explorer): not the other
# builds MathJax ships.
MATHJAX_PARTS = ("tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui",
                 "a11y", "sre", "input/mml.js", "input/mml")

# --- Search: the pages mix English and Chinese; jieba cuts the Chinese into words ------------
html_search_language = "zh"

# --- Theme --------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "RAG recall, upgraded"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_copy_source = False          # no _sources/ copies of the notebooks (size)
html_show_sourcelink = False
html_last_updated_fmt = None
html_favicon = "_static/favicon.svg"  # else the browser asks for /favicon.ico: a 404
html_context = {"default_mode": "light"}  # else the theme logs "invalid theme mode" at first
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "navigation_with_keys": False,
}


def _copy_mathjax(app, exception) -> None:
    """Copy the parts of MathJax 3 that tex-chtml.js can load into ``_static/mathjax/``."""
    if exception is not None:
        return
    # The package ships MathJax 3 as data (its folder name has a hyphen: not importable).
    source = Path(distribution("sphinx-mathjax-offline").locate_file(
        "sphinx-mathjax-offline/static/mathjax"))
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)


class _SearchChinese(SearchChinese):
    """Sphinx 9.0's Chinese search, its JavaScript stemmer named right.

    Sphinx 9.0 ends language_data.js with ``window.Stemmer = <language_name>Stemmer``, and the
    Chinese search ships the English stemmer (for Latin words): ``ChineseStemmer`` does not
    exist, the search page fails with "ChineseStemmer is not defined" and finds nothing."""

    language_name = "English"


# --- The language switch: every page links to itself in the other edition -----------------------
# tools/build_site.py builds the English site into html/ and the Chinese one (``-D
# language=zh_CN``) into html/zh-CN/, with the same page names.
SWITCH = {"en": ("zh-CN/", "zh-CN", "简体中文"), "zh_CN": ("../", "en", "English")}


def _language_switch(app, pagename, templatename, context, doctree) -> None:
    """Put a link to the same page in the other edition at the top of the page's body."""
    folder, language, label = SWITCH[app.config.language]
    href = "../" * pagename.count("/") + folder + pagename + ".html"
    context["body"] = (f'<p class="language-switch"><a href="{href}" hreflang="{language}" '
                       f'lang="{language}">{label}</a></p>\n' + context.get("body", ""))


def setup(app) -> None:
    app.add_search_language(_SearchChinese)
    app.connect("build-finished", _copy_mathjax)
    app.connect("html-page-context", _language_switch)
