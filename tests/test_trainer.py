"""Training: it learns, it resumes exactly, replicas agree, it logs what TensorBoard shows, it fails clearly."""

import dataclasses
import json
import math
import os
import pathlib
import re
import shutil
import signal
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator

from data_pipeline import TrainingInput, corpus_registry
from data_pipeline.data_dir import DataDir
from data_pipeline.dataset_builder import DatasetBuilder
from rnnsearch_tf import ModelConfig
from rnnsearch_tf import TrainingDivergedError
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training import training_budget, training_statistics
from rnnsearch_tf.training.trainer import Trainer
from rnnsearch_tf.training.training_config import TrainingConfig
from helpers.shard_test_data import checkpoint_bytes
from helpers.toy_translation import write_corpus
from helpers import preimported

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY_MODEL = dict(embedding_dim=24, hidden_dim=48, maxout_dim=24, alignment_dim=48)


def model_config(data_dir, **overrides):
    vocabularies = json.loads((data_dir / "metadata.json").read_text())["vocabularies"]
    return ModelConfig(source_vocab_size=vocabularies["source"]["size"],
                       target_vocab_size=vocabularies["target"]["size"], **dict(TINY_MODEL, **overrides))


def training_config(data_dir, model_dir, **overrides):
    settings = dict(data_dir=str(data_dir), model_dir=str(model_dir), optimizer="adam", learning_rate=0.005,
                    batch_size=32, sort_window=5, train_steps=20, log_every=10, checkpoint_every=10,
                    validate_every=0, dev_bleu_sentences=60, attention_sentences=2)
    settings.update(overrides)
    return TrainingConfig(**settings)


def make_trainer(model, config):
    return Trainer.create(model, config, search_config=SearchConfig(beam_size=3))


def checkpoint_weights(path):
    """Every model weight in a checkpoint by its name there: most are filed under the optimizer's
    references to the trainable variables, the rest under `model/`."""
    reader = tf.train.load_checkpoint(str(path))
    weights = {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
               if name.startswith(("model/", "optimizer/_trainable_variables/")) and "OPTIMIZER_SLOT" not in name}
    assert len(weights) > 10, sorted(weights)
    return weights


@pytest.fixture(scope="module")
def trained_run(toy_data, tmp_path_factory):
    """A tiny RNNsearch trained on the toy corpus, validated every 200 updates."""
    model_dir = tmp_path_factory.mktemp("run") / "model"
    config = training_config(toy_data, model_dir, train_steps=600, log_every=50, checkpoint_every=200,
                             validate_every=200)
    return make_trainer(model_config(toy_data), config).train(), model_dir


def test_dev_bleu_rises_well_above_zero(trained_run):
    summary, model_dir = trained_run
    state = json.loads((model_dir / "training_state.json").read_text())
    assert summary["selected_by"] == state["selected_by"] == "bleu"
    assert summary["best_dev_score"] > 30.0, summary
    assert state["best_dev_bleu"] == summary["best_dev_score"]
    best = next(entry for entry in state["history"] if entry["step"] == state["best_step"])
    assert state["best_dev_chrf"] == best["dev_chrf"] > 30.0
    assert state["dev_nll_per_sentence"] < 5.0
    assert os.path.exists(str(summary["best_checkpoint"]) + ".index")


def test_select_by_chrf_keeps_the_checkpoint_of_the_best_dev_chrf(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "chrf", train_steps=60, validate_every=20, checkpoint_every=20,
                             dev_bleu_sentences=20, select_by="chrf")
    summary = make_trainer(model_config(toy_data), config).train()
    state = json.loads((tmp_path / "chrf" / "training_state.json").read_text())
    chrf = {entry["step"]: entry["dev_chrf"] for entry in state["history"]}
    best_step = max(chrf, key=lambda step: (chrf[step], -step))  # the first of equal scores stays the best
    assert (state["selected_by"], summary["selected_by"]) == ("chrf", "chrf") and sorted(chrf) == [20, 40, 60]
    assert state["best_step"] == best_step and summary["best_dev_score"] == state["best_dev_chrf"] == chrf[best_step]
    assert summary["best_checkpoint"].endswith(f"best/ckpt-{best_step}")


def test_event_files_hold_scalars_images_text_hparams_and_projector(trained_run):
    _, model_dir = trained_run
    tags = {}
    for run in (".", "train", "dev"):
        accumulator = event_accumulator.EventAccumulator(str(model_dir / run), size_guidance={"tensors": 0})
        accumulator.Reload()
        tags[run] = set(accumulator.Tags()["tensors"])
    assert "_hparams_/session_start_info" in tags["."]  # the HParams session, above train/ and dev/
    assert {"loss", "nll_per_sentence", "gradient_norm", "updates_per_second", "tokens_per_second"} <= tags["train"]
    assert {"nll_per_sentence", "dev/bleu", "dev/chrf", "attention/0", "attention/1", "translations"} <= tags["dev"]
    projector_config = (model_dir / "train" / "projector_config.pbtxt").read_text()
    assert "source_embedding" in projector_config and "target_embedding" in projector_config
    assert (model_dir / "train" / "target_embedding_tokens.tsv").read_text().split("\n")[:4] == [
        "<pad>", "<s>", "</s>", "<unk>"]


