"""rnnsearch_tf/models/model_dir.py: ModelDir writes model.json, data.json, parent.json and the
vocabulary copies and reads them back; builds and loads the model; picks checkpoints (best, latest,
averaged); refuses, naming the file, another model, other vocabularies or languages, and bad JSON."""

import dataclasses
import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.data_dir import DataDir
from data_pipeline.pair_reader import sha256
from helpers.model_test_utils import randomize_weights, small_config
from rnnsearch_tf import RNNEncDec, RNNSearch
from rnnsearch_tf.models.model_dir import ModelDir

DATA_INFO = {"source_language": "en", "target_language": "fr", "data_dir": "/data/m30k"}


def _vocabularies(folder, target_words="le chat"):
    folder.mkdir(parents=True, exist_ok=True)
    reserved = "<pad>\t0\n<s>\t0\n</s>\t1\n<unk>\t1\n"
    (folder / "s.tsv").write_text(reserved + "the\t3\n")
    (folder / "t.tsv").write_text(reserved + "".join(f"{word}\t1\n" for word in target_words.split()))
    return folder / "s.tsv", folder / "t.tsv"


def _model_dir(path, model_name="rnnsearch", config=None, data_info=DATA_INFO, parent=None, target_words="le chat"):
    model_dir = ModelDir(path)
    source, target = _vocabularies(path.parent / f"{path.name}_vocabularies", target_words)
    model_dir.write_model(model_name, config or small_config(), data_info, source, target, parent=parent)
    return model_dir


def test_split_gives_the_model_directories_of_an_ensemble(tmp_path):
    assert ModelDir.split("a+b") == ["a", "b"]
    assert ModelDir.split(tmp_path / "one") == [str(tmp_path / "one")]
    assert ModelDir.split("a++b+") == ["a", "b"]
    with pytest.raises(ValueError, match=r"no model directory in '\+'"):
        ModelDir.split("+")


def test_write_model_round_trips(tmp_path):
    config = small_config(hidden_dropout=0.5)
    model_dir = _model_dir(tmp_path / "model", "rnnencdec", config)
    assert model_dir.has_model()
    written = json.loads((tmp_path / "model" / "model.json").read_text())
    assert written == {"model": "rnnencdec", "config": config.to_dict()}
    assert model_dir.read_json("data.json") == DATA_INFO
    for copy, original in (("source_vocab.tsv", "s.tsv"), ("target_vocab.tsv", "t.tsv")):
        assert (tmp_path / "model" / copy).read_bytes() == (tmp_path / "model_vocabularies" / original).read_bytes()
    assert model_dir.read_parent() is None and not (tmp_path / "model" / "parent.json").exists()
    model_dir.check_model("rnnencdec", config)
    assert not ModelDir(tmp_path / "elsewhere").has_model()


def test_parent_json_is_written_and_read_back(tmp_path):
    parent = {"model_dir": "/models/big", "checkpoint": "best", "checkpoint_path": "/models/big/best/ckpt-9",
              "step": 9, "reset_optim": True}
    assert _model_dir(tmp_path / "model", parent=parent).read_parent() == parent


def test_rewriting_a_model_dir_from_its_own_vocabularies_keeps_them(tmp_path):
    model_dir = _model_dir(tmp_path / "model")
    copies = model_dir.source_vocabulary_file, model_dir.target_vocabulary_file
    before = [open(path, "rb").read() for path in copies]
    model_dir.write_model("rnnsearch", small_config(), DATA_INFO, *copies)
    assert [open(path, "rb").read() for path in copies] == before


def test_an_unknown_model_name_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match=r"model must be one of \['rnnencdec', 'rnnsearch'\], got 'transformer'"):
        _model_dir(tmp_path / "model", "transformer")
    assert not (tmp_path / "model").exists()


def test_check_model_names_model_json_when_the_model_differs(tmp_path):
    model_dir = _model_dir(tmp_path / "model")
    written = small_config().hidden_dim
    for model_name, config, difference in (
        ("rnnencdec", small_config(), "model rnnsearch, not rnnencdec"),
        ("rnnsearch", small_config(hidden_dim=written + 1), f"hidden_dim {written}, not {written + 1}"),
    ):
        with pytest.raises(ValueError, match=rf"{tmp_path}/model holds a different model \({tmp_path}/model/model.json: "
                                             rf"{difference} as given\)"):
            model_dir.check_model(model_name, config)
    model_dir.check_model("rnnsearch", small_config())  # the same model: resumes


