"""data_pipeline.user_cache: where the cache is, JSON files written whole or not at all, and a library's answers asked
once and read back."""

import importlib.metadata
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


def test_an_answer_is_asked_once_then_read_and_asked_again_where_it_does_not_fit(tmp_path):
    path, asked = tmp_path / "answers" / "en.json", []

    def ask():
        asked.append(1)
        return {"name": "English"}

    def fits(found):
        return isinstance(found, dict) and "name" in found

    assert user_cache.kept_answer(path, ask, fits) == {"name": "English"} and len(asked) == 1
    assert user_cache.kept_answer(path, ask, fits) == {"name": "English"} and len(asked) == 1  # read back
    path.write_text('{"nombre": "English"}', encoding="utf-8")
    assert user_cache.kept_answer(path, ask, fits) == {"name": "English"} and len(asked) == 2
    assert user_cache.read_json(path) == {"name": "English"}
    (tmp_path / "a-file").write_text("", encoding="utf-8")  # no folder can be made below it, not even by root
    assert user_cache.kept_answer(tmp_path / "a-file" / "en.json", ask, fits) == {"name": "English"}


def test_answers_of_another_library_version_or_other_questions_go_to_another_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    questions, other = tmp_path / "asking.py", tmp_path / "other.py"
    questions.write_text("ask = 1\n", encoding="utf-8")
    other.write_text("ask = 2\n", encoding="utf-8")
    path = user_cache.answer_file("pycountry", str(questions), "en")
    version = importlib.metadata.version("pycountry")
    assert path.startswith(str(tmp_path / "rnnsearch-tf" / "pycountry" / version)) and path.endswith(f"{os.sep}en.json")
    folder = os.path.dirname(path)
    assert folder != os.path.dirname(user_cache.answer_file("pycountry", str(other), "en"))
    assert os.path.dirname(user_cache.answer_file("sacremoses", str(questions), "en")).split(os.sep)[-3:-1] == [
        "sacremoses", importlib.metadata.version("sacremoses")]