def test_training_state_holds_the_learning_curve(trained_run):
    _, model_dir = trained_run
    state = json.loads((model_dir / "training_state.json").read_text())
    history = state["history"]
    assert [entry["step"] for entry in history] == [200, 400, 600]
    assert history[-1]["dev_bleu"] == state["dev_bleu"] and history[-1]["hours"] == state["hours"]
    assert history[0]["hours"] < history[1]["hours"] < history[2]["hours"]
    assert all(entry["learning_rate"] == pytest.approx(0.005) for entry in history)


def test_checkpoints_hold_a_shuffle_buffer_cut_to_the_training_pairs(trained_run, toy_data, tmp_path):
    _, model_dir = trained_run
    whole_buffer = iter(TrainingInput(str(toy_data / "train-*.tfrecord.gz"), batch_size=32, sort_window=5)())
    next(whole_buffer)
    whole_buffer_size = checkpoint_bytes(tf.train.Checkpoint(iterator=whole_buffer).write(str(tmp_path / "input")))
    # The model, its optimizer and an iterator of 3,000 pairs, against an iterator of 100,000 slots alone.
    assert checkpoint_bytes(tf.train.latest_checkpoint(str(model_dir / "checkpoints"))) < whole_buffer_size / 4


def test_learning_rate_decays_when_the_selected_score_stalls_and_resume_keeps_it(toy_data, tmp_path, caplog):
    # A rate too small to change dev chrF: every validation after the first one is a plateau, and decays the rate.
    settings = dict(learning_rate=1e-12, validate_every=2, checkpoint_every=2, log_every=2, learning_rate_decay=0.5,
                    decay_patience=1, dev_bleu_sentences=8, label_smoothing=0.1, keep_best_checkpoints=3,
                    select_by="chrf")
    model = model_config(toy_data, embedding_dropout=0.1, hidden_dropout=0.1, readout_dropout=0.1)
    with caplog.at_level("INFO"):
        make_trainer(model, training_config(toy_data, tmp_path / "run", train_steps=6, **settings)).train()
        make_trainer(model, training_config(toy_data, tmp_path / "run", train_steps=8, **settings)).train()
    history = json.loads((tmp_path / "run" / "training_state.json").read_text())["history"]
    assert [entry["step"] for entry in history] == [2, 4, 6, 8]
    # The rate the updates up to each validation used; the validation at step 4 decays it from step 5 on.
    expected = [1e-12 * 0.5 ** max(index - 1, 0) for index in range(4)]
    np.testing.assert_allclose([entry["learning_rate"] for entry in history], expected, rtol=1e-5)
    accumulator = event_accumulator.EventAccumulator(str(tmp_path / "run" / "train"), size_guidance={"tensors": 0})
    accumulator.Reload()
    logged = {event.step: float(tf.make_ndarray(event.tensor_proto)) for event in accumulator.Tensors("learning_rate")}
    np.testing.assert_allclose([logged[entry["step"]] for entry in history], expected, rtol=1e-5)
    messages = [record.getMessage() for record in caplog.records]
    assert sum("dev chrF did not improve for 1 validations" in message for message in messages) == 3
    assert not any("dev BLEU did not improve" in message for message in messages)
    validations = [message for message in messages if message.startswith("validation at step")]
    assert len(validations) == 4 and re.search(r"\| chrF [\d.]+ \(best\) \|", validations[0])  # beside what selects
    assert not any(re.search(r"BLEU [\d.]+ \(best\)", message) for message in validations)


def test_time_budget_stops_training_after_a_final_validation(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "timed", train_steps=10_000, max_hours=1e-9, validate_every=500,
                             dev_bleu_sentences=8)
    summary = make_trainer(model_config(toy_data), config).train()
    assert summary["stop_reason"] == "reached max_hours=1e-09" and summary["step"] == 1
    state = json.loads((tmp_path / "timed" / "training_state.json").read_text())
    assert [entry["step"] for entry in state["history"]] == [1]


def test_sigterm_stops_after_the_update_without_the_final_validation_a_limit_gets(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "stopped", train_steps=10_000, validate_every=500)
    handler_before = signal.getsignal(signal.SIGTERM)
    summary = signalled_after(make_trainer(model_config(toy_data), config), 3, signal.SIGTERM).train()
    assert (summary["signal"], summary["step"], summary["best_step"]) == ("SIGTERM", 3, 0)
    assert summary["latest_checkpoint"].endswith("ckpt-3") and summary["best_checkpoint"] is None
    assert summary["best_dev_score"] is None  # never validated: no score, as no best checkpoint
    assert signal.getsignal(signal.SIGTERM) is handler_before  # the trainer's handler is gone with the training


def test_max_epochs_stops_once_that_share_of_the_training_pairs_is_seen(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "epochs", train_steps=10_000, max_epochs=0.25, validate_every=500,
                             dev_bleu_sentences=8)
    summary = make_trainer(model_config(toy_data), config).train()
    pairs = DataDir(str(toy_data)).records("train")
    assert summary["stop_reason"] == "reached max_epochs=0.25"
    assert summary["step"] == math.ceil(pairs / 4 / 32)  # the first update of 32 pairs that reaches a quarter of them
    state = json.loads((tmp_path / "epochs" / "training_state.json").read_text())
    assert state["history"][-1]["epoch"] == pytest.approx(summary["step"] * 32 / pairs)


def hour_long_validations(trainer, module, monkeypatch):
    """Each validation of `trainer` takes an hour by the clock `module` reads as `module.time`."""

    class Clock:
        offset = 0.0

        def time(self):
            return time.time() + self.offset

    clock, validate = Clock(), trainer.validator
    monkeypatch.setattr(module, "time", clock)

    def slow_validator():
        result = validate()
        clock.offset += 3600
        return result

    trainer.validator = slow_validator


