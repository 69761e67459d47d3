"""The statistics of the updates between two console lines, logged to the console and TensorBoard."""

import contextlib
import time

import tensorflow as tf
from absl import logging


class TrainingStatistics:
    """Sums of the statistics that `make_train_step` returns, over a window of updates.

    Args:
        writer: the TensorBoard writer of the training scalars.
    """

    def __init__(self, writer):
        self.writer = writer
        self.reset()

    def reset(self):
        self.started = time.time()
        self.updates = 0
        self.nll_sum = self.target_tokens = self.sentences = self.gradient_norm_sum = 0.0

    def add(self, result):
        """Adds one finite update's statistics (`nll_sum`, `target_tokens`, `sentences`, `gradient_norm`)."""
        self.updates += 1
        self.nll_sum += float(result["nll_sum"])
        self.target_tokens += float(result["target_tokens"])
        self.sentences += float(result["sentences"])
        self.gradient_norm_sum += float(result["gradient_norm"])

    @contextlib.contextmanager
    def left_out(self):
        """Leaves the time of the `with` block (a validation, a checkpoint's save) out of the window's: the rates and
        the ETA's seconds per update are of updates."""
        started = time.time()
        try:
            yield
        finally:
            self.started += time.time() - started

    def loss(self):
        """NLL per target token."""
        return self.nll_sum / max(self.target_tokens, 1.0)

    def nll_per_sentence(self):
        return self.nll_sum / max(self.sentences, 1.0)

    def log(self, step, epoch, training_seconds, remaining_seconds, learning_rate):
        """Writes the window's console line and scalars, then starts a new window."""
        seconds = max(time.time() - self.started, 1e-9)
        logging.info(
            "step %d | epoch %.2f | loss %.4f | NLL/sentence %.2f | %.0f target tokens/s | %.1f sentences/s | "
            "lr %.3g | elapsed %s | ETA %s",
            step, epoch, self.loss(), self.nll_per_sentence(), self.target_tokens / seconds,
            self.sentences / seconds, learning_rate, format_duration(training_seconds),
            format_duration(remaining_seconds),
        )
        scalars = {
            "loss": self.loss(),
            "nll_per_sentence": self.nll_per_sentence(),
            "gradient_norm": self.gradient_norm_sum / max(self.updates, 1),
            "updates_per_second": self.updates / seconds,
            "tokens_per_second": self.target_tokens / seconds,
            "sentences_per_second": self.sentences / seconds,
            "epoch": epoch,
            "learning_rate": learning_rate,
        }
        with self.writer.as_default():
            for name, value in scalars.items():
                tf.summary.scalar(name, value, step=step)
        self.reset()

    def seconds_per_update(self):
        return (time.time() - self.started) / max(self.updates, 1)


def format_duration(seconds):
    """`h:mm:ss`."""
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
