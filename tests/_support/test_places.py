"""Where the course keeps its files (course_lib._support.places): the data cache chosen in
its documented order, and a private folder that is never one another user could write."""

import os
import stat
from pathlib import Path

import pytest

import course_lib
from course_lib._support import places
from course_lib._support.places import CACHE_ENV, cache_dir, private_dir

pytestmark = pytest.mark.skipif(os.name != "posix", reason="HOME, modes and owners are POSIX")


def test_the_course_root_is_the_repository_the_library_runs_from():
    assert places.COURSE_ROOT == Path(course_lib.__file__).resolve().parent.parent
    assert (places.COURSE_ROOT / "pyproject.toml").is_file()
    assert places.COURSE_ROOT.is_absolute()


def test_the_cache_is_the_environment_variable_first(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "not" / "made" / "yet"))
    assert cache_dir() == tmp_path / "not" / "made" / "yet"
    assert not (tmp_path / "not").exists()  # naming it creates nothing


def test_then_data_cache_in_the_course_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "")  # set but empty counts as unset
    monkeypatch.setattr(places, "COURSE_ROOT", tmp_path)
    (tmp_path / "data").mkdir()
    assert cache_dir() == tmp_path / "data" / "cache"
    monkeypatch.delenv(CACHE_ENV)
    assert cache_dir() == tmp_path / "data" / "cache"


def test_then_the_users_cache_for_an_installed_library(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setattr(places, "COURSE_ROOT", tmp_path / "site-packages")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "course_lib"
    (tmp_path / "site-packages").mkdir()
    (tmp_path / "site-packages" / "data").write_text("a file, not a folder")
    assert cache_dir() == tmp_path / "home" / ".cache" / "course_lib"


# ------------------------------------------------------------------ the private folder
@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home" / ".cache" / "course_lib-private"


def is_a_fresh_private_temporary(folder: Path, home: Path) -> bool:
    info = folder.lstat()
    fresh = (folder != home and folder.name.startswith("course_lib-private-")
             and stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
             and info.st_uid == os.getuid())
    folder.rmdir()  # it was empty: nothing else made it
    return fresh


def test_the_private_folder_is_made_for_this_user_only_and_then_reused(home):
    assert not home.exists()
    assert private_dir() == home
    info = home.stat()
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    (home / "jieba.cache").write_bytes(b"kept")
    assert private_dir() == home and (home / "jieba.cache").read_bytes() == b"kept"


def test_a_group_writable_private_folder_is_not_used(home):
    home.mkdir(parents=True)
    home.chmod(0o720)
    assert is_a_fresh_private_temporary(private_dir(), home)


def test_a_symlink_planted_at_the_private_folder_is_not_followed(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"  # a 0700 folder of this user, reached by a link
    elsewhere.mkdir(mode=0o700)
    home.parent.mkdir(parents=True)
    home.symlink_to(elsewhere)
    assert is_a_fresh_private_temporary(private_dir(), home)
    assert list(elsewhere.iterdir()) == []


def test_a_file_at_the_private_folder_or_an_unwritable_home_gives_a_temporary(home, tmp_path,
                                                                               monkeypatch):
    home.parent.mkdir(parents=True)
    home.write_text("not a folder")
    assert is_a_fresh_private_temporary(private_dir(), home)
    monkeypatch.setenv("HOME", str(tmp_path / "a-file" / "home"))
    (tmp_path / "a-file").write_text("a home below a file cannot be made")
    assert is_a_fresh_private_temporary(private_dir(), home)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a folder to another user needs root")
def test_a_private_folder_owned_by_another_user_is_not_used(home):
    home.mkdir(parents=True, mode=0o700)
    os.chown(home, 4321, -1)
    assert is_a_fresh_private_temporary(private_dir(), home)
