"""rnnsearch_tf/training/training_statistics.py: sums over a window of updates, the scalars it logs, durations."""

import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator

from rnnsearch_tf.training import training_statistics
from rnnsearch_tf.training.training_statistics import TrainingStatistics, format_duration


def _update(nll_sum, target_tokens, sentences, gradient_norm):
    return dict(nll_sum=tf.constant(nll_sum), target_tokens=tf.constant(target_tokens),
                sentences=tf.constant(sentences), gradient_norm=tf.constant(gradient_norm))


def test_a_window_sums_its_updates_and_logs_them_as_scalars(tmp_path):
    statistics = TrainingStatistics(tf.summary.create_file_writer(str(tmp_path)))
    assert statistics.loss() == 0.0 and statistics.nll_per_sentence() == 0.0  # an empty window divides by 1
    statistics.add(_update(30.0, 10.0, 2.0, 1.0))
    statistics.add(_update(50.0, 30.0, 2.0, 3.0))
    assert statistics.updates == 2
    assert statistics.loss() == pytest.approx(80.0 / 40.0)
    assert statistics.nll_per_sentence() == pytest.approx(80.0 / 4.0)
    statistics.log(step=7, epoch=0.5, training_seconds=3725, remaining_seconds=59, learning_rate=0.25)
    assert statistics.updates == 0 and statistics.nll_sum == 0.0  # a new window
    statistics.writer.flush()
    accumulator = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    accumulator.Reload()
    scalars = {tag: [(event.step, float(tf.make_ndarray(event.tensor_proto))) for event in accumulator.Tensors(tag)]
               for tag in accumulator.Tags()["tensors"]}
    assert sorted(scalars) == sorted(["loss", "nll_per_sentence", "gradient_norm", "updates_per_second",
                                      "tokens_per_second", "sentences_per_second", "epoch", "learning_rate"])
    assert scalars["loss"] == [(7, 2.0)] and scalars["nll_per_sentence"] == [(7, 20.0)]
    assert scalars["gradient_norm"] == [(7, 2.0)] and scalars["learning_rate"] == [(7, 0.25)]
    assert scalars["epoch"] == [(7, 0.5)] and scalars["tokens_per_second"][0][1] > 0


def test_time_left_out_of_a_window_does_not_count_in_its_rates(tmp_path, monkeypatch):
    class Clock:
        now = 1000.0

        def time(self):
            return self.now

    clock = Clock()
    monkeypatch.setattr(training_statistics, "time", clock)
    statistics = TrainingStatistics(tf.summary.create_file_writer(str(tmp_path)))
    clock.now += 2.0
    statistics.add(_update(30.0, 100.0, 2.0, 1.0))
    with statistics.left_out():
        clock.now += 600.0  # a validation
    clock.now += 2.0
    statistics.add(_update(30.0, 100.0, 2.0, 1.0))
    assert statistics.seconds_per_update() == 2.0  # the ETA's rate
    statistics.log(step=2, epoch=0.1, training_seconds=604, remaining_seconds=10, learning_rate=0.25)
    statistics.writer.flush()
    accumulator = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    accumulator.Reload()
    rates = {tag: float(tf.make_ndarray(accumulator.Tensors(tag)[0].tensor_proto))
             for tag in ("updates_per_second", "tokens_per_second", "sentences_per_second")}
    assert rates == {"updates_per_second": 0.5, "tokens_per_second": 50.0, "sentences_per_second": 1.0}


def test_format_duration_is_hours_minutes_seconds():
    assert [format_duration(seconds) for seconds in (0, 59.9, 61, 3725, 90061)] == [
        "0:00:00", "0:00:59", "0:01:01", "1:02:05", "25:01:01"]