def test_read_json_names_a_missing_or_invalid_file(tmp_path):
    model_dir = _model_dir(tmp_path / "model")
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}/model/nothing.json is missing: {tmp_path}/model is not "
                                                "a model directory written by training"):
        model_dir.read_json("nothing.json")
    (tmp_path / "model" / "data.json").write_text('{"source_language": "en",')
    with pytest.raises(ValueError, match=rf"{tmp_path}/model/data.json: not valid JSON"):
        model_dir.read_json("data.json")
    (tmp_path / "export" / "3" / "variables").mkdir(parents=True)
    for name in ("saved_model.pb", "variables/variables.index"):
        (tmp_path / "export" / "3" / name).write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"training \(it holds a SavedModel: --saved_model reads exports\)$"):
        ModelDir(tmp_path / "export").read_json("model.json")


def test_build_model_makes_the_model_of_model_json(tmp_path):
    assert isinstance(_model_dir(tmp_path / "a").build_model(), RNNSearch)
    model = _model_dir(tmp_path / "b", "rnnencdec").build_model(precision="mixed_bfloat16")
    assert isinstance(model, RNNEncDec) and model.config == dataclasses.replace(small_config(), precision="mixed_bfloat16")
    (tmp_path / "b" / "model.json").write_text(json.dumps({"model": "gru", "config": small_config().to_dict()}))
    with pytest.raises(ValueError, match=rf"{tmp_path}/b/model.json: field 'model' must be one of"):
        ModelDir(tmp_path / "b").build_model()


def test_checkpoint_path_prefers_best_then_latest_and_load_model_reads_it(tmp_path):
    model_dir = _model_dir(tmp_path / "model")
    with pytest.raises(FileNotFoundError, match=rf"no checkpoint in {tmp_path}/model/checkpoints or "
                                                rf"{tmp_path}/model/best"):
        model_dir.checkpoint_path()
    with pytest.raises(FileNotFoundError, match=rf"no checkpoint in {tmp_path}/model/averaged: run "):
        model_dir.checkpoint_path("averaged")
    model = model_dir.build_model()
    weights = {}
    for directory, step, seed in ((model_dir.checkpoint_dir, 20, 1), (model_dir.best_checkpoint_dir, 10, 2)):
        randomize_weights(model, seed=seed)
        weights[step] = [variable.numpy() for variable in model.weights]
        tf.train.CheckpointManager(tf.train.Checkpoint(model=model), directory, 1).save(checkpoint_number=step)
        assert model_dir.checkpoint_path() == f"{directory}/ckpt-{step}"  # best once there is one
    assert model_dir.checkpoint_path("latest") == f"{model_dir.checkpoint_dir}/ckpt-20"
    assert model_dir.checkpoint_path(f"{model_dir.checkpoint_dir}/ckpt-20") == f"{model_dir.checkpoint_dir}/ckpt-20"
    assert model_dir.checkpoint_path("ckpt-10") == f"{model_dir.best_checkpoint_dir}/ckpt-10"  # a name of its own
    with pytest.raises(FileNotFoundError, match=r"checkpoint ckpt-7 not found: neither a checkpoint path nor one of "
                                                rf"{tmp_path}/model's \(checkpoints/ckpt-20, best/ckpt-10\); or give best"):
        model_dir.checkpoint_path("ckpt-7")
    assert not any(np.any(variable.numpy()) for variable in model_dir.build_model(to_restore=True).weights
                   if keras.backend.is_float_dtype(variable.dtype))  # nothing drawn that the checkpoint replaces
    for checkpoint, step in (("best", 10), ("latest", 20)):
        loaded, path = model_dir.load_model(checkpoint)
        assert path.endswith(f"ckpt-{step}")
        for variable, expected in zip(loaded.weights, weights[step]):
            np.testing.assert_array_equal(variable.numpy(), expected)


