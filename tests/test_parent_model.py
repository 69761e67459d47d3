"""ParentModel: which checkpoint `--init_from` names, what it refuses (naming the field), its weights exactly."""

import dataclasses
import json

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.data_dir import DataDir
from data_pipeline.dataset_builder import DatasetBuilder
from data_pipeline import corpus_registry
from rnnsearch_tf import ModelConfig
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.checkpoint_averaging import average_checkpoints, checkpoints_to_average
from rnnsearch_tf.training.parent_model import ParentModel
from rnnsearch_tf.training.trainer import Trainer
from rnnsearch_tf.training.training_config import TrainingConfig
from helpers.toy_translation import build_toy_data, write_corpus

TINY_MODEL = dict(embedding_dim=16, hidden_dim=24, maxout_dim=12, alignment_dim=24)


def model_config(data_dir, **overrides):
    vocabularies = json.loads((data_dir / "metadata.json").read_text())["vocabularies"]
    return ModelConfig(source_vocab_size=vocabularies["source"]["size"],
                       target_vocab_size=vocabularies["target"]["size"], **dict(TINY_MODEL, **overrides))


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    """(data dir, model dir) of a tiny RNNsearch trained 4 updates, checkpointed at 2 and 4, averaged."""
    folder = tmp_path_factory.mktemp("parent")
    data_dir = build_toy_data(folder)
    config = TrainingConfig(data_dir=str(data_dir), model_dir=str(folder / "model"), optimizer="adam",
                            learning_rate=0.01, batch_size=16, sort_window=2, train_steps=4, checkpoint_every=2,
                            validate_every=0)
    Trainer.create(model_config(data_dir), config, search_config=SearchConfig(beam_size=2)).train()
    model_dir = ModelDir(folder / "model")
    average_checkpoints(model_dir, checkpoints_to_average(model_dir, "latest", 2))
    return data_dir, folder / "model"


def test_init_from_names_a_checkpoint_best_by_default(parent):
    _, model_dir = parent
    assert ParentModel.split("a:b/c") == ("a:b/c", "best")
    assert ParentModel.split("runs/m:averaged") == ("runs/m", "averaged")
    latest = ParentModel(f"{model_dir}:latest")
    assert latest.checkpoint_path.endswith("checkpoints/ckpt-4") and latest.step == 4
    best = ParentModel(str(model_dir))
    assert best.checkpoint_path == latest.checkpoint_path  # no best/ without validation, and the record says so
    assert best.record() == dict(latest.record(), checkpoint="latest", requested="best")
    # A child resumes with the --init_from it started with (even once the parent has a best checkpoint).
    assert best.named_in(best.record()) and latest.named_in(latest.record())
    assert not latest.named_in(best.record()) and not best.named_in(latest.record())
    best_before = {name: value for name, value in best.record().items() if name != "requested"}
    assert best.named_in(dict(best_before, checkpoint="best"))  # a child recorded before the record said so
    averaged = ParentModel(f"{model_dir}:averaged")
    assert averaged.checkpoint_path.endswith("averaged/ckpt-4")
    assert averaged.record() == {"model_dir": str(model_dir), "checkpoint": "averaged",
                                 "checkpoint_path": averaged.checkpoint_path, "step": 4}
    with pytest.raises(FileNotFoundError, match=r"nowhere/model.json is missing: it must name a model directory"):
        ParentModel(str(model_dir.parent / "nowhere"))


def test_restore_gives_exactly_the_checkpoints_weights(parent):
    data_dir, model_dir = parent
    for checkpoint in ("latest", "averaged"):
        child = ModelDir(model_dir).build_model()
        ParentModel(f"{model_dir}:{checkpoint}").restore(child)
        expected, _ = ModelDir(model_dir).load_model(checkpoint)
        assert len(child.weights) == len(expected.weights) > 10
        for mine, theirs in zip(child.weights, expected.weights):
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.path)
        assert not np.array_equal(child.weights[0].numpy(), ModelDir(model_dir).build_model().weights[0].numpy())


def test_an_averaged_checkpoint_has_no_optimizer_state_to_keep(parent):
    _, model_dir = parent
    child = ModelDir(model_dir).build_model()
    optimizer = tf.keras.optimizers.Adam()
    optimizer.build(child.trainable_variables)
    with pytest.raises(ValueError, match=r"averaged/ckpt-4 holds no optimizer state .*use :best or :latest"):
        ParentModel(f"{model_dir}:averaged").restore(child, optimizer)


def test_keeping_the_optimizer_state_of_an_averaged_checkpoint_is_refused_before_anything_is_written(parent,
                                                                                                     tmp_path):
    data_dir, model_dir = parent
    config = TrainingConfig(data_dir=str(data_dir), model_dir=str(tmp_path / "child"), optimizer="adam",
                            init_from=f"{model_dir}:averaged", reset_optim="keep_states", validate_every=0)
    with pytest.raises(ValueError, match=r"averaged/ckpt-4 holds no optimizer state .*use :best or :latest"):
        Trainer.create(model_config(data_dir), config, search_config=SearchConfig(beam_size=2))
    assert not (tmp_path / "child").exists()


def test_a_different_architecture_or_model_is_refused_naming_the_field(parent):
    data_dir, model_dir = parent
    parent_model = ParentModel(str(model_dir))
    config = model_config(data_dir)
    parent_model.check_fits("rnnsearch", config, DataDir(data_dir))
    # Dropout, initializer and precision do not change the weights: a child may set them anew.
    parent_model.check_fits("rnnsearch", dataclasses.replace(config, embedding_dropout=0.3, initializer="xavier",
                                                             precision="mixed_bfloat16"), DataDir(data_dir))
    with pytest.raises(ValueError, match=r"the parent's hidden_dim is 24 \(.*model.json\) but this run's is 32"):
        parent_model.check_fits("rnnsearch", dataclasses.replace(config, hidden_dim=32), DataDir(data_dir))
    with pytest.raises(ValueError, match=r"the parent's readout_state is 'current' .* this run's is 'previous'"):
        parent_model.check_fits("rnnsearch", dataclasses.replace(config, readout_state="previous"), DataDir(data_dir))
    with pytest.raises(ValueError, match=r"the parent is an 'rnnsearch' model .* this run trains an 'rnnencdec'"):
        parent_model.check_fits("rnnencdec", config, DataDir(data_dir))


def test_data_with_other_vocabularies_is_refused_until_built_with_vocabulary_from(parent, tmp_path):
    data_dir, model_dir = parent
    corpus = corpus_registry.text_file_corpus("en", "fr", write_corpus(tmp_path / "raw", train_pairs=500, seed=7))
    own = DatasetBuilder(corpus, tmp_path / "own", vocabulary_size=20, show_progress=False, num_shards=1)
    own.build()
    with pytest.raises(ValueError, match=rf"the source vocabulary of {tmp_path / 'own'} differs from the parent's "
                                         rf".*--vocabulary_from={model_dir}` so that the word ids are the parent's"):
        ParentModel(str(model_dir)).check_fits("rnnsearch", model_config(data_dir), DataDir(tmp_path / "own"))
    DatasetBuilder(corpus, tmp_path / "shared", show_progress=False, num_shards=1, vocabulary_from=model_dir).build()
    ParentModel(str(model_dir)).check_fits("rnnsearch", model_config(data_dir), DataDir(tmp_path / "shared"))
    for name in ("source_vocab.tsv", "target_vocab.tsv"):
        assert (tmp_path / "shared" / name).read_bytes() == (model_dir / name).read_bytes()
