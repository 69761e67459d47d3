"""utils.threads: TensorFlow's intra-op threads shared between decoding workers, in fresh processes (this
one's TensorFlow threads are fixed by its first op)."""

import os
import subprocess
import sys

from conftest import REPO_ROOT

PROGRAM = """
import tensorflow as tf
from rnnsearch_tf.utils.threads import available_cores, share_cores
print(available_cores(), share_cores({workers}), tf.config.threading.get_intra_op_parallelism_threads())
tf.constant(1.0).numpy()
try:
    share_cores({workers} + 1)
except RuntimeError as error:
    print(error)
"""


def _run(workers):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run([sys.executable, "-c", PROGRAM.format(workers=workers)], capture_output=True, text=True,
                            env=environment, cwd=REPO_ROOT, check=True)
    return result.stdout.splitlines()


def test_each_worker_gets_its_share_of_the_cores():
    cores, threads, intra_op = _run(workers=2)[0].split()
    assert int(cores) == len(os.sched_getaffinity(0))
    assert int(threads) == int(intra_op) == max(1, int(cores) // 2)


def test_one_worker_keeps_tensorflows_default_and_late_calls_are_refused():
    first, error = _run(workers=1)
    assert first.split()[1:] == ["None", "0"]  # 0: TensorFlow's own choice
    assert "share_cores(2) must run before TensorFlow's first op" in error
