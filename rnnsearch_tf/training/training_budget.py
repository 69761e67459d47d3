"""How much of a run's budget is spent: updates, epochs and hours, kept in checkpointed variables."""

import time

import numpy as np

from rnnsearch_tf.training.checkpointing import run_variables


class TrainingBudget:
    """The limits of a run (`train_steps`, `max_epochs`, `max_hours`) and what it has spent of them.

    The spending is held in variables (`variables`: `step`, `sentences_seen`, `training_seconds`) that
    the trainer's checkpoints hold, so a resumed run goes on spending the same budget. `training_seconds`
    counts updates and validations (what `max_hours` bounds), not start-up or a pause between runs:
    `start_clock` begins a run's count, `count_seconds` brings it up to now.

    Args:
        train_steps: most updates.
        max_epochs: most passes over `training_pairs`, or None.
        max_hours: most hours of updates and validations, or None.
        training_pairs: records of an epoch (kept and joined training pairs).

    Example:
    >>> budget = TrainingBudget(train_steps=1000, max_epochs=None, max_hours=0.1, training_pairs=29000)
    >>> budget.start_clock(); budget.add_update(sentences=64)
    >>> budget.exhausted()  # None until a limit is reached, then e.g. "reached max_hours=0.1"
    """

    def __init__(self, train_steps, max_epochs, max_hours, training_pairs):
        self.train_steps = train_steps
        self.max_epochs = max_epochs
        self.max_hours = max_hours
        self.training_pairs = training_pairs
        self.variables = run_variables(step=np.int64(0), sentences_seen=np.int64(0), training_seconds=np.float64(0))
        self._started = None  # (clock at the start of this run's count, training_seconds then)

    @property
    def step(self):
        """Updates done."""
        return int(self.variables["step"])

    @property
    def epoch(self):
        """Passes over the training pairs done (a fraction)."""
        return int(self.variables["sentences_seen"]) / self.training_pairs

    @property
    def seconds(self):
        """Seconds of updates and validations spent."""
        return float(self.variables["training_seconds"])

    def start_clock(self):
        """Starts counting this run's seconds (after restoring a checkpoint, before the first update)."""
        self._started = time.time(), self.seconds

    def count_seconds(self):
        """Brings `training_seconds` up to now."""
        started, seconds_before = self._started
        self.variables["training_seconds"].assign(seconds_before + time.time() - started)

    def add_update(self, sentences):
        """Counts an update on `sentences` training pairs, and the time until now."""
        self.variables["step"].assign_add(1)
        self.variables["sentences_seen"].assign_add(int(sentences))
        self.count_seconds()

    def exhausted(self):
        """Why the budget is spent ("reached train_steps=N", ...), or None."""
        if self.step >= self.train_steps:
            return f"reached train_steps={self.train_steps}"
        if self.max_epochs is not None and self.epoch >= self.max_epochs:
            return f"reached max_epochs={self.max_epochs}"
        if self.max_hours is not None and self.seconds >= self.max_hours * 3600:
            return f"reached max_hours={self.max_hours}"
        return None

    def spent(self, share, count_hours=True):
        """Whether `share` of `train_steps`, or (with `count_hours`) of `max_hours`, is spent: the limit that
        ends training comes first to its share too."""
        if self.step >= share * self.train_steps:
            return True
        return count_hours and self.max_hours is not None and self.seconds >= share * self.max_hours * 3600

    def remaining_seconds(self, seconds_per_update):
        """Seconds until the budget is spent at `seconds_per_update` (the console's ETA): the nearest of the limits,
        `max_epochs` at the training pairs per update read so far."""
        updates = self.train_steps - self.step
        if self.max_epochs is not None and self.step:
            pairs_per_update = int(self.variables["sentences_seen"]) / self.step
            updates = min(updates, (self.max_epochs - self.epoch) * self.training_pairs / pairs_per_update)
        remaining = max(updates, 0.0) * seconds_per_update
        if self.max_hours is not None:
            remaining = min(remaining, max(self.max_hours * 3600 - self.seconds, 0.0))
        return remaining
