"""data_pipeline/export_dir.py: which folders of an export are complete versions, the newest one, the files of a
version, and an export's settings with the values of older exports."""

import json
import os

import pytest
import tensorflow as tf

from data_pipeline.export_dir import MAX_VERSION, ExportDir, ExportSettings, ExportVersion
from helpers.serving_test_utils import SEARCH_OPTIONS, exported_model


def _version_folder(path, files=("saved_model.pb", "variables/variables.index")):
    """A folder holding empty `files` (paths under it), as a copy under way leaves it."""
    for name in files:
        os.makedirs(os.path.dirname(os.path.join(path, name)), exist_ok=True)
        open(os.path.join(path, name), "wb").close()
    return ExportVersion(path)


def test_a_version_is_complete_once_it_holds_the_graph_and_the_weights_index(tmp_path):
    assert _version_folder(tmp_path / "1").is_complete()
    assert not _version_folder(tmp_path / "2", ["saved_model.pb"]).is_complete()  # variables/ still being copied
    assert not _version_folder(tmp_path / "3", ["variables/variables.index"]).is_complete()
    assert not ExportVersion(tmp_path / "4").is_complete()


def test_the_newest_version_is_the_largest_complete_integer_folder(tmp_path):
    for name in ("2", "10", "notes", "007x", ".incomplete-12"):
        _version_folder(tmp_path / name)
    _version_folder(tmp_path / "11", ["saved_model.pb"])
    export_dir = ExportDir(tmp_path)
    assert {number: version.path for number, version in export_dir.versions().items()} == {
        2: str(tmp_path / "2"), 10: str(tmp_path / "10")}
    newest = export_dir.newest_version()
    assert (newest.number, newest.path) == (10, str(tmp_path / "10"))
    assert export_dir.incomplete_version(12).path == str(tmp_path / ".incomplete-12")
    assert export_dir.version(11).path == str(tmp_path / "11") and 11 not in export_dir.versions()


def test_only_names_of_ascii_digits_that_fit_an_int64_are_versions(tmp_path):
    """As TF Serving's `safe_strto64` reads a folder name: `²` and `٣` are digits to `str.isdigit` (and `٣` 3 to
    `int`), but no version; nor is a number past int64."""
    for name in ("1", "\u00b2", "\u0663", str(MAX_VERSION), str(MAX_VERSION + 1)):
        _version_folder(tmp_path / name)
    assert sorted(ExportDir(tmp_path).versions()) == [1, MAX_VERSION]
    assert ExportDir(tmp_path).exists() and not ExportDir(tmp_path / "missing").exists()


def test_no_version_is_file_not_found(tmp_path):
    assert ExportDir(tmp_path / "missing").versions() == {}
    with pytest.raises(FileNotFoundError, match="no version folder"):
        ExportDir(tmp_path / "missing").newest_version()
    _version_folder(tmp_path / "3", ["saved_model.pb"])
    with pytest.raises(FileNotFoundError, match=r"\(an integer name holding saved_model.pb and "
                                                r"variables/variables.index\) in \S+$"):
        ExportDir(tmp_path).newest_version()
    (tmp_path / "model.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"\(it holds model.json: a model directory, which --model_dir reads\)"):
        ExportDir(tmp_path).newest_version()


def test_the_files_of_a_version(tmp_path):
    version = ExportVersion(tmp_path / "7")
    version.write_settings({"version": 7, "source_language": "en"})
    with open(tmp_path / "7" / "assets.extra" / "export_settings.json", encoding="utf-8") as stream:
        assert json.load(stream) == {"version": 7, "source_language": "en"}
    assert version.settings_file == str(tmp_path / "7" / "assets.extra" / "export_settings.json")
    assert version.warmup_file == str(tmp_path / "7" / "assets.extra" / "tf_serving_warmup_requests")
    assert version.asset("source_vocab.tsv") == str(tmp_path / "7" / "assets" / "source_vocab.tsv")
    assert ExportDir(tmp_path).batching_parameters_file == str(tmp_path / "batching_parameters.txt")


class _OlderExport(tf.Module):
    """An export whose `settings` signature predates codecs: no `source_codec`, no `target_codec`."""

    @tf.function(input_signature=[])
    def settings(self):
        return {"source_language": tf.constant("en"), "maximum_batch_size": tf.constant(4),
                "length_penalty": tf.constant(0.5), "forbid_unk": tf.constant(True)}


def test_an_older_exports_settings_get_the_values_it_had(tmp_path):
    module = _OlderExport()
    tf.saved_model.save(module, str(tmp_path / "1"), signatures={"settings": module.settings})
    version = ExportDir(tmp_path).newest_version()  # a real SavedModel is a complete version
    assert version.number == 1 and "settings" in version.read_saved_model().meta_graphs[0].signature_def
    settings = ExportSettings.read(version.load())
    assert settings == {"source_language": "en", "maximum_batch_size": 4, "length_penalty": 0.5, "forbid_unk": True,
                        "source_codec": "moses", "target_codec": "moses", "source_lowercase": False,
                        "target_lowercase": False, "uses_attention": True}  # as before the record: <unk> replaced
    assert type(settings["maximum_batch_size"]) is int and type(settings["forbid_unk"]) is bool
    assert settings.codec_is_moses("source") and settings.codec_is_moses("target")


def test_recorded_codecs_override_the_older_values():
    settings = ExportSettings({"source_codec": "moses", "target_codec": "sentencepiece"})
    assert settings.codec_is_moses("source") and not settings.codec_is_moses("target")
    assert ExportSettings() == {"source_codec": "moses", "target_codec": "moses", "source_lowercase": False,
                                "target_lowercase": False, "uses_attention": True}


def test_the_moses_codec_of_a_side_has_its_recorded_language_and_lower_casing():
    settings = ExportSettings({"source_language": "de", "target_language": "en", "target_lowercase": True,
                               "target_codec": "moses"})
    source, target = settings.moses_codec("source"), settings.moses_codec("target")
    assert (source.language, source.lowercase, target.language, target.lowercase) == ("de", False, "en", True)
    text = tf.constant(["Ein Mann mit HUT."])
    assert source.tokenize(text).to_list() == [[b"Ein", b"Mann", b"mit", b"HUT", b"."]]
    assert target.tokenize(text).to_list() == [[b"ein", b"mann", b"mit", b"hut", b"."]]
    with pytest.raises(ValueError, match="source codec is sentencepiece"):
        ExportSettings({"source_codec": "sentencepiece"}).moses_codec("source")


def test_an_exports_settings_are_python_values(tmp_path_factory):
    _, export_dir, version_path = exported_model(tmp_path_factory)
    version = ExportDir(export_dir).newest_version()
    assert (version.number, version.path) == (1, version_path)
    settings = ExportSettings.read(version.load())
    for name, value in SEARCH_OPTIONS.items():
        assert settings[name] == value and type(settings[name]) is type(value), name
    assert settings["length_normalization"] == "none" and settings["version"] == 1
    assert (settings["source_language"], settings["target_language"]) == ("en", "fr")
    assert settings["maximum_length_a"] == 2.0 and isinstance(settings["maximum_length_a"], float)
    assert settings.codec_is_moses("source") and settings.codec_is_moses("target")