def test_a_budget_used_up_by_a_validation_stops_at_the_validated_step(toy_data, tmp_path, monkeypatch):
    # The quickstart's 8 minutes ran out during the validation at step 1000; it then made update 1001 and
    # validated it too. An hour passes during each validation here (the clock of the training budget).
    config = training_config(toy_data, tmp_path / "timed", train_steps=10_000, max_hours=0.5, validate_every=2,
                             dev_bleu_sentences=8)
    trainer = make_trainer(model_config(toy_data), config)
    hour_long_validations(trainer, training_budget, monkeypatch)
    summary = trainer.train()
    assert summary["stop_reason"] == "reached max_hours=0.5" and summary["step"] == 2
    state = json.loads((tmp_path / "timed" / "training_state.json").read_text())
    assert [entry["step"] for entry in state["history"]] == [2] and state["hours"] > 1
    assert summary["latest_checkpoint"].endswith("ckpt-2")


def signalled_after(trainer, updates, number=signal.SIGINT):
    """`trainer`, sending itself the signal `number` right after its `updates`-th update (as Ctrl-C would)."""
    update, done = trainer.train_steps[0], []

    def update_then_signal():
        result = update()
        done.append(1)
        if len(done) == updates:
            os.kill(os.getpid(), number)
        return result

    trainer.train_steps[0] = update_then_signal
    return trainer


def signalled_in_validation(trainer, step, number=signal.SIGTERM):
    """`trainer`, sending itself the signal `number` once its validation at `step` runs (its translations started),
    as a scheduler's SIGTERM in a validation would."""
    translator = trainer.validator.translator
    translate = translator.translate

    def signal_then_translate(*args, **kwargs):
        if trainer.step == step:
            os.kill(os.getpid(), number)
        return translate(*args, **kwargs)

    translator.translate = signal_then_translate
    return trainer


def dev_event_steps(model_dir):
    """The steps of the validations TensorBoard shows (every dev event's)."""
    accumulator = event_accumulator.EventAccumulator(str(model_dir / "dev"), size_guidance={"tensors": 0})
    accumulator.Reload()
    return sorted({event.step for tag in accumulator.Tags()["tensors"] for event in accumulator.Tensors(tag)})


# Two trainings and a resumed one: `large`. The default suite abandons a validation asked to stop between its batches
# (tests/test_validator.py), stops on SIGTERM after the update (above) and resumes exactly after SIGINT (below)
@pytest.mark.large
def test_a_signal_in_a_validation_abandons_it_and_the_resumed_run_validates_that_step_first(toy_data, tmp_path):
    # A decay on every plateau of dev chrF: the updates after step 4 use the rate that step's validation decided.
    settings = dict(train_steps=6, validate_every=2, checkpoint_every=2, log_every=2, dev_bleu_sentences=40,
                    select_by="chrf", learning_rate_decay=0.5, decay_patience=1, keep_best_checkpoints=3)
    run = tmp_path / "resumed"
    straight = make_trainer(model_config(toy_data), training_config(toy_data, tmp_path / "straight", **settings))
    straight = straight.train()
    stopped = signalled_in_validation(make_trainer(model_config(toy_data), training_config(toy_data, run, **settings)),
                                      4).train()
    # Stopped with the checkpoint of update 4, its validation abandoned: recorded nowhere.
    assert (stopped["signal"], stopped["step"]) == ("SIGTERM", 4) and stopped["latest_checkpoint"].endswith("ckpt-4")
    assert [entry["step"] for entry in json.loads((run / "training_state.json").read_text())["history"]] == [2]
    assert not list((run / "best").glob("ckpt-4.*")) and dev_event_steps(run) == [2]

    resumed = make_trainer(model_config(toy_data), training_config(toy_data, run, **settings)).train()
    states = [json.loads((folder / "training_state.json").read_text()) for folder in (tmp_path / "straight", run)]
    # The history of a run never stopped, but the hours and the train NLL of step 4 (measured by the stopped run).
    histories = [[{name: value for name, value in entry.items() if name not in ("hours", "train_nll_per_sentence")}
                  for entry in state["history"]] for state in states]
    assert [entry["step"] for entry in histories[1]] == [2, 4, 6]
    assert [pytest.approx(entry) for entry in histories[0]] == histories[1]
    assert states[1]["history"][1]["train_nll_per_sentence"] is None
    assert (resumed["best_step"], resumed["best_dev_score"]) == pytest.approx((straight["best_step"],
                                                                                straight["best_dev_score"]))
    assert sorted(path.name for path in (run / "best").iterdir()) == sorted(
        path.name for path in (tmp_path / "straight" / "best").iterdir())
    assert dev_event_steps(run) == [2, 4, 6]
    expected = checkpoint_weights(straight["latest_checkpoint"])
    for name, value in checkpoint_weights(resumed["latest_checkpoint"]).items():
        np.testing.assert_allclose(value, expected[name], atol=1e-6, err_msg=name)


# train_steps=10 is `large`: the default suite resumes exactly from a checkpoint with dropout (SIGINT after update 7)
# and resumes a run whose train_steps were reached through the command (tests/test_train.py)
@pytest.mark.parametrize("dropout, stop", [pytest.param(0.0, "train_steps=10", marks=pytest.mark.large),
                                           (0.2, "SIGINT after update 7")])
