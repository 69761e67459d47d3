"""TrainingSummaries: what training writes for TensorBoard reads back with the tags and values written."""

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator

from data_pipeline.constants import RESERVED_TOKENS
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.summaries import TrainingSummaries, markdown_table
from helpers.serving_test_utils import write_model_dir

VALIDATION = dict(
    nll_per_sentence=41.5,
    bleu=12.25,
    chrf=40.5,
    attention_images=[tf.io.encode_png(np.full((3, 5, 1), 200, np.uint8)).numpy()],
    samples=[("the cat | dog", "le chat", "le chien")],
    bleu_signature="nrefs:1",
)


@pytest.fixture
def model_dir(tmp_path):
    return ModelDir(write_model_dir(tmp_path / "model"))


def events(logdir):
    """{tag: [(step, value as a NumPy array)]} of the event files in `logdir`."""
    accumulator = event_accumulator.EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    accumulator.Reload()
    return {
        tag: [(event.step, tf.make_ndarray(event.tensor_proto)) for event in accumulator.Tensors(tag)]
        for tag in accumulator.Tags()["tensors"]
    }


def test_a_validation_reads_back_as_dev_scalars_an_attention_image_and_a_translation_table(model_dir):
    summaries = TrainingSummaries(model_dir, model_dir.build_model())
    summaries.write_validation(200, VALIDATION)
    summaries.flush()
    dev = events(model_dir.file("dev"))
    assert set(dev) == {"dev/nll_per_sentence", "dev/bleu", "dev/chrf", "attention/0", "translations"}
    assert dev["dev/nll_per_sentence"] == [(200, pytest.approx(41.5))]
    assert dev["dev/bleu"] == [(200, pytest.approx(12.25))]
    assert dev["dev/chrf"] == [(200, pytest.approx(40.5))]
    [(step, image)] = dev["attention/0"]
    assert step == 200 and list(image[:2]) == [b"5", b"3"]  # width, height, then the PNG
    np.testing.assert_array_equal(tf.image.decode_png(image[2]).numpy(), np.full((3, 5, 1), 200, np.uint8))
    [(step, table)] = dev["translations"]
    assert table.item().decode() == markdown_table(VALIDATION["samples"])


def test_settings_and_skipped_updates_read_back_from_train(model_dir):
    summaries = TrainingSummaries(model_dir, model_dir.build_model())
    summaries.write_hparams({"model/hidden_dim": 16, "training/optimizer": "adam"})
    summaries.write_nonfinite_updates(7, 1)
    summaries.write_nonfinite_updates(8, 2)
    summaries.flush()
    train = events(model_dir.file("train"))
    assert "_hparams_/session_start_info" in train
    assert [(step, int(value)) for step, value in train["nonfinite_updates_in_a_row"]] == [(7, 1), (8, 2)]


def test_the_projector_shows_both_embeddings_with_their_words(model_dir):
    model = model_dir.build_model()
    summaries = TrainingSummaries(model_dir, model)
    summaries.write_validation(200, dict(VALIDATION, attention_images=[], samples=[]))
    assert set(events(model_dir.file("dev"))) == {"dev/nll_per_sentence", "dev/bleu", "dev/chrf"}
    train = model_dir.file("train")
    projector_config = open(f"{train}/projector_config.pbtxt", encoding="utf-8").read()
    assert 'metadata_path: "source_embedding_tokens.tsv"' in projector_config
    assert 'tensor_name: "target_embedding/.ATTRIBUTES/VARIABLE_VALUE"' in projector_config
    words = open(f"{train}/target_embedding_tokens.tsv", encoding="utf-8").read().split("\n")
    assert words[:5] == [*RESERVED_TOKENS, "le"]
    reader = tf.train.load_checkpoint(f"{train}/embeddings-200")
    np.testing.assert_array_equal(reader.get_tensor("source_embedding/.ATTRIBUTES/VARIABLE_VALUE"),
                                  model.encoder.source_embedding.embeddings.numpy())


def test_a_worker_that_is_not_the_chief_writes_nothing(model_dir):
    summaries = TrainingSummaries(model_dir, model_dir.build_model(), is_chief=False)
    summaries.write_hparams({"model/hidden_dim": 16})
    summaries.write_nonfinite_updates(7, 1)
    summaries.write_validation(200, VALIDATION)
    summaries.flush()
    assert not any(tf.io.gfile.exists(model_dir.file(name)) for name in ("train", "dev"))


def test_the_translation_table_escapes_the_column_separator():
    assert markdown_table([("a | b", "c", "d")]).split("\n") == [
        "| source | reference | translation |", "|---|---|---|", "| a \\| b | c | d |"]