def test_check_same_data_names_the_differing_vocabulary_or_languages(tmp_path):
    model_dir = _model_dir(tmp_path / "a")
    model_dir.check_same_data(_model_dir(tmp_path / "b", "rnnencdec"))
    with pytest.raises(ValueError, match=rf"{tmp_path}/a/target_vocab.tsv and {tmp_path}/c/target_vocab.tsv differ"):
        model_dir.check_same_data(_model_dir(tmp_path / "c", target_words="le chien"))
    with pytest.raises(ValueError, match=rf"{tmp_path}/a and {tmp_path}/d translate different languages: en-fr and "
                                         r"fr-en$"):
        model_dir.check_same_data(_model_dir(tmp_path / "d", data_info={"source_language": "fr", "target_language": "en"}))


def test_check_vocabularies_against_the_checksums_of_the_data_directory(tmp_path):
    model_dir = _model_dir(tmp_path / "model")
    data = tmp_path / "data"
    data.mkdir()
    vocabularies = {"source": {"sha256": sha256(model_dir.source_vocabulary_file)},
                    "target": {"sha256": sha256(model_dir.target_vocabulary_file)}}
    (data / "metadata.json").write_text(json.dumps({"vocabularies": vocabularies}))
    model_dir.check_vocabularies(DataDir(data))
    vocabularies["target"]["sha256"] = "0" * 64
    (data / "metadata.json").write_text(json.dumps({"vocabularies": vocabularies}))
    with pytest.raises(ValueError, match=rf"{tmp_path}/model/target_vocab.tsv differs from the target vocabulary of "
                                         rf"{data} \(rebuilt since this model started\?\)"):
        model_dir.check_vocabularies(DataDir(data))
    del vocabularies["target"]["sha256"]  # a data directory built before checksums were recorded
    (data / "metadata.json").write_text(json.dumps({"vocabularies": vocabularies}))
    model_dir.check_vocabularies(DataDir(data))


def test_a_variety_agrees_with_its_language_in_an_ensemble_and_its_data(tmp_path):
    """A model of --target_language=cmn data joins a "zh" one and trains on "zh" data (`languages.same_language`);
    another language is still refused."""
    def to(target):
        return _model_dir(tmp_path / target, data_info={"source_language": "en", "target_language": target})

    mandarin = to("cmn")
    mandarin.check_same_data(to("zh"))
    with pytest.raises(ValueError, match="translate different languages"):
        mandarin.check_same_data(to("ja"))
    data = tmp_path / "data"
    data.mkdir()
    vocabularies = {side: {"sha256": sha256(mandarin.vocabulary_file(side))} for side in ("source", "target")}
    metadata = {"source_language": "en", "target_language": "zh", "vocabularies": vocabularies}
    (data / "metadata.json").write_text(json.dumps(metadata))
    mandarin.check_vocabularies(DataDir(data))
    (data / "metadata.json").write_text(json.dumps(dict(metadata, target_language="ja")))
    with pytest.raises(ValueError, match=rf"{tmp_path}/cmn translates en -> cmn but {data} holds en -> ja"):
        mandarin.check_vocabularies(DataDir(data))


def test_the_folder_names_its_files_and_reads_them(tmp_path):
    config = small_config()
    model_dir = _model_dir(tmp_path / "model", config=config)
    assert model_dir.read_model_description() == {"model": "rnnsearch", "config": config.to_dict()}
    assert model_dir.model_file == str(tmp_path / "model" / "model.json")
    assert model_dir.read_training_state() is None  # not validated yet
    (tmp_path / "model" / "training_state.json").write_text('{"step": 5}')
    assert model_dir.read_training_state() == {"step": 5}
    assert model_dir.shortlist_file == str(tmp_path / "model" / "shortlist.npz")
    assert model_dir.flags_file == str(tmp_path / "model" / "flags.txt")
    assert model_dir.tensorboard_dir("dev") == str(tmp_path / "model" / "dev")
    assert model_dir.worker_dir(2) == str(tmp_path / "model" / "workers" / "2")
    with pytest.raises(ValueError, match="TensorBoard logs are train/ and dev/"):
        model_dir.tensorboard_dir("test")
    assert model_dir.codec_descriptions()["target"] == {"kind": "moses", "language": "fr",
                                                          "vocabulary": "target_vocab.tsv"}