def test_resume_continues_exactly_where_it_stopped(toy_data, tmp_path, dropout, stop):
    model = model_config(toy_data, embedding_dropout=dropout, hidden_dropout=dropout, readout_dropout=dropout)
    straight = make_trainer(model, training_config(toy_data, tmp_path / "straight")).train()
    if stop == "train_steps=10":
        make_trainer(model, training_config(toy_data, tmp_path / "resumed", train_steps=10)).train()
    else:  # stopped between updates 7 and 8 with a checkpoint (every 10 otherwise); resumed from it
        stopped = signalled_after(make_trainer(model, training_config(toy_data, tmp_path / "resumed")), 7).train()
        assert (stopped["signal"], stopped["step"]) == ("SIGINT", 7) and stopped["latest_checkpoint"].endswith("ckpt-7")
        assert stopped["stop_reason"] == "SIGINT at step 7; the same command resumes"
    resumed = make_trainer(model, training_config(toy_data, tmp_path / "resumed")).train()
    assert resumed["step"] == straight["step"] == 20
    expected, actual = checkpoint_weights(straight["latest_checkpoint"]), checkpoint_weights(resumed["latest_checkpoint"])
    assert expected.keys() == actual.keys()
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], atol=1e-6, err_msg=name)


def train_in_subprocess(data_dir, model_dir, *flags):
    command = [sys.executable, "-m", "rnnsearch_tf.train", f"--data_dir={data_dir}", f"--model_dir={model_dir}",
               "--optimizer=adam", "--learning_rate=0.005", "--batch_size=32", "--sort_window=5",
               "--train_steps=8", "--validate_every=0", "--log_every=4", "--checkpoint_every=8",
               *[f"--{name}={value}" for name, value in TINY_MODEL.items()], *flags]
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = preimported.run(command, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


# large: two whole trainings in fresh processes; the default suite splits the CPU into replicas
# (tests/test_strategy.py) and trains in-process (above)
@pytest.mark.large
def test_two_cpu_replicas_match_one_replica(toy_data, tmp_path):
    train_in_subprocess(toy_data, tmp_path / "one", "--cpu_replicas=1")
    two = train_in_subprocess(toy_data, tmp_path / "two", "--cpu_replicas=2")
    assert "CPU:1" in two.stderr
    expected = checkpoint_weights(tmp_path / "one" / "checkpoints" / "ckpt-8")
    actual = checkpoint_weights(tmp_path / "two" / "checkpoints" / "ckpt-8")
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], rtol=1e-4, atol=1e-5, err_msg=name)
    # The resolved flags reproduce the run.
    flags_text = (tmp_path / "two" / "flags.txt").read_text()
    assert "--cpu_replicas=2" in flags_text and f"--model_dir={tmp_path / 'two'}" in flags_text


@pytest.mark.large
def test_a_batch_size_the_replicas_cannot_share_is_refused_naming_the_flag(toy_data, tmp_path):
    command = [sys.executable, "-m", "rnnsearch_tf.train", f"--data_dir={toy_data}", f"--model_dir={tmp_path / 'm'}",
               "--batch_size=33", "--cpu_replicas=2", *[f"--{name}={value}" for name, value in TINY_MODEL.items()]]
    result = preimported.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1 and result.stderr.splitlines()[-1] == (
        "error: --batch_size=33 is not divisible by the 2 replicas (1 worker(s) of 2 each), which share every "
        "minibatch equally: make it a multiple of that")


def test_nonfinite_updates_are_skipped_then_training_stops_clearly(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "diverge", learning_rate=float("inf"), max_nonfinite_steps=3)
    # The first update (finite loss and gradient) makes the weights non-finite, the next 3 are skipped.
    message = (rf"^3 updates in a row had a non-finite loss or gradient \(step 4\); no checkpoint in "
               rf"{tmp_path / 'diverge' / 'checkpoints'} holds finite weights\. Lower --learning_rate")
    with pytest.raises(TrainingDivergedError, match=message):
        make_trainer(model_config(toy_data), config).train()
    assert not (tmp_path / "diverge" / "checkpoints" / "ckpt-4.index").exists()  # non-finite weights are not saved


def test_a_diverged_run_names_the_newest_checkpoint_whose_weights_are_finite(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "run", train_steps=2, checkpoint_every=1)
    make_trainer(model_config(toy_data), config).train()
    # Update 3 has a finite loss and gradient and makes weights non-finite (ckpt-3 holds them); 4 and 5 are skipped.
    diverging = dataclasses.replace(config, train_steps=20, learning_rate=float("inf"), max_nonfinite_steps=2)
    with pytest.raises(TrainingDivergedError, match=r"\(step 5\); the last finite weights are in "
                                                    rf"{tmp_path / 'run' / 'checkpoints' / 'ckpt-2'}\. Lower"):
        make_trainer(model_config(toy_data), diverging).train()
    assert not any(np.isfinite(value).all() for value in checkpoint_weights(tmp_path / "run" / "checkpoints" /
                                                                              "ckpt-3").values())


def test_misconfiguration_is_reported_before_training(toy_data, tmp_path):
    with pytest.raises(ValueError, match=r"source vocabulary of \d+ entries but the model config says source_vocab_size=7"):
        make_trainer(dataclasses.replace(model_config(toy_data), source_vocab_size=7),
                training_config(toy_data, tmp_path / "a"))
    with pytest.raises(FileNotFoundError, match="metadata.json is missing: --data_dir must be the --output_dir"):
        make_trainer(model_config(toy_data), training_config(tmp_path, tmp_path / "b"))
    make_trainer(model_config(toy_data), training_config(toy_data, tmp_path / "c", train_steps=1)).train()
    with pytest.raises(ValueError, match="holds a different model"):
        make_trainer(model_config(toy_data, hidden_dim=40), training_config(toy_data, tmp_path / "c")).train()


