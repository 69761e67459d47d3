"""TrainingBudget: updates, epochs and hours spent against their limits, the switch share, the ETA, and a
resumed run that goes on spending (the variables a checkpoint holds)."""

import pytest
import tensorflow as tf

from rnnsearch_tf.training import training_budget
from rnnsearch_tf.training.training_budget import TrainingBudget


class _Clock:
    now = 1000.0

    def time(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(training_budget, "time", clock)
    return clock


def test_each_limit_is_named_when_reached(clock):
    budget = TrainingBudget(train_steps=3, max_epochs=None, max_hours=None, training_pairs=100)
    budget.start_clock()
    for _ in range(2):
        budget.add_update(sentences=10)
    assert budget.exhausted() is None and budget.step == 2 and budget.epoch == pytest.approx(0.2)
    budget.add_update(sentences=10)
    assert budget.exhausted() == "reached train_steps=3"
    by_epochs = TrainingBudget(train_steps=100, max_epochs=0.5, max_hours=None, training_pairs=100)
    by_epochs.start_clock()
    by_epochs.add_update(sentences=50)
    assert by_epochs.exhausted() == "reached max_epochs=0.5"
    by_hours = TrainingBudget(train_steps=100, max_epochs=None, max_hours=0.5, training_pairs=100)
    by_hours.start_clock()
    clock.now += 1799
    by_hours.add_update(sentences=1)
    assert by_hours.exhausted() is None
    clock.now += 1
    by_hours.count_seconds()  # a validation's time counts too
    assert by_hours.exhausted() == "reached max_hours=0.5" and by_hours.seconds == 1800


def test_the_switch_share_and_the_eta_take_the_nearer_limit(clock):
    budget = TrainingBudget(train_steps=10, max_epochs=None, max_hours=1.0, training_pairs=100)
    budget.start_clock()
    budget.add_update(sentences=1)
    assert not budget.spent(0.5)
    clock.now += 1800
    budget.count_seconds()
    assert budget.spent(0.5) and not budget.spent(0.5, count_hours=False)  # several workers count steps only
    assert budget.remaining_seconds(seconds_per_update=10.0) == 90.0  # 9 updates, sooner than the hour left
    assert budget.remaining_seconds(seconds_per_update=1000.0) == 1800.0


def test_the_eta_of_max_epochs_counts_the_pairs_an_update_reads(clock):
    budget = TrainingBudget(train_steps=1000, max_epochs=1.0, max_hours=None, training_pairs=100)
    budget.start_clock()
    for _ in range(2):
        budget.add_update(sentences=10)
    assert budget.remaining_seconds(seconds_per_update=3.0) == pytest.approx(8 * 3.0)  # 80 pairs left, 10 an update
    budget.add_update(sentences=80)
    assert budget.remaining_seconds(seconds_per_update=3.0) == 0.0  # the epoch is read


def test_a_resumed_run_goes_on_spending_from_the_checkpointed_values(clock, tmp_path):
    first = TrainingBudget(train_steps=10, max_epochs=None, max_hours=1.0, training_pairs=100)
    first.start_clock()
    clock.now += 600
    first.add_update(sentences=30)
    path = tf.train.Checkpoint(**first.variables).write(str(tmp_path / "ckpt"))
    clock.now += 5000  # the pause between the runs is not spent
    resumed = TrainingBudget(train_steps=10, max_epochs=None, max_hours=1.0, training_pairs=100)
    tf.train.Checkpoint(**resumed.variables).read(path).assert_consumed()
    resumed.start_clock()
    clock.now += 60
    resumed.add_update(sentences=30)
    assert (resumed.step, resumed.epoch, resumed.seconds) == (2, 0.6, 660.0)
