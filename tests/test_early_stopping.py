"""rnnsearch_tf/training/early_stopping.py: the best BLEU, decay on plateaus, patience, its state and history."""

import json

import pytest
import tensorflow as tf

from rnnsearch_tf.training.early_stopping import HISTORY_FIELDS, EarlyStopping


def _validation(step, bleu):
    return dict({name: 0.0 for name in HISTORY_FIELDS}, step=step, dev_bleu=bleu)


def test_the_best_score_and_its_step():
    judge = EarlyStopping()
    assert judge.best_score == -1 and judge.best_step == 0
    assert [judge.record(step, bleu) for step, bleu in ((100, 5.0), (200, 4.0), (300, 5.0), (400, 6.5))] == [
        True, False, False, True]  # a tie is no improvement
    assert judge.is_best()
    assert (judge.best_score, judge.best_step) == (6.5, 400)
    judge.record(500, 0.0)
    assert not judge.is_best() and (judge.best_score, judge.best_step) == (6.5, 400)


def test_restart_makes_the_next_validation_the_best_and_clears_the_plateau():
    judge = EarlyStopping(patience=2, decay_patience=2, learning_rate_decay=0.5)
    for step, bleu in ((100, 30.0), (200, 20.0)):
        judge.record(step, bleu)
    judge.restart()
    assert judge.record(300, 10.0) and (judge.best_score, judge.best_step) == (10.0, 300)
    judge.record(400, 5.0)
    assert judge.should_stop() is None and not judge.should_decay()  # one validation without improvement, not three


def test_patience_counts_validations_without_improvement():
    judge = EarlyStopping(patience=2)
    judge.record(100, 10.0)
    judge.record(200, 9.0)
    assert judge.should_stop() is None
    judge.record(300, 10.0)
    assert judge.should_stop() == "dev BLEU did not improve for 2 validations (best 10.00 at step 100)"
    judge.record(400, 11.0)  # an improvement starts the count again
    assert judge.should_stop() is None
    never = EarlyStopping(patience=None)
    for step in range(1, 20):
        never.record(step, 1.0)
    assert never.should_stop() is None


def test_decay_once_per_decay_patience_validations_and_only_when_asked():
    judge = EarlyStopping(decay_patience=2, learning_rate_decay=0.5)
    decays = []
    for step, bleu in enumerate([10.0, 9.0, 9.0, 9.0, 9.0, 9.5, 12.0, 11.0, 11.0], 1):
        judge.record(step, bleu)
        decays.append(judge.should_decay())
    assert decays == [False, False, True, False, True, False, False, False, True]
    constant = EarlyStopping(decay_patience=1, learning_rate_decay=1.0)
    constant.record(1, 5.0)
    constant.record(2, 4.0)
    assert not constant.should_decay()


def test_the_state_is_its_variables_and_a_restored_judge_goes_on_alike(tmp_path):
    judge = EarlyStopping(patience=3, decay_patience=2, learning_rate_decay=0.5)
    for step, bleu in ((1, 8.0), (2, 7.0), (3, 7.5)):
        judge.record(step, bleu)
    checkpoint = tf.train.Checkpoint(**judge.variables).save(str(tmp_path / "ckpt"))
    resumed = EarlyStopping(patience=3, decay_patience=2, learning_rate_decay=0.5)
    tf.train.Checkpoint(**resumed.variables).restore(checkpoint).assert_consumed()
    for current in (judge, resumed):
        assert (current.best_score, current.best_step) == (8.0, 1)
        assert current.should_decay()  # two validations without improvement, in either
        current.record(4, 6.0)
    assert judge.should_stop() == resumed.should_stop() is not None


def test_write_state_keeps_the_history_before_the_step_resumed_from(tmp_path):
    path = tmp_path / "training_state.json"
    judge = EarlyStopping()
    for step, bleu in ((100, 3.0), (200, 5.0), (300, 4.0)):
        judge.record(step, bleu)
        judge.write_state(path, dict(_validation(step, bleu), extra="latest"))
    state = json.loads(path.read_text())
    assert [entry["step"] for entry in state["history"]] == [100, 200, 300]
    assert set(state["history"][0]) == set(HISTORY_FIELDS)
    assert (state["best_step"], state["best_dev_bleu"], state["step"], state["extra"]) == (200, 5.0, 300, "latest")
    judge.record(200, 6.0)  # a run resumed from step 150 validates step 200 again
    judge.write_state(path, _validation(200, 6.0))
    state = json.loads(path.read_text())
    assert [(entry["step"], entry["dev_bleu"]) for entry in state["history"]] == [(100, 3.0), (200, 6.0)]
    assert state["best_dev_bleu"] == 6.0


def test_chrf_judges_when_selected_and_the_state_names_both_scores_of_the_best_step(tmp_path):
    path = tmp_path / "training_state.json"
    judge = EarlyStopping(metric="chrf")
    for step, bleu, chrf in ((100, 3.0, 30.0), (200, 5.0, 29.0), (300, 4.0, 31.0)):
        judge.record(step, chrf)
        judge.write_state(path, dict(_validation(step, bleu), dev_chrf=chrf))
    state = json.loads(path.read_text())
    assert (state["selected_by"], state["best_step"], state["best_dev_chrf"], state["best_dev_bleu"]) == (
        "chrf", 300, 31.0, 4.0)
    assert judge.best_score == 31.0
    with pytest.raises(ValueError, match="metric must be one of"):
        EarlyStopping(metric="ter")