def test_a_run_refused_by_its_validation_search_writes_nothing(toy_data, tmp_path):
    with pytest.raises(ValueError, match="SearchConfig.shortlist needs a Shortlist"):
        Trainer.create(model_config(toy_data), training_config(toy_data, tmp_path / "model", validate_every=2),
                       search_config=SearchConfig(beam_size=3, shortlist=True))
    assert not (tmp_path / "model").exists()


def test_a_resumed_run_whose_input_pipeline_reads_no_data_iterator_of_its_checkpoints_says_so(toy_data, tmp_path):
    # Without flags.txt (`rnnsearch train` refuses it before: tests/test_train.py) the checkpoint says it.
    config = training_config(toy_data, tmp_path / "run", train_steps=2, checkpoint_every=1)
    make_trainer(model_config(toy_data), config).train()
    with pytest.raises(ValueError, match=rf"^{tmp_path / 'run' / 'checkpoints' / 'ckpt-2'}: everything in it reads but "
                                         r"its data iterator, .*: --max_tokens and --subword_sampling_alpha cannot be "
                                         r"turned on or off within a run \(this run: --max_tokens=600, "
                                         r"--subword_sampling_alpha=0\); resume with the run's own"):
        make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=3, max_tokens=600)).train()


def test_the_rates_leave_out_the_time_of_validations(toy_data, tmp_path, monkeypatch):
    # An hour passes during each validation (the clock of the console line and its scalars).
    config = training_config(toy_data, tmp_path / "run", train_steps=4, log_every=4, validate_every=2,
                             dev_bleu_sentences=4)
    trainer = make_trainer(model_config(toy_data), config)
    hour_long_validations(trainer, training_statistics, monkeypatch)
    trainer.train()
    accumulator = event_accumulator.EventAccumulator(str(tmp_path / "run" / "train"), size_guidance={"tensors": 0})
    accumulator.Reload()
    [event] = accumulator.Tensors("updates_per_second")
    assert event.step == 4 and float(tf.make_ndarray(event.tensor_proto)) > 4 / 3600 * 10  # not 4 updates an hour


def test_a_run_stopped_by_patience_stops_again_at_once_when_run_again(toy_data, tmp_path):
    # A rate too small to change dev BLEU: the validation at 4 does not improve on the one at 2.
    config = training_config(toy_data, tmp_path / "run", train_steps=20, learning_rate=1e-12, validate_every=2,
                             checkpoint_every=2, dev_bleu_sentences=8, patience=1)
    first = make_trainer(model_config(toy_data), config).train()
    assert first["step"] == 4 and first["stop_reason"].startswith("dev BLEU did not improve for 1 validations")
    again = make_trainer(model_config(toy_data), config).train()
    assert (again["step"], again["stop_reason"]) == (4, first["stop_reason"])


def test_a_resumed_run_keeps_its_optimizer_and_selection_metric(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "run", train_steps=2, validate_every=2, dev_bleu_sentences=8)
    make_trainer(model_config(toy_data), config).train()
    state_file = tmp_path / "run" / "training_state.json"
    state = json.loads(state_file.read_text())
    assert (state["optimizer"], state["selected_by"]) == ("adam", "bleu")
    with pytest.raises(ValueError, match=rf"^--optimizer=adadelta: {tmp_path / 'run'} was trained with "
                                         r"--optimizer=adam; resume with --optimizer=adam"):
        make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4, optimizer="adadelta"))
    with pytest.raises(ValueError, match=r"^--select_by=chrf: .* was trained with --select_by=bleu"):
        make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4, select_by="chrf"))
    # A child keeping the optimizer state needs the parent's optimizer.
    child = training_config(toy_data, tmp_path / "child", optimizer="adadelta", init_from=f"{tmp_path / 'run'}:latest",
                            reset_optim="keep_states")
    with pytest.raises(ValueError, match=r"the parent's optimizer state \(adam\) does not fit this run's "
                                         r"optimizer \(adadelta; trained with another --optimizer\?\)"):
        make_trainer(model_config(toy_data), child)
    assert not (tmp_path / "child").exists()
    # A run recorded before the optimizer was resumes.
    state_file.write_text(json.dumps({name: value for name, value in state.items() if name != "optimizer"}))
    model_file = tmp_path / "run" / "model.json"
    model_file.write_text(json.dumps({name: value for name, value in json.loads(model_file.read_text()).items()
                                      if name != "optimizer"}))
    resumed = make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4)).train()
    assert resumed["step"] == 4 and json.loads(state_file.read_text())["optimizer"] == "adam"


