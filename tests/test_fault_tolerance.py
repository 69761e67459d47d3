"""What survives what in training: kills inside a checkpoint save and inside a validation (faults injected
with strace; `large`), an unreadable newest checkpoint, leftovers of an unfinished save, missing or corrupt shards."""

import json
import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from conftest import REPO_ROOT
from data_pipeline import CorruptShardError
from rnnsearch_tf import ModelConfig
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.training.trainer import Trainer
from rnnsearch_tf.training.training_config import TrainingConfig

TINY_MODEL = dict(embedding_dim=16, hidden_dim=24, maxout_dim=12, alignment_dim=24)
needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="strace injects the faults")
# Each kill test runs a command three times (straight, killed under strace, resumed), half a minute to a
# minute: they are `large`.


def command(data_dir, model_dir, *flags):
    return [sys.executable, "-m", "rnnsearch_tf.train", f"--data_dir={data_dir}", f"--model_dir={model_dir}",
            "--optimizer=adam", "--learning_rate=0.005", "--batch_size=32", "--sort_window=5", "--train_steps=12",
            "--log_every=4", "--checkpoint_every=4", "--dev_bleu_sentences=20", "--beam_size=2",
            "--hidden_dropout=0.2", *[f"--{name}={value}" for name, value in TINY_MODEL.items()], *flags]


def run(arguments, strace_path=None, when=1):
    """Runs `arguments`; with `strace_path`, SIGKILLs it at its `when`-th open of that file."""
    if strace_path is not None:
        arguments = ["strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=openat", "-e",
                     f"inject=openat:signal=KILL:when={when}", "-P", str(strace_path), *arguments]
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run(arguments, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=600)


def model_weights(path):
    reader = tf.train.load_checkpoint(str(path))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name.startswith("model/") and "OPTIMIZER_SLOT" not in name}


def assert_same_weights(actual_path, expected_path):
    actual, expected = model_weights(actual_path), model_weights(expected_path)
    assert actual.keys() == expected.keys()
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], atol=1e-6, err_msg=name)


def straight_then_killed(toy_data, tmp_path, validate_flag, strace_path, when=1):
    """Trains tmp_path/straight uninterrupted, then tmp_path/killed until SIGKILL at the `when`-th open
    of `strace_path`; returns the killed run's arguments (to resume it)."""
    straight = run(command(toy_data, tmp_path / "straight", validate_flag))
    assert straight.returncode == 0, straight.stderr[-3000:]
    arguments = command(toy_data, tmp_path / "killed", validate_flag)
    killed = run(arguments, strace_path=strace_path, when=when)
    assert killed.returncode in (-9, 137), killed.stderr[-3000:]
    return arguments


@pytest.mark.large
@needs_strace
def test_killed_inside_a_checkpoint_save_the_same_command_resumes_and_finishes(toy_data, tmp_path):
    model_dir = tmp_path / "killed"
    arguments = straight_then_killed(toy_data, tmp_path, "--validate_every=0", model_dir / "checkpoints" / "ckpt-8.index")
    assert tf.train.latest_checkpoint(str(model_dir / "checkpoints")).endswith("ckpt-4")
    assert list((model_dir / "checkpoints").glob("ckpt-8_temp*"))  # what the kill left behind
    resumed = run(arguments)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "left by a checkpoint save that did not finish" in resumed.stderr
    assert not list((model_dir / "checkpoints").glob("*_temp*"))
    assert_same_weights(model_dir / "checkpoints" / "ckpt-12", tmp_path / "straight" / "checkpoints" / "ckpt-12")


@pytest.mark.large
@needs_strace
def test_killed_during_a_validation_the_resumed_run_validates_that_step_again(toy_data, tmp_path):
    model_dir = tmp_path / "killed"
    # training_state.json is opened once by the first validation (to write it) and first by the second
    # validation to read it: the second open is inside the validation of step 8, before its checkpoint.
    arguments = straight_then_killed(toy_data, tmp_path, "--validate_every=4", model_dir / "training_state.json", when=2)
    assert tf.train.latest_checkpoint(str(model_dir / "checkpoints")).endswith("ckpt-4")
    resumed = run(arguments)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    expected = json.loads((tmp_path / "straight" / "training_state.json").read_text())
    actual = json.loads((model_dir / "training_state.json").read_text())
    assert [entry["step"] for entry in actual["history"]] == [4, 8, 12]
    for entry, expected_entry in zip(actual["history"], expected["history"]):
        assert entry["dev_bleu"] == pytest.approx(expected_entry["dev_bleu"], abs=1e-6)
    assert actual["best_step"] == expected["best_step"]
    best = tf.train.latest_checkpoint(str(model_dir / "best"))
    assert best.endswith(f"ckpt-{expected['best_step']}")
    assert_same_weights(best, tf.train.latest_checkpoint(str(tmp_path / "straight" / "best")))


