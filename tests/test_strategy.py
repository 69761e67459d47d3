"""rnnsearch_tf/training/strategy.py: make_strategy gives MirroredStrategy unless TF_CONFIG names several
workers, splits the CPU into `cpu_replicas` replicas (in a fresh process, as it must come before any other
TensorFlow work), and strategy_name gives the public names."""

import json
import signal
import socket
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from conftest import REPO_ROOT
from rnnsearch_tf.training.strategy import make_strategy, read_tf_config, strategy_name


@pytest.mark.parametrize("tf_config", [
    None,
    {"cluster": {"worker": ["localhost:12345"]}, "task": {"type": "worker", "index": 0}},
    {"cluster": {"chief": ["localhost:12345"]}, "task": {"type": "chief", "index": 0}},
])
def test_one_machine_gets_a_mirrored_strategy_over_its_devices(monkeypatch, tf_config):
    if tf_config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    strategy = make_strategy()
    assert type(strategy) is tf.distribute.MirroredStrategy and strategy_name(strategy) == "MirroredStrategy"
    assert strategy.num_replicas_in_sync == max(1, len(tf.config.list_logical_devices("GPU")))


_CPU_REPLICAS = """
import tensorflow as tf
from rnnsearch_tf.training.strategy import make_strategy, read_tf_config, strategy_name
strategy = make_strategy(cpu_replicas=2)
replica_ids = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group + 10)
print(strategy_name(strategy), strategy.num_replicas_in_sync, sorted(strategy.extended.worker_devices),
      int(strategy.reduce("SUM", replica_ids, axis=None)))
multi_worker = tf.distribute.MultiWorkerMirroredStrategy()
print(type(multi_worker).__name__, strategy_name(multi_worker))
"""


def test_cpu_replicas_split_the_cpu_and_multi_worker_gets_its_public_name():
    completed = subprocess.run(
        [sys.executable, "-c", _CPU_REPLICAS], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
        env={**{name: value for name, value in os.environ.items() if name != "TF_CONFIG"},
             "PYTHONPATH": str(REPO_ROOT), "CUDA_VISIBLE_DEVICES": ""},
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    replicas, multi_worker = completed.stdout.splitlines()[-2:]
    assert replicas == (
        "MirroredStrategy 2 ['/job:localhost/replica:0/task:0/device:CPU:0', "
        "'/job:localhost/replica:0/task:0/device:CPU:1'] 21"
    )
    assert multi_worker == "CollectiveAllReduceStrategy MultiWorkerMirroredStrategy"


_TWO = {"cluster": {"worker": ["127.0.0.1:18921", "127.0.0.1:18922"]}, "task": {"type": "worker", "index": 0}}


@pytest.mark.parametrize("text, field", [
    ("{cluster: ", "TF_CONFIG is not JSON"),
    (json.dumps({**_TWO, "cluster": {"workers": _TWO["cluster"]["worker"]}}), r"TF_CONFIG's cluster has \['workers'\]"),
    (json.dumps({**_TWO, "cluster": {**_TWO["cluster"], "ps": ["h:1"]}}), r"TF_CONFIG's cluster has \['ps'\]"),
    (json.dumps({**_TWO, "cluster": {"worker": "127.0.0.1:18921"}}), "TF_CONFIG's cluster.worker is \"127.0.0.1:"),
    (json.dumps({"cluster": _TWO["cluster"]}), "TF_CONFIG's task is null, not a task of its cluster"),
    (json.dumps({**_TWO, "task": {"type": "worker", "index": 2}}), "TF_CONFIG's task is .* \\(worker 0-1\\)"),
    (json.dumps({**_TWO, "extra": 1}), r"TF_CONFIG has \['extra'\]"),
])
def test_a_tf_config_training_would_misread_is_refused_in_one_line(text, field):
    with pytest.raises(ValueError, match=f"^{field}.*it reads cluster, task") as raised:
        read_tf_config(text)
    assert "\n" not in str(raised.value)


def test_the_keys_tensorflows_resolver_reads_and_schedulers_write_are_left_to_it():
    text = json.dumps({**_TWO, "rpc_layer": "grpc", "environment": "cloud"})
    assert read_tf_config(text) == (_TWO["cluster"], ("worker", 0))


def test_a_busy_port_of_this_task_is_refused_naming_its_address(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(_TWO))
    with socket.socket() as busy:
        busy.bind(("", 18921))
        busy.listen(1)
        with pytest.raises(ValueError, match=r"^TF_CONFIG: this task's address 127.0.0.1:18921 cannot be listened on"):
            make_strategy()


@pytest.mark.large
def test_a_worker_waiting_for_another_says_so_and_sigterm_ends_it():
    process = subprocess.Popen(
        [sys.executable, "-c", "from absl import logging; from rnnsearch_tf.training.strategy import make_strategy; "
                               "logging.set_verbosity('info'); make_strategy()"],
        cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TF_CONFIG": json.dumps(_TWO), "PYTHONPATH": str(REPO_ROOT), "CUDA_VISIBLE_DEVICES": ""},
    )
    try:
        for line in process.stderr:
            if "waiting for worker 1 (127.0.0.1:18922) ..." in line:
                break
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == -signal.SIGTERM
    finally:
        process.kill()