def test_a_resumed_run_measures_dev_bleu_on_the_same_sentences(toy_data, tmp_path):
    """Another --dev_bleu_sentences judged a subset's BLEU against the best of another subset."""
    config = training_config(toy_data, tmp_path / "run", train_steps=2, validate_every=2, dev_bleu_sentences=8)
    make_trainer(model_config(toy_data), config).train()
    state_file = tmp_path / "run" / "training_state.json"
    state = json.loads(state_file.read_text())
    assert state["dev_bleu_sentences"] == 8
    dev_sentences = len(pathlib.Path(DataDir(toy_data).text_file("dev", "source")).read_text().splitlines())
    for asked, measured in ((9, 9), (None, dev_sentences)):
        with pytest.raises(ValueError, match=rf"^--dev_bleu_sentences={asked or 0}: {tmp_path / 'run'} measured "
                                             rf"dev BLEU on 8 dev sentences \({state_file}\), this run would on "
                                             rf"{measured}, against the best of the others; resume with "
                                             r"--dev_bleu_sentences=8, or continue its weights in a new --model_dir "
                                             r"with --init_from="):
            make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4, dev_bleu_sentences=asked))
    assert json.loads(state_file.read_text()) == state
    # A run recorded before the count was resumes, and records it.
    state_file.write_text(json.dumps({name: value for name, value in state.items() if name != "dev_bleu_sentences"}))
    resumed = make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4)).train()
    assert resumed["step"] == 4 and json.loads(state_file.read_text())["dev_bleu_sentences"] == 8


def test_a_resumed_run_keeps_its_dev_split_and_number_of_workers(toy_data, tmp_path):
    """Another --dev_split judged other sentences' BLEU against the recorded best; another number of workers read
    one worker's data position into a pipeline of another share of the shards."""
    config = training_config(toy_data, tmp_path / "run", train_steps=2, validate_every=2, dev_bleu_sentences=8)
    make_trainer(model_config(toy_data), config).train()
    state_file = tmp_path / "run" / "training_state.json"
    state = json.loads(state_file.read_text())
    assert (state["dev_split"], state["workers"]) == (config.dev_split, 1)
    state_file.write_text(json.dumps(dict(state, dev_split="newstest")))  # the toy data has one dev split
    with pytest.raises(ValueError, match=rf"^--dev_split={config.dev_split}: {tmp_path / 'run'} measured dev BLEU on "
                                         r"the newstest split .* resume with --dev_split=newstest, or continue its "
                                         r"weights in a new --model_dir with --init_from="):
        make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4))
    state_file.write_text(json.dumps(dict(state, workers=2)))
    with pytest.raises(ValueError, match=rf"^--model_dir={tmp_path / 'run'} was trained by 2 worker\(s\) "
                                         r"\(training_state.json of worker 0\), this run has 1 \(TF_CONFIG\).* "
                                         r"--init_from=.*:latest --reset_optim=keep_states"):
        make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4)).train()
    # A run of two workers that never validated records no count: worker 1's checkpoints name it.
    state_file.unlink()
    shutil.copytree(tmp_path / "run" / "checkpoints", tmp_path / "run" / "workers" / "1" / "checkpoints")
    with pytest.raises(ValueError, match=rf"^--model_dir={tmp_path / 'run'} was trained by 2 or more workers \(its "
                                         r"workers/1 holds checkpoints\), this run has 1 \(TF_CONFIG\).* "
                                         r"--init_from=.*:latest --reset_optim=keep_states"):
        make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=4)).train()


def test_a_run_stopped_before_its_first_validation_keeps_its_optimizer(toy_data, tmp_path):
    config = training_config(toy_data, tmp_path / "run", train_steps=1, checkpoint_every=1, validate_every=100)
    make_trainer(model_config(toy_data), config).train()
    # As a run killed after its checkpoint of step 1 and before it validated leaves its folder.
    (tmp_path / "run" / "training_state.json").unlink()
    with pytest.raises(ValueError, match=r"^--optimizer=adadelta: .* was trained with --optimizer=adam; resume"):
        make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=2, optimizer="adadelta"))


@pytest.fixture(scope="module")
def parent_run(toy_data, tmp_path_factory):
    """A tiny RNNsearch trained 6 updates on the toy corpus, and a second toy corpus (other sentences)
    built with its vocabularies (`--vocabulary_from`)."""
    folder = tmp_path_factory.mktemp("parent")
    summary = make_trainer(model_config(toy_data), training_config(toy_data, folder / "model", train_steps=6,
                                                                   checkpoint_every=6)).train()
    corpus = corpus_registry.text_file_corpus("en", "fr", write_corpus(folder / "raw", train_pairs=800, seed=5))
    DatasetBuilder(corpus, folder / "new_data", num_shards=1, show_progress=False,
                   vocabulary_from=folder / "model").build()
    return summary, folder / "model", folder / "new_data"


def model_weights(model_dir, checkpoint_path):
    """Every weight of the model in a checkpoint, in the model's order."""
    model, _ = ModelDir(model_dir).load_model(str(checkpoint_path))
    assert len(model.weights) > 10
    return [variable.numpy() for variable in model.weights]


