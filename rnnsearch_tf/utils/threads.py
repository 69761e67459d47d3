"""How TensorFlow's threads are shared between batches decoded at once (`BatchTranslator(workers=...)`)."""

import os

import tensorflow as tf


def available_cores():
    """The cores this process may run on (its CPU affinity where the OS tells it, else all)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def share_cores(workers):
    """Gives each of `workers` batches decoded at once its share of the cores: TensorFlow's intra-op
    threads (those that split one op) become `cores // workers`, at least 1. With `workers` 1 nothing
    changes. Call it before TensorFlow runs its first op, as a command-line tool does at its start.

    A beam search step is many small ops: split over all cores, each waits for its slowest thread, and
    batches in flight contend for the same threads; one core's share per batch keeps every core busy.

    Returns:
        The intra-op threads set, or None where nothing was set.

    Raises:
        RuntimeError: TensorFlow already ran an op in this process (its threads are fixed then).
    """
    if workers <= 1:
        return None
    threads = max(1, available_cores() // workers)
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    except RuntimeError as error:
        raise RuntimeError(f"share_cores({workers}) must run before TensorFlow's first op: {error}") from error
    return threads
