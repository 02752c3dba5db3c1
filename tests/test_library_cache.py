"""Compiled libraries are loaded only from folders no other user can write to (labkit._library_cache).

A library in the cache is code the process runs. When the home cache cannot be written, the
shared temporary directory's ``labkit-<uid>`` is used only if it is this user's own private
folder: a folder planted there by someone else (open to everyone, or a link to theirs) must not
be used, or their library, under the expected name, would be loaded.
"""
import os
import stat

import pytest

from labkit import _library_cache, _native


@pytest.fixture()
def no_home_cache(tmp_path, monkeypatch):
    """A home cache that cannot be created (its parent is a file) and a temporary directory of our own."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("LABKIT_CACHE_DIR", str(blocker / "labkit"))
    shared = tmp_path / "tmp"
    shared.mkdir()
    monkeypatch.setenv("TMPDIR", str(shared))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)          # read TMPDIR again
    return shared / f"labkit-{os.getuid()}"


def test_the_users_own_private_folder_is_used_and_made_private(no_home_cache):
    folder = _library_cache.library_folder()
    assert folder == no_home_cache
    assert stat.S_IMODE(os.lstat(folder).st_mode) & (stat.S_IWGRP | stat.S_IWOTH) == 0


def test_a_folder_open_to_everyone_is_not_used(no_home_cache):
    no_home_cache.mkdir()
    no_home_cache.chmod(0o777)
    folder = _library_cache.library_folder()
    assert folder != no_home_cache and _library_cache.is_private(folder)


def test_a_link_planted_under_the_expected_name_is_not_followed(no_home_cache, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    no_home_cache.symlink_to(theirs)
    folder = _library_cache.library_folder()
    assert folder not in (no_home_cache, theirs) and _library_cache.is_private(folder)


def test_the_cfr_kernel_is_built_in_a_private_folder_when_the_shared_one_is_open(no_home_cache):
    if _native._compiler() is None:
        pytest.skip("no C compiler here: the C kernel is never built")
    no_home_cache.mkdir()
    no_home_cache.chmod(0o777)                  # as if another user had made it first
    path = _native.build()
    assert path.is_file() and path.parent != no_home_cache and _library_cache.is_private(path.parent)
