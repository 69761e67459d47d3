"""rnnsearch_tf/utils/exports.py: which folder is the newest version, and the settings of an export."""

import os

import pytest
import tensorflow as tf

from rnnsearch_tf.utils.exports import newest_version, read_settings
from helpers.serving_test_utils import SEARCH_OPTIONS, exported_model


def test_the_newest_version_is_the_largest_integer_folder_with_a_saved_model(tmp_path):
    for name in ("2", "10", "11", "notes", ".incomplete-12", "007x"):
        (tmp_path / name).mkdir()
    for name in ("2", "10", "notes"):
        (tmp_path / name / "saved_model.pb").touch()
    assert newest_version(tmp_path) == (10, os.path.join(tmp_path, "10"))  # 11 holds no saved_model.pb
    assert newest_version(str(tmp_path)) == (10, os.path.join(str(tmp_path), "10"))


def test_no_version_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no version folder"):
        newest_version(tmp_path / "missing")
    (tmp_path / "3").mkdir()
    with pytest.raises(FileNotFoundError, match=r"an integer name with a saved_model.pb\) in \S+$"):
        newest_version(tmp_path)
    (tmp_path / "model.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"\(it holds model.json: a model directory, which --model_dir reads\)"):
        newest_version(tmp_path)


def test_read_settings_gives_python_values(tmp_path_factory):
    _, export_dir, version_path = exported_model(tmp_path_factory)
    assert newest_version(export_dir) == (1, version_path)
    settings = read_settings(tf.saved_model.load(version_path))
    for name, value in SEARCH_OPTIONS.items():
        assert settings[name] == value and type(settings[name]) is type(value), name
    assert settings["length_normalization"] == "none" and settings["version"] == 1
    assert (settings["source_language"], settings["target_language"]) == ("en", "fr")
    assert settings["maximum_length_a"] == 2.0 and isinstance(settings["maximum_length_a"], float)
