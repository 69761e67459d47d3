"""data_pipeline.user_cache: where the cache is, and JSON files written whole or not at all."""

import os

import pytest

from data_pipeline import user_cache


def test_the_cache_folder_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert user_cache.cache_directory("functions") == str(tmp_path / "rnnsearch-tf" / "functions")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache.cache_directory("a", "b") == str(tmp_path / "home" / ".cache" / "rnnsearch-tf" / "a" / "b")


def test_json_round_trips_and_a_missing_or_broken_file_reads_as_none(tmp_path):
    path = tmp_path / "new" / "folder" / "value.json"
    assert user_cache.read_json(path) is None
    user_cache.write_json(path, {"words": ["Mr", "Dr"], "flag": True})
    assert user_cache.read_json(path) == {"words": ["Mr", "Dr"], "flag": True}
    path.write_text('{"words": [', encoding="utf-8")
    assert user_cache.read_json(path) is None


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    path = tmp_path / "value.json"
    user_cache.write_json(path, [1, 2])
    with pytest.raises(TypeError):
        user_cache.write_json(path, [object()])  # not JSON: fails halfway through
    assert os.listdir(tmp_path) == ["value.json"] and user_cache.read_json(path) == [1, 2]
