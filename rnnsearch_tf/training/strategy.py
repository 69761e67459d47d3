"""Choosing the tf.distribute strategy of a training run."""

import json
import os

import tensorflow as tf


def make_strategy(cpu_replicas=None):
    """MultiWorkerMirroredStrategy when TF_CONFIG names several workers, else MirroredStrategy.

    MirroredStrategy uses every local GPU, or the CPU. With `cpu_replicas`, the CPU is split into that
    many logical devices with one replica each; this must happen before TensorFlow initialises its
    devices, i.e. before any other TensorFlow work in the process.
    """
    cluster = json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster", {})
    if len(cluster.get("worker", [])) + len(cluster.get("chief", [])) > 1:
        return tf.distribute.MultiWorkerMirroredStrategy()
    if cpu_replicas:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * cpu_replicas)
        return tf.distribute.MirroredStrategy([f"/cpu:{index}" for index in range(cpu_replicas)])
    return tf.distribute.MirroredStrategy()


def strategy_name(strategy):
    """The public name of a strategy of `make_strategy` (MultiWorkerMirroredStrategy's class is named
    CollectiveAllReduceStrategy)."""
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return "MultiWorkerMirroredStrategy"
    return type(strategy).__name__
