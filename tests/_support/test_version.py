"""The library's version (course_lib._support.version): one number, the same in
pyproject.toml, the installed metadata and the package root, and the one saved knowledge
bases record and check."""

import importlib.metadata
import json
import re
import tomllib
from pathlib import Path

import pytest

import course_lib
from course_lib import Document
from course_lib._support import version
from course_lib.store.persist import PersistError, load, save

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_the_one_of_pyproject_and_of_the_package_root():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert version.__version__ == project["version"]
    assert course_lib.__version__ is version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version.__version__)  # a release number


def test_the_installed_metadata_says_the_same_version():
    try:
        installed = importlib.metadata.version("course_lib")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("course_lib is not installed (run from the source folder)")
    assert installed == version.__version__


def test_a_saved_knowledge_base_records_the_version_and_another_refuses_it(tmp_path,
                                                                          monkeypatch):
    save(Document(texts={"a.txt": "长城。"}), tmp_path / "kb")
    manifest = json.loads((tmp_path / "kb" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["course_lib_version"] == version.__version__
    monkeypatch.setattr(version, "__version__", "99.0.0")
    with pytest.raises(PersistError, match=rf"saved by course_lib "
                                           rf"'{re.escape(manifest['course_lib_version'])}', "
                                           r"this is 99\.0\.0"):
        load(tmp_path / "kb")