def optimizer_iterations(path):
    return int(tf.train.load_checkpoint(str(path)).get_tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"))


@pytest.mark.parametrize("reset_optim", ["all", "keep_states"])
def test_init_from_starts_a_new_model_with_the_parents_weights(parent_run, tmp_path, reset_optim):
    parent_summary, parent_dir, new_data = parent_run
    # A learning rate of 0 leaves the weights as they started: the child's first checkpoint holds them.
    config = training_config(new_data, tmp_path / "child", train_steps=1, learning_rate=0.0,
                             init_from=f"{parent_dir}:latest", reset_optim=reset_optim)
    summary = make_trainer(model_config(new_data), config).train()
    assert summary["step"] == 1 and summary["latest_checkpoint"].endswith("ckpt-1")
    expected = model_weights(parent_dir, parent_summary["latest_checkpoint"])
    for index, (actual, parent_weight) in enumerate(zip(model_weights(tmp_path / "child", summary["latest_checkpoint"]),
                                                        expected)):
        np.testing.assert_array_equal(actual, parent_weight, err_msg=str(index))
    # A fresh optimizer counts this run's one update; keep_states continues the parent's 6.
    assert optimizer_iterations(summary["latest_checkpoint"]) == {"all": 1, "keep_states": 7}[reset_optim]
    assert json.loads((tmp_path / "child" / "parent.json").read_text()) == {
        "model_dir": str(parent_dir), "checkpoint": "latest", "checkpoint_path": parent_summary["latest_checkpoint"],
        "step": 6, "reset_optim": reset_optim,
    }
    # Killed and run again, the child resumes from its own checkpoint, not from the parent.
    config = dataclasses.replace(config, train_steps=3, learning_rate=0.01)
    resumed = make_trainer(model_config(new_data), config).train()
    assert resumed["step"] == 3
    assert optimizer_iterations(resumed["latest_checkpoint"]) == {"all": 3, "keep_states": 9}[reset_optim]


def test_init_from_trains_on_the_new_data_from_the_parents_weights(parent_run, tmp_path):
    parent_summary, parent_dir, new_data = parent_run
    child = make_trainer(model_config(new_data), training_config(new_data, tmp_path / "child", train_steps=4,
                                                                 init_from=str(parent_dir)))
    scratch = make_trainer(model_config(new_data), training_config(new_data, tmp_path / "scratch", train_steps=4))
    parent_weights = model_weights(parent_dir, parent_summary["latest_checkpoint"])
    distances = {}
    for name, run in (("child", child), ("scratch", scratch)):
        weights = model_weights(tmp_path / name, run.train()["latest_checkpoint"])
        distances[name] = max(np.abs(mine - theirs).max() for mine, theirs in zip(weights, parent_weights))
    # The scratch run starts from the parent's own initial weights (the same seed), 6 updates behind it; the
    # child starts on the parent's weights and moves 4 updates away from them (without `init_from` it would
    # be the scratch run).
    assert 0 < distances["child"] < distances["scratch"] / 1.5, distances


def test_init_from_refuses_a_mismatch_or_an_existing_model_dir_in_one_line(parent_run, toy_data, tmp_path):
    _, parent_dir, new_data = parent_run
    with pytest.raises(ValueError, match=r"the parent's hidden_dim is 48 .* but this run's is 40"):
        make_trainer(model_config(new_data, hidden_dim=40),
                     training_config(new_data, tmp_path / "a", init_from=str(parent_dir)))
    assert not (tmp_path / "a").exists()
    # The parent's own model directory, or a model trained from scratch, is not overwritten.
    with pytest.raises(ValueError, match=rf"{parent_dir} already holds a model not started from it; --init_from "
                                         "starts a new --model_dir"):
        make_trainer(model_config(new_data), training_config(new_data, parent_dir, init_from=str(parent_dir)))
    # A child resumes only with the parent and checkpoint it started from.
    make_trainer(model_config(new_data), training_config(new_data, tmp_path / "child", train_steps=1,
                                                         init_from=f"{parent_dir}:latest")).train()
    with pytest.raises(ValueError, match=rf"child already holds a model started from {parent_dir}/checkpoints/ckpt-6"):
        make_trainer(model_config(new_data), training_config(new_data, tmp_path / "child", init_from=str(parent_dir)))
    # The command line: one `error:` line naming the field that differs.
    command = [sys.executable, "-m", "rnnsearch_tf.train", f"--data_dir={toy_data}", f"--model_dir={tmp_path / 'b'}",
               f"--init_from={parent_dir}", *[f"--{name}={value}" for name, value in TINY_MODEL.items()],
               "--maxout_dim=20"]
    result = preimported.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        f"error: init_from={parent_dir}: the parent's maxout_dim is 24 ({parent_dir / 'model.json'}) "
        "but this run's is 20")


@pytest.fixture(scope="module")
def joined_data(toy_data, tmp_path_factory):
    """The toy corpus built again with half its train records joined pairs (the same vocabularies)."""
    raw = toy_data.parent / "raw"
    splits = {split: (raw / f"{split}.en", raw / f"{split}.fr") for split in ("train", "dev")}
    joined = tmp_path_factory.mktemp("joined") / "data"
    DatasetBuilder(corpus_registry.text_file_corpus("en", "fr", splits), joined,
                   vocabulary_size=100, max_length=40, num_shards=2, show_progress=False, joined_share=0.5).build()
    return joined