def trainer(data_dir, model_dir, **overrides):
    vocabularies = json.loads((data_dir / "metadata.json").read_text())["vocabularies"]
    model_config = ModelConfig(source_vocab_size=vocabularies["source"]["size"],
                               target_vocab_size=vocabularies["target"]["size"], **TINY_MODEL)
    settings = dict(data_dir=str(data_dir), model_dir=str(model_dir), optimizer="adam", learning_rate=0.005,
                    batch_size=32, sort_window=5, train_steps=8, log_every=4, checkpoint_every=4, validate_every=0)
    return Trainer.create(model_config, TrainingConfig(**dict(settings, **overrides)), search_config=SearchConfig())


def test_an_unreadable_newest_checkpoint_resumes_from_the_one_before(toy_data, tmp_path, caplog):
    straight = trainer(toy_data, tmp_path / "straight", train_steps=12).train()
    trainer(toy_data, tmp_path / "broken").train()
    checkpoints = tmp_path / "broken" / "checkpoints"
    index = checkpoints / "ckpt-8.index"
    index.write_bytes(index.read_bytes()[:20])  # a write cut short
    (checkpoints / "ckpt-12_temp").mkdir()
    with caplog.at_level(logging.WARNING):
        resumed = trainer(toy_data, tmp_path / "broken", train_steps=12).train()
    assert "ckpt-8 does not read" in caplog.text and "resuming from" in caplog.text
    assert resumed["step"] == 12 and not (checkpoints / "ckpt-12_temp").exists()
    assert_same_weights(resumed["latest_checkpoint"], straight["latest_checkpoint"])


def test_missing_or_corrupt_shards_are_named_before_training(toy_data, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(toy_data, data)
    shard = sorted(data.glob("train-*.tfrecord.gz"))[1]
    shard.unlink()
    with pytest.raises(CorruptShardError, match=f"lists 2 train shards and {shard} is missing"):
        trainer(data, tmp_path / "model")
    shutil.copy(toy_data / shard.name, shard)
    dev = sorted(data.glob("dev-*.tfrecord.gz"))[0]
    dev.write_bytes(dev.read_bytes()[:-10])
    with pytest.raises(CorruptShardError, match=f"corrupt TFRecord shard {dev}"):
        trainer(data, tmp_path / "model", validate_every=4)
    trainer(data, tmp_path / "model", validate_every=0)  # no validation: the dev split is not read


@pytest.mark.large
@needs_strace
def test_a_build_killed_before_it_finishes_leaves_the_earlier_build_as_it_was(toy_data, tmp_path):
    raw = toy_data.parent / "raw"
    output = tmp_path / "data"
    arguments = [sys.executable, "-m", "rnnsearch_tf.cli.main", "build-data", "--corpus=text_files", f"--output_dir={output}",
                 f"--train_source={raw / 'train.en'}", f"--train_target={raw / 'train.fr'}",
                 f"--dev_source={raw / 'dev.en'}", f"--dev_target={raw / 'dev.fr'}", "--num_shards=2",
                 "--source_language=en", "--target_language=fr"]
    first = run([*arguments, "--vocabulary_size=100"])
    assert first.returncode == 0, first.stderr[-3000:]
    before = {path.name: path.read_bytes() for path in output.iterdir()}
    killed = run([*arguments, "--vocabulary_size=20"], strace_path=tmp_path / ".data.incomplete" / "metadata.json")
    assert killed.returncode in (-9, 137), killed.stderr[-3000:]
    assert {path.name: path.read_bytes() for path in output.iterdir()} == before
    rebuilt = run([*arguments, "--vocabulary_size=20"])
    assert rebuilt.returncode == 0, rebuilt.stderr[-3000:]
    metadata = json.loads((output / "metadata.json").read_text())
    assert metadata["vocabularies"]["source"]["size"] == 24 and not (tmp_path / ".data.incomplete").exists()


def test_a_model_directory_refuses_data_with_other_vocabularies(toy_data, tmp_path):
    trainer(toy_data, tmp_path / "model", train_steps=1).train()
    copy = tmp_path / "model" / "source_vocab.tsv"
    copy.write_text(copy.read_text(encoding="utf-8").replace("cat", "cats"), encoding="utf-8")
    with pytest.raises(ValueError, match="source_vocab.tsv differs from the source vocabulary"):
        trainer(toy_data, tmp_path / "model", train_steps=2).train()
