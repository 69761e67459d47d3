"""Workers: this process's place in a cluster, and a lost worker named in one line (the two-process runs are
in tests/test_trainer.py's large tier)."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from conftest import REPO_ROOT
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.training.workers import LostWorkerError, Workers, lost_worker_error
from helpers.model_server import free_port

TASKS = [("worker", 0, "127.0.0.1:2000"), ("worker", 1, "127.0.0.1:2001")]
# What TensorFlow 2.21 said on worker 0 when worker 1 was killed, and on worker 1 when worker 0 was.
HEARTBEATS = ("Collective ops is aborted by: Error reported from /job:worker/task:1: The following tasks are unhealthy "
              "(stopped sending heartbeats):\n/job:worker/replica:0/task:1\nThe tasks have crashed.")
RESET = ("Collective ops is aborted by: recvmsg:Connection reset by peer\nAdditional GRPC error information from "
         "remote target /job:worker/replica:0/task:0 while calling /tensorflow.WorkerService/CompleteInstance:")


def test_one_process_is_one_worker_and_the_chief():
    workers = Workers(tf.distribute.MirroredStrategy(["/cpu:0"]))
    assert (workers.count, workers.index, workers.is_chief) == (1, 0, True)
    assert workers.gather([40, 1]) == [[40, 1]]
    assert workers.lost_worker_error(tf.errors.UnavailableError(None, None, HEARTBEATS), 40, None) is None


def test_the_lost_worker_is_named_with_its_address_and_how_to_resume():
    error = lost_worker_error(HEARTBEATS, TASKS, 0, 37, "m/checkpoints/ckpt-30")
    assert isinstance(error, LostWorkerError) and "\n" not in str(error)
    assert str(error).startswith("worker 1 (127.0.0.1:2001) of the cluster in TF_CONFIG was lost at step 37 ")
    assert str(error).endswith("resume from the newest checkpoint that every worker has (this worker's newest: "
                               "m/checkpoints/ckpt-30)")
    chief = lost_worker_error(RESET, TASKS, 1, 41, None)
    assert str(chief).startswith("worker 0 (127.0.0.1:2000) of the cluster in TF_CONFIG was lost at step 41 ")
    assert "none yet: from the start" in str(chief)


def test_other_failures_are_not_a_lost_worker():
    assert lost_worker_error("Input to reshape is a tensor with 3 values", TASKS, 0, 5, None) is None


# Two `rnnsearch train` processes on loopback (large tier: each run starts TensorFlow twice).
TINY_MODEL = dict(embedding_dim=24, hidden_dim=48, maxout_dim=24, alignment_dim=48)
COMMON_FLAGS = ["--optimizer=adam", "--learning_rate=0.005", "--sort_window=5", "--validate_every=0",
                *[f"--{name}={value}" for name, value in TINY_MODEL.items()]]


def _train(data_dir, model_dir, *flags, tf_config=None):
    """A `python -m rnnsearch_tf.train` process (the design card's command) with `TF_CONFIG` if given."""
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    if tf_config:
        environment["TF_CONFIG"] = json.dumps(tf_config)
    command = [sys.executable, "-m", "rnnsearch_tf.train", f"--data_dir={data_dir}", f"--model_dir={model_dir}",
               *COMMON_FLAGS, *flags]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _two_workers(data_dir, model_dir, *flags):
    cluster = {"worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    return [_train(data_dir, model_dir, *flags, tf_config={"cluster": cluster, "task": {"type": "worker", "index": i}})
            for i in range(2)]


def _finish(processes, timeout=600):
    outputs = [process.communicate(timeout=timeout) for process in processes]
    for process, (_, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr[-3000:]
    return [stderr for _, stderr in outputs]


def _copy_with_train_shards(data_dir, folder, copies):
    """`data_dir` with its first training shard only, `copies` times: every worker of `copies` reads the same
    pairs in the same order as one process reads them from one copy."""
    folder.mkdir()
    for path in data_dir.iterdir():
        if not path.name.startswith("train-"):
            shutil.copy(path, folder / path.name)
    metadata = json.loads((data_dir / "metadata.json").read_text())
    first = metadata["splits"]["train"]["shards"][0]
    shards = [dict(first, file=f"train-{index:05d}-of-{copies:05d}.tfrecord.gz") for index in range(copies)]
    for shard in shards:
        shutil.copy(data_dir / first["file"], folder / shard["file"])
    metadata["splits"]["train"]["shards"] = shards
    (folder / "metadata.json").write_text(json.dumps(metadata))
    return folder


def _checkpoint_weights(path):
    reader = tf.train.load_checkpoint(str(path))
    weights = {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
               if name.startswith(("model/", "optimizer/_trainable_variables/")) and "OPTIMIZER_SLOT" not in name}
    assert len(weights) > 10, sorted(weights)
    return weights


@pytest.mark.large
def test_two_workers_update_as_one_process_on_the_same_pairs(toy_data, tmp_path):
    """Why not against `--cpu_replicas=2` on the same shards: each worker reads its own shards and sorts its own
    windows, so the global batches hold other pairs than one pipeline's. With every worker reading a copy of
    the same shard, each global batch of 32 is one process's batch of 16 twice, and the update (gradients
    summed over the workers, divided by the global target tokens) is that process's."""
    single = _train(_copy_with_train_shards(toy_data, tmp_path / "one_shard", 1), tmp_path / "single",
                    "--batch_size=16", "--train_steps=6", "--checkpoint_every=6")
    _finish([single])
    flags = ["--batch_size=32", "--train_steps=6", "--log_every=3", "--checkpoint_every=6"]
    stderr = _finish(_two_workers(_copy_with_train_shards(toy_data, tmp_path / "two_shards", 2),
                                  tmp_path / "multi", *flags))
    assert "MultiWorkerMirroredStrategy: 2 replica(s)" in stderr[0]
    expected = _checkpoint_weights(tmp_path / "single" / "checkpoints" / "ckpt-6")
    chief = _checkpoint_weights(tmp_path / "multi" / "checkpoints" / "ckpt-6")
    worker = _checkpoint_weights(tmp_path / "multi" / "workers" / "1" / "checkpoints" / "ckpt-6")
    assert sorted(chief) == sorted(expected)
    for name in chief:
        np.testing.assert_array_equal(worker[name], chief[name], err_msg=name)
        np.testing.assert_allclose(chief[name], expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert (tmp_path / "multi" / "train").exists() and not (tmp_path / "multi" / "workers" / "1" / "train").exists()
    translator = Translator.from_model_dir(tmp_path / "multi", checkpoint="latest", beam_size=2)
    assert translator.translate(tf.constant(["the cat"]))["translation"].shape == (1,)


def _wait_for(path, processes, timeout=300):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert all(process.poll() is None for process in processes), "a worker ended before the kill"
        assert time.monotonic() < deadline, f"no {path} after {timeout} s"
        time.sleep(0.2)


@pytest.mark.large
def test_sigterm_ends_a_worker_at_once_and_the_other_in_one_line(toy_data, tmp_path):
    """TensorFlow's coordination service sets a SIGTERM handler that only records the signal: a worker sent
    SIGTERM (docker stop, Slurm) trained on to its last step. A worker cannot stop alone, so it ends at once."""
    model_dir = tmp_path / "multi"
    chief, worker = _two_workers(toy_data, model_dir, "--batch_size=32", "--train_steps=400", "--log_every=10",
                                 "--checkpoint_every=10")
    _wait_for(model_dir / "workers" / "1" / "checkpoints" / "ckpt-10.index", [chief, worker])
    worker.send_signal(signal.SIGTERM)
    worker.communicate(timeout=60)
    assert worker.returncode == -signal.SIGTERM
    _, stderr = chief.communicate(timeout=300)
    assert chief.returncode == 1 and " of the cluster in TF_CONFIG was lost at step " in stderr, stderr[-3000:]


@pytest.mark.large
def test_a_killed_worker_stops_the_other_in_one_line_and_both_resume(toy_data, tmp_path):
    model_dir = tmp_path / "multi"
    flags = ["--batch_size=32", "--train_steps=400", "--log_every=10", "--checkpoint_every=10"]
    chief, worker = _two_workers(toy_data, model_dir, *flags)
    _wait_for(model_dir / "workers" / "1" / "checkpoints" / "ckpt-20.index", [chief, worker])
    worker.send_signal(signal.SIGKILL)
    killed_at = time.monotonic()
    _, stderr = chief.communicate(timeout=300)
    assert chief.returncode == 1 and time.monotonic() - killed_at < 120, stderr[-3000:]
    message = stderr.strip().splitlines()[-1]
    assert message.startswith("error: worker 1 (127.0.0.1:") and " of the cluster in TF_CONFIG was lost at step " in message
    newest = _newest_step(model_dir / "checkpoints")
    assert message.endswith(f"resume from the newest checkpoint that every worker has (this worker's newest: "
                            f"{model_dir / 'checkpoints' / f'ckpt-{newest}'})")
    # As if the kill had cut the worker's last save short: its newest checkpoint does not read, and the chief
    # must go back to the step before it too.
    worker_checkpoints = model_dir / "workers" / "1" / "checkpoints"
    cut_short = _newest_step(worker_checkpoints)
    next(worker_checkpoints.glob(f"ckpt-{cut_short}.data-*")).write_bytes(b"cut short")
    expected = min(newest, cut_short - 10)
    resumed = _finish(_two_workers(toy_data, model_dir, *[flag.replace("400", str(newest + 10)) for flag in flags]))
    for stderr in resumed:
        assert re.search(rf"Resumed from \S+/ckpt-{expected} at step {expected}\b", stderr), stderr[-3000:]
    if newest > expected:  # the chief read its newest checkpoint, then went back to the worker's
        assert f"resuming from {model_dir / 'checkpoints' / f'ckpt-{expected}'}, the newest step every worker has" in (
            resumed[0])
    chief_weights = _checkpoint_weights(model_dir / "checkpoints" / f"ckpt-{newest + 10}")
    worker_weights = _checkpoint_weights(worker_checkpoints / f"ckpt-{newest + 10}")
    for name in chief_weights:
        np.testing.assert_array_equal(worker_weights[name], chief_weights[name], err_msg=name)


def _newest_step(folder):
    return max(int(path.stem.split("-")[1]) for path in folder.glob("ckpt-*.index"))