# Five trainings: `large`. The default suite switches the data and judges the best checkpoint afresh after it, keeps
# the switch when a resumed run raises the budget, and refuses a switch added to or removed from a run (below)
@pytest.mark.large
def test_switch_data_dir_continues_as_a_child_on_that_data_would_and_resumes(toy_data, joined_data, tmp_path):
    # Half of 8 updates on the toy data, then 4 on the joined data, in one run...
    switched = make_trainer(model_config(toy_data), training_config(
        toy_data, tmp_path / "switched", train_steps=8, checkpoint_every=2, switch_data_dir=str(joined_data),
        switch_at=0.5)).train()
    # ... are 4 updates, then a child continuing them on the joined data with their optimizer state.
    first = make_trainer(model_config(toy_data), training_config(toy_data, tmp_path / "first", train_steps=4)).train()
    child = make_trainer(model_config(joined_data), training_config(
        joined_data, tmp_path / "child", train_steps=4, init_from=f"{tmp_path / 'first'}:latest",
        reset_optim="keep_states")).train()
    unswitched = make_trainer(model_config(toy_data), training_config(toy_data, tmp_path / "toy", train_steps=8)).train()
    expected, actual = checkpoint_weights(child["latest_checkpoint"]), checkpoint_weights(switched["latest_checkpoint"])
    other = checkpoint_weights(unswitched["latest_checkpoint"])
    assert first["step"] == 4 and switched["step"] == 8
    assert any(not np.allclose(other[name], actual[name], atol=1e-4) for name in actual)  # the data did change
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], atol=1e-6, err_msg=name)
    # Killed after step 6 (its last checkpoint unreadable), it resumes on the joined data where it was.
    for path in (tmp_path / "switched" / "checkpoints").glob("ckpt-8.*"):
        path.write_bytes(b"")
    resumed = make_trainer(model_config(toy_data), training_config(
        toy_data, tmp_path / "switched", train_steps=8, checkpoint_every=2, switch_data_dir=str(joined_data),
        switch_at=0.5)).train()
    assert resumed["step"] == 8
    for name, value in checkpoint_weights(resumed["latest_checkpoint"]).items():
        np.testing.assert_allclose(value, actual[name], atol=1e-6, err_msg=name)


@pytest.mark.large  # two trainings: the switch by time equals the switch by updates (default suite, above)
def test_switch_at_a_share_of_max_hours_as_of_train_steps(toy_data, joined_data, tmp_path, monkeypatch):
    # A minute passes with each update (the clock of the training budget): with max_hours=0.1 (6 updates) the
    # switch comes after 3, as it does with train_steps=6.
    by_steps = make_trainer(model_config(toy_data), training_config(
        toy_data, tmp_path / "steps", train_steps=6, switch_data_dir=str(joined_data), switch_at=0.5)).train()

    class Clock:
        now = time.time()

        def time(self):
            self.now += 60.0
            return self.now

    monkeypatch.setattr(training_budget, "time", Clock())
    by_hours = make_trainer(model_config(toy_data), training_config(
        toy_data, tmp_path / "hours", train_steps=10_000, max_hours=0.1, switch_data_dir=str(joined_data),
        switch_at=0.5)).train()
    assert by_hours["stop_reason"] == "reached max_hours=0.1" and by_hours["step"] == 6
    expected, actual = checkpoint_weights(by_steps["latest_checkpoint"]), checkpoint_weights(by_hours["latest_checkpoint"])
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], atol=1e-6, err_msg=name)


def test_after_the_switch_the_best_checkpoint_is_judged_afresh(toy_data, joined_data, tmp_path):
    config = training_config(toy_data, tmp_path / "switched", train_steps=8, validate_every=2, checkpoint_every=2,
                             dev_bleu_sentences=8, switch_data_dir=str(joined_data), switch_at=0.5)
    trainer = make_trainer(model_config(toy_data), config)
    validate = trainer.validator

    def worsening_validator():  # each validation scores lower than the one before
        return dict(validate(), bleu=100.0 - trainer.step)

    trainer.validator = worsening_validator
    summary = trainer.train()
    # Validations at 2 and 4 read the toy data only; updates 5-8 read the joined data.
    assert summary["best_step"] == 6 and summary["best_checkpoint"].endswith("ckpt-6")
    state = json.loads((tmp_path / "switched" / "training_state.json").read_text())
    assert [entry["step"] for entry in state["history"]] == [2, 4, 6, 8] and state["best_step"] == 6


def test_a_switch_holds_when_a_resumed_run_raises_the_budget(toy_data, joined_data, tmp_path):
    # Update 2 of 2 reads the joined data (half the budget spent); resumed with train_steps=5, updates 3-5 read
    # it too, though less than half of 5 updates was spent before update 3.
    config = training_config(toy_data, tmp_path / "switched", train_steps=2, checkpoint_every=2,
                             switch_data_dir=str(joined_data), switch_at=0.5)
    make_trainer(model_config(toy_data), config).train()
    resumed = make_trainer(model_config(toy_data), dataclasses.replace(config, train_steps=5))
    read = []
    for index, update in enumerate(resumed.train_steps):
        resumed.train_steps[index] = lambda update=update, index=index: read.append(index) or update()
    assert resumed.train()["step"] == 5
    assert read == [1, 1, 1]  # the iterator of switch_data_dir


def test_switch_data_dir_cannot_be_added_to_or_removed_from_a_run(toy_data, joined_data, tmp_path):
    without = training_config(toy_data, tmp_path / "without", train_steps=2, checkpoint_every=2)
    make_trainer(model_config(toy_data), without).train()
    with pytest.raises(ValueError, match=rf"^--switch_data_dir={joined_data}: {tmp_path / 'without'} started "
                                         r"without --switch_data_dir, which cannot be added to a run"):
        make_trainer(model_config(toy_data),
                     dataclasses.replace(without, train_steps=4, switch_data_dir=str(joined_data)))
    with_switch = training_config(toy_data, tmp_path / "with", train_steps=2, checkpoint_every=2,
                                  switch_data_dir=str(joined_data))
    make_trainer(model_config(toy_data), with_switch).train()
    with pytest.raises(ValueError, match=rf"^{tmp_path / 'with'} started with a --switch_data_dir, which cannot be "
                                         "removed from the run"):
        make_trainer(model_config(toy_data), dataclasses.replace(with_switch, train_steps=4, switch_data_dir=None))
