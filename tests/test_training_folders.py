"""TrainingFolders: the data and model directories of a run, checked before anything is written."""

import dataclasses
import json
import shutil

import pytest

from data_pipeline import corpus_registry
from data_pipeline.dataset_builder import DatasetBuilder
from rnnsearch_tf import ModelConfig
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.training_config import TrainingConfig
from rnnsearch_tf.training.training_folders import TrainingFolders
from helpers.toy_translation import write_corpus


def _model_config(data_dir, **overrides):
    vocabularies = json.loads((data_dir / "metadata.json").read_text())["vocabularies"]
    return ModelConfig(source_vocab_size=vocabularies["source"]["size"], target_vocab_size=vocabularies["target"]["size"],
                       **dict(dict(embedding_dim=8, hidden_dim=16, maxout_dim=8, alignment_dim=16), **overrides))


def _training_config(data_dir, model_dir, **overrides):
    return TrainingConfig(**{"data_dir": str(data_dir), "model_dir": str(model_dir), "validate_every": 0, **overrides})


def test_a_new_model_directory_is_described_with_the_datas_codec(toy_data, tmp_path):
    folders = TrainingFolders(_training_config(toy_data, tmp_path / "m"), _model_config(toy_data))
    assert folders.training_pairs == folders.data_dir.records("train") and folders.max_length == 20
    assert not (tmp_path / "m").exists()  # nothing written before prepare_model_dir
    folders.prepare_model_dir()
    model_dir = ModelDir(tmp_path / "m")
    assert model_dir.has_model() and model_dir.differing_vocabulary(folders.data_dir) is None
    info = model_dir.read_data_info()
    assert (info["source_language"], info["target_language"], info["max_length"]) == ("en", "fr", 20)
    assert info["codec"] == folders.data_dir.codec_descriptions()
    TrainingFolders(_training_config(toy_data, tmp_path / "m"), _model_config(toy_data)).prepare_model_dir()
    with pytest.raises(ValueError, match="holds a different model"):
        TrainingFolders(_training_config(toy_data, tmp_path / "m"), _model_config(toy_data, hidden_dim=40)
                        ).prepare_model_dir()


def test_a_worker_writes_only_its_own_folder(toy_data, tmp_path):
    folders = TrainingFolders(_training_config(toy_data, tmp_path / "m"), _model_config(toy_data), worker_index=1)
    folders.prepare_model_dir()
    assert folders.worker_dir.path == ModelDir(tmp_path / "m").worker_dir(1)
    assert (tmp_path / "m" / "workers" / "1").is_dir() and not ModelDir(tmp_path / "m").has_model()


def test_vocabulary_sizes_and_missing_data_are_refused_in_one_line(toy_data, tmp_path):
    small = dataclasses.replace(_model_config(toy_data), source_vocab_size=7)
    with pytest.raises(ValueError, match=r"source vocabulary of \d+ entries but the model config says source_vocab_size=7"):
        TrainingFolders(_training_config(toy_data, tmp_path / "a"), small)
    with pytest.raises(FileNotFoundError, match="metadata.json is missing: --data_dir must be the --output_dir"):
        TrainingFolders(_training_config(tmp_path, tmp_path / "b"), _model_config(toy_data))


def test_a_dev_split_of_no_pair_is_refused_when_training_validates(toy_data, tmp_path):
    """As `metadata.json` of a data folder built before build-data refused such a split lists it."""
    data = tmp_path / "data"
    shutil.copytree(toy_data, data)
    metadata = json.loads((data / "metadata.json").read_text())
    for shard in metadata["splits"]["dev"]["shards"]:
        shard["records"] = 0
    (data / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(ValueError, match=rf"^{data / 'metadata.json'}: the dev split has no pair to validate on: "
                                         "rebuild the data with --dev_source/--dev_target, or train with "
                                         "--validate_every=0$"):
        TrainingFolders(_training_config(data, tmp_path / "m", validate_every=10), _model_config(toy_data))
    assert not (tmp_path / "m").exists()
    TrainingFolders(_training_config(data, tmp_path / "m"), _model_config(toy_data))  # validate_every=0: taken


def test_data_without_a_dev_split_is_refused_when_training_validates_saying_how_to_train_on_it(tmp_path):
    files = write_corpus(tmp_path / "raw", train_pairs=200)
    corpus = corpus_registry.text_file_corpus("en", "fr", {"train": files["train"]})  # `--train_source/target` alone
    data = tmp_path / "data"
    DatasetBuilder(corpus, data, vocabulary_size=20, num_shards=1, show_progress=False).build()
    with pytest.raises(ValueError, match=rf"^--dev_split=dev: {data / 'metadata.json'} has no such split to validate "
                                         r"on \(it has \['train'\]\): name one of them with --dev_split, rebuild the "
                                         "data with --dev_source/--dev_target, or train with --validate_every=0$"):
        TrainingFolders(_training_config(data, tmp_path / "m", validate_every=10), _model_config(data))
    assert not (tmp_path / "m").exists()
    TrainingFolders(_training_config(data, tmp_path / "m"), _model_config(data))  # validate_every=0: taken


def test_switch_data_dir_with_other_vocabularies_is_refused_before_anything_is_written(toy_data, tmp_path):
    folder = tmp_path / "other"
    corpus = corpus_registry.text_file_corpus("en", "fr", write_corpus(folder / "raw", train_pairs=300, seed=7))
    DatasetBuilder(corpus, folder / "data", vocabulary_size=20, num_shards=1, show_progress=False).build()
    with pytest.raises(ValueError, match=rf"switch_data_dir={folder / 'data'}: its source vocabulary differs from "
                                         rf"that of data_dir={toy_data}"):
        TrainingFolders(_training_config(toy_data, tmp_path / "a", switch_data_dir=str(folder / "data")),
                        _model_config(toy_data))
    assert not (tmp_path / "a").exists()


def test_a_switch_data_dir_that_is_not_built_is_named_as_such(toy_data, tmp_path):
    with pytest.raises(FileNotFoundError, match=rf"^{tmp_path / 'none'}/metadata.json is missing: --switch_data_dir "
                                                "must be the --output_dir of `rnnsearch build-data`"):
        TrainingFolders(_training_config(toy_data, tmp_path / "a", switch_data_dir=str(tmp_path / "none")),
                        _model_config(toy_data))
    assert not (tmp_path / "a").exists()


def test_subword_sampling_is_refused_on_word_level_data_before_anything_is_written(toy_data, tmp_path):
    with pytest.raises(ValueError, match=rf"^--subword_sampling_alpha=0.1 samples SentencePiece pieces, but {toy_data} "
                                         r"is word-level; build the data with `rnnsearch build-data --subwords="):
        TrainingFolders(_training_config(toy_data, tmp_path / "a", subword_sampling_alpha=0.1), _model_config(toy_data))
    assert not (tmp_path / "a").exists()
