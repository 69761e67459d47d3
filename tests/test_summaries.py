"""TrainingSummaries: what training writes for TensorBoard reads back with the tags and values written."""

import os

import numpy as np
import pytest
import tensorflow as tf
from tensorboard import context
from tensorboard.backend.event_processing import data_provider, event_accumulator, plugin_event_multiplexer
from tensorboard.plugins import base_plugin
from tensorboard.plugins.hparams import api_pb2, backend_context, get_experiment, list_session_groups

from data_pipeline.constants import RESERVED_TOKENS
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.summaries import TrainingSummaries, markdown_table
from rnnsearch_tf.training.training_statistics import TrainingStatistics
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


def hparams_dashboard(logdir):
    """What TensorBoard's HParams dashboard reads of `logdir` (its own handlers): the metrics, as (group, tag)
    pairs, and {session: ({setting: value}, {(group, tag): last value})}."""
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(str(logdir))
    multiplexer.Reload()
    backend = backend_context.Context(base_plugin.TBContext(
        logdir=str(logdir), multiplexer=multiplexer,
        data_provider=data_provider.MultiplexerDataProvider(multiplexer, str(logdir))))
    request_context = context.RequestContext()
    experiment = get_experiment.Handler(request_context, backend, "", api_pb2.GetExperimentRequest()).run()
    groups = list_session_groups.Handler(request_context, backend, "", api_pb2.ListSessionGroupsRequest(
        start_index=0, slice_size=10, allowed_statuses=[api_pb2.STATUS_UNKNOWN])).run().session_groups
    sessions = {
        session.name: ({name: getattr(value, value.WhichOneof("kind")) for name, value in group.hparams.items()},
                       {(metric.name.group, metric.name.tag): metric.value for metric in session.metric_values})
        for group in groups for session in group.sessions
    }
    return {(metric.name.group, metric.name.tag) for metric in experiment.metric_infos}, sessions


def log_a_window(summaries, step):
    """One window of updates, logged by `TrainingStatistics` through the summaries' train writer; its scalars."""
    statistics = TrainingStatistics(summaries.train)
    statistics.add(dict(nll_sum=60.0, target_tokens=20.0, sentences=2.0, gradient_norm=1.5))
    scalars = {"loss": statistics.loss(), "nll_per_sentence": statistics.nll_per_sentence()}
    statistics.log(step, epoch=0.5, training_seconds=10, remaining_seconds=10, learning_rate=0.25)
    return scalars


def test_a_validation_reads_back_as_dev_scalars_an_attention_image_and_a_translation_table(model_dir):
    summaries = TrainingSummaries(model_dir, model_dir.build_model())
    summaries.write_validation(200, VALIDATION)
    summaries.flush()
    dev = events(model_dir.file("dev"))
    assert set(dev) == {"nll_per_sentence", "dev/bleu", "dev/chrf", "attention/0", "translations"}
    assert dev["nll_per_sentence"] == [(200, pytest.approx(41.5))]
    assert dev["dev/bleu"] == [(200, pytest.approx(12.25))]
    assert dev["dev/chrf"] == [(200, pytest.approx(40.5))]
    [(step, image)] = dev["attention/0"]
    assert step == 200 and list(image[:2]) == [b"5", b"3"]  # width, height, then the PNG
    np.testing.assert_array_equal(tf.image.decode_png(image[2]).numpy(), np.full((3, 5, 1), 200, np.uint8))
    [(step, table)] = dev["translations"]
    assert table.item().decode() == markdown_table(VALIDATION["samples"])


def test_skipped_updates_read_back_from_train(model_dir):
    summaries = TrainingSummaries(model_dir, model_dir.build_model())
    summaries.write_nonfinite_updates(7, 1)
    summaries.write_nonfinite_updates(8, 2)
    summaries.flush()
    train = events(model_dir.file("train"))
    assert [(step, int(value)) for step, value in train["nonfinite_updates_in_a_row"]] == [(7, 1), (8, 2)]


def test_train_and_dev_nll_per_sentence_are_one_tag_so_tensorboard_draws_them_in_one_chart(model_dir):
    summaries = TrainingSummaries(model_dir, model_dir.build_model())
    train_nll = log_a_window(summaries, 200)["nll_per_sentence"]
    summaries.write_validation(200, dict(VALIDATION, attention_images=[], samples=[]))
    summaries.flush()
    train, dev = events(model_dir.file("train")), events(model_dir.file("dev"))
    assert set(train) & set(dev) == {"nll_per_sentence"}
    assert train["nll_per_sentence"] == [(200, pytest.approx(train_nll))]
    assert dev["nll_per_sentence"] == [(200, pytest.approx(VALIDATION["nll_per_sentence"]))]


def test_the_hparams_dashboard_shows_the_settings_with_dev_scores_and_train_loss_as_metrics(model_dir):
    summaries = TrainingSummaries(model_dir, model_dir.build_model())
    settings = {"model/hidden_dim": 16, "training/optimizer": "adam"}
    summaries.write_hparams(settings)
    train = log_a_window(summaries, 200)
    summaries.write_validation(200, dict(VALIDATION, attention_images=[], samples=[]))
    summaries.flush()
    # `tensorboard --logdir` a folder of model directories: one session each, named by its folder
    metrics, sessions = hparams_dashboard(os.path.dirname(model_dir.path))
    dev = {"dev/bleu": VALIDATION["bleu"], "dev/chrf": VALIDATION["chrf"],
           "nll_per_sentence": VALIDATION["nll_per_sentence"]}
    expected = {**{("dev", tag): value for tag, value in dev.items()}, ("train", "loss"): train["loss"]}
    assert set(expected) <= metrics
    [(session, (hparams, values))] = sessions.items()
    assert session == "model" and hparams == settings
    assert {name: values[name] for name in expected} == pytest.approx(expected)


def test_the_projector_shows_both_embeddings_with_their_words(model_dir):
    model = model_dir.build_model()
    summaries = TrainingSummaries(model_dir, model)
    summaries.write_validation(200, dict(VALIDATION, attention_images=[], samples=[]))
    assert set(events(model_dir.file("dev"))) == {"nll_per_sentence", "dev/bleu", "dev/chrf"}
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
    assert not tf.io.gfile.glob(model_dir.file("events.out.tfevents.*"))


def test_the_translation_table_escapes_the_column_separator():
    assert markdown_table([("a | b", "c", "d")]).split("\n") == [
        "| source | reference | translation |", "|---|---|---|", "| a \\| b | c | d |"]
