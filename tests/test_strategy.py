"""rnnsearch_tf/training/strategy.py: make_strategy gives MirroredStrategy unless TF_CONFIG names several
workers, splits the CPU into `cpu_replicas` replicas (in a fresh process, as it must come before any other
TensorFlow work), and strategy_name gives the public names."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from conftest import REPO_ROOT
from rnnsearch_tf.training.strategy import make_strategy, strategy_name


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
from rnnsearch_tf.training.strategy import make_strategy, strategy_name
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
