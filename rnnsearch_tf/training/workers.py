"""The workers of a multi-worker run: who they are, the step they resume at, and naming one that is lost."""

import re

import tensorflow as tf

# How TensorFlow names a task in its errors, e.g. "/job:worker/replica:0/task:1".
_TASK = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+)")
# What a collective op says when another task has gone (the coordination service's missed heartbeats, or
# the connection to it reset).
_LOST = ("unhealthy", "heartbeat", "connection reset", "socket closed", "failed to connect",
         "collective ops is aborted")


class LostWorkerError(RuntimeError):
    """Another worker of a multi-worker run stopped (killed, crashed, unreachable): this one stops too."""


class Workers:
    """This process's place among the workers of `strategy` (`MultiWorkerMirroredStrategy` with a
    `TF_CONFIG` cluster; otherwise one worker).

    TensorFlow's coordination service (on the first task) watches every task's heartbeats: when a worker is
    killed, the collective ops of the others fail within seconds, naming it, instead of waiting forever.
    `lost_worker_error` turns that failure into one line naming the worker's address and how to resume.

    Args:
        strategy: the `tf.distribute.Strategy` the model was built under.
    """

    def __init__(self, strategy):
        self.strategy = strategy
        resolver = getattr(strategy, "cluster_resolver", None)
        if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or resolver is None:
            self.tasks, self.index = [("worker", 0, "this process")], 0
            return
        spec = resolver.cluster_spec()
        jobs = [job for job in ("chief", "worker") if job in spec.jobs]
        self.tasks = [(job, index, address) for job in jobs for index, address in enumerate(spec.job_tasks(job))]
        self.index = [task[:2] for task in self.tasks].index((resolver.task_type, resolver.task_id))

    @property
    def count(self):
        return len(self.tasks)

    @property
    def is_chief(self):
        return self.index == 0

    def gather(self, values):
        """The integers `values` of every worker (a collective op: all workers call it together), in worker order."""
        if self.count == 1:
            return [list(values)]
        value = self.strategy.run(lambda: tf.constant([values], tf.int64))  # [1, len(values)] per replica
        rows = [[int(each) for each in row] for row in self.strategy.gather(value, axis=0).numpy()]
        return rows[::len(rows) // self.count]  # one row per worker

    def lost_worker_error(self, error, step, checkpoint):
        """`LostWorkerError` for a `tf.errors.OpError` of a collective op that another worker's loss caused,
        else None (a single worker, or another failure)."""
        if self.count == 1:
            return None
        return lost_worker_error(str(error), self.tasks, self.index, step, checkpoint)


def lost_worker_error(message, tasks, index, step, checkpoint):
    """`LostWorkerError` naming the tasks (`(job, index, address)` of `tasks`, not this one, `tasks[index]`)
    that TensorFlow's error `message` names, when it is one of a lost task; else None."""
    if not any(sign in message.lower() for sign in _LOST):
        return None
    named = [(job, int(task)) for job, task in _TASK.findall(message)]
    lost = [f"{job} {task} ({address})" for job, task, address in tasks
            if (job, task) in named and (job, task) != tasks[index][:2]]
    who = ", ".join(lost) or "another worker"
    first_line = message.strip().splitlines()[0][:200]
    return LostWorkerError(
        f"{who} of the cluster in TF_CONFIG was lost at step {step} ({first_line}); start the same command on "
        f"every worker again to resume from the newest checkpoint that every worker has (this worker's newest: "
        f"{checkpoint or 'none yet: from the start'})"
    )
