"""Choosing the tf.distribute strategy of a training run."""

import json
import os
import socket
import time

import tensorflow as tf
from absl import logging

from rnnsearch_tf.training.stop_request import StopRequest

# What `make_strategy` reads of TF_CONFIG: the cluster's jobs and this process's task in it; TensorFlow's resolver
# also reads "rpc_layer" and "environment", which schedulers write, and are left to it.
TF_CONFIG_KEYS = ("cluster", "task")
TF_CONFIG_PASSED = ("rpc_layer", "environment")
TF_CONFIG_JOBS = ("chief", "worker")


def read_tf_config(text):
    """The cluster `{job: [address, ...]}` and this task `(job, index)` that TF_CONFIG's `text` names; ({}, None)
    without one. Raises ValueError, naming TF_CONFIG and the field, for what TensorFlow would misread: invalid JSON,
    keys or jobs it does not use (a typo such as "workers" made every process train alone, as a chief), a job that
    is not a list of "host:port", a missing or out-of-range task, an address named twice."""
    if not text or not text.strip():
        return {}, None
    usage = (f"it reads {', '.join(TF_CONFIG_KEYS)}: {{\"cluster\": {{\"chief\"/\"worker\": [\"host:port\", ...]}}, "
             "\"task\": {\"type\": \"worker\", \"index\": 0}}")
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not JSON ({error}); {usage}") from None
    known = set(TF_CONFIG_KEYS + TF_CONFIG_PASSED)
    if not isinstance(config, dict) or set(config) - known:
        unused = sorted(set(config) - known) if isinstance(config, dict) else config
        raise ValueError(f"TF_CONFIG has {unused}, which training does not use; {usage}")
    cluster = config.get("cluster") or {}
    if not isinstance(cluster, dict) or set(cluster) - set(TF_CONFIG_JOBS):
        unused = sorted(set(cluster) - set(TF_CONFIG_JOBS)) if isinstance(cluster, dict) else cluster
        raise ValueError(f"TF_CONFIG's cluster has {unused}, which training does not use; {usage}")
    for job, addresses in cluster.items():
        if not isinstance(addresses, list) or not all(_port(address) for address in addresses):
            raise ValueError(f"TF_CONFIG's cluster.{job} is {json.dumps(addresses)}, not a list of \"host:port\"; "
                             f"{usage}")
    addresses = [address for job in TF_CONFIG_JOBS for address in cluster.get(job, [])]
    if len(set(addresses)) < len(addresses):
        raise ValueError(f"TF_CONFIG's cluster names an address twice ({', '.join(addresses)}); {usage}")
    if not cluster:
        return {}, None
    task = config.get("task")
    job, index = (task.get("type"), task.get("index")) if isinstance(task, dict) else (None, None)
    if job not in cluster or not isinstance(index, int) or not 0 <= index < len(cluster[job]):
        raise ValueError(f"TF_CONFIG's task is {json.dumps(task)}, not a task of its cluster "
                         f"({', '.join(f'{job} 0-{len(tasks) - 1}' for job, tasks in cluster.items())}); {usage}")
    return cluster, (job, index)


def _port(address):
    """The port of "host:port", or None."""
    host, _, port = str(address).rpartition(":")
    return int(port) if host and port.isdigit() else None


def make_strategy(cpu_replicas=None):
    """MultiWorkerMirroredStrategy when TF_CONFIG names several workers, else MirroredStrategy.

    MirroredStrategy uses every local GPU, or the CPU. With `cpu_replicas`, the CPU is split into that
    many logical devices with one replica each; this must happen before TensorFlow initialises its
    devices, i.e. before any other TensorFlow work in the process. TF_CONFIG is checked first (`read_tf_config`,
    and this task's port free); creating MultiWorkerMirroredStrategy waits for every other worker, saying so, and
    SIGINT or SIGTERM end the process while it waits (`_wait_for_other_tasks`).
    """
    cluster, task = read_tf_config(os.environ.get("TF_CONFIG"))
    if sum(len(tasks) for tasks in cluster.values()) > 1:
        job, index = task
        _wait_for_other_tasks(cluster[job][index], [(f"{other} {number}", address) for other in TF_CONFIG_JOBS
                                                    for number, address in enumerate(cluster.get(other, []))
                                                    if (other, number) != task])
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        StopRequest.restore_sigterm()  # TensorFlow's coordination service took SIGTERM
        return strategy
    if cpu_replicas:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * cpu_replicas)
        return tf.distribute.MirroredStrategy([f"/cpu:{index}" for index in range(cpu_replicas)])
    return tf.distribute.MirroredStrategy()


def _wait_for_other_tasks(own_address, others):
    """Waits until every other task's address (`(name, address)` of `others`) accepts connections, saying so, while
    listening on `own_address` for theirs: in Python, where SIGINT and SIGTERM end the process, unlike
    TensorFlow's own wait (it holds the interpreter, and its coordination service takes SIGTERM). Raises ValueError
    when this task's port is taken (another process, or another worker of the same index): TensorFlow's own error
    names neither the address nor TF_CONFIG."""
    family = socket.AF_INET6 if own_address.startswith("[") else socket.AF_INET
    with socket.socket(family) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed connection's TIME_WAIT is no user
        try:
            listener.bind(("", _port(own_address)))
        except OSError as error:
            raise ValueError(f"TF_CONFIG: this task's address {own_address} cannot be listened on "
                             f"({error.strerror}): another process, or another worker of the same task index, holds "
                             "its port") from None
        listener.listen(len(others))
        logging.info("waiting for %s ...", ", ".join(f"{name} ({address})" for name, address in others))
        while others:
            others = [(name, address) for name, address in others if not _accepts(address)]
            if others:
                time.sleep(0.5)


def _accepts(address):
    """Whether "host:port" accepts a connection now."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=2).close()
    except OSError:
        return False
    return True


def strategy_name(strategy):
    """The public name of a strategy of `make_strategy` (MultiWorkerMirroredStrategy's class is named
    CollectiveAllReduceStrategy)."""
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return "MultiWorkerMirroredStrategy"
    return type(strategy).__name__
