"""TensorFlow Serving's request batching for the local server: concurrent requests decoded as one batch.

A beam search over 32 sentences costs little more than over one (the steps are the same; the matrix
products grow), so a server that answers 32 one-sentence clients one request at a time wastes most of
its time. With batching, requests for the same signature that arrive within `batch_timeout_micros` of
each other are joined along their first dimension (up to `max_batch_size` rows), run once, and each
request gets its own rows back. The parameters and the file that holds them are TF Serving's
(`--enable_batching --batching_parameters_file=FILE`), so one file configures both servers.
"""

import collections
import dataclasses
import re
import threading
import time

import numpy as np
import tensorflow as tf

# Fields of TF Serving's BatchingParameters that the local server reads, and those it accepts and ignores.
_IGNORED_FIELDS = ("thread_pool_name", "allowed_batch_sizes", "pad_variable_length_inputs",
                   "enable_large_batch_splitting", "max_execution_batch_size")
_LINE = re.compile(r"^\s*(\w+)\s*(?:\{\s*value\s*:\s*(\S+?)\s*\}|:\s*(\S+?))\s*$")


@dataclasses.dataclass(frozen=True)
class BatchingParameters:
    """TF Serving's `BatchingParameters` (its text format in `--batching_parameters_file`).

    Args:
        max_batch_size: most rows (sentences) run at once; a larger request runs alone.
        batch_timeout_micros: how long the first request of a batch waits for others to join.
        num_batch_threads: batches run at once. The local server gives each its share of the cores
            (`utils.threads.share_cores`, as `--decode_workers` does offline): a beam-search step is many
            small ops, and two batches on one core each keep both cores busier than one batch split over
            both. TF Serving's own advice is one thread per core.
        max_enqueued_batches: batches waiting at most; a request that would open one more is refused
            with UNAVAILABLE (gRPC) or 503 (REST) instead of waiting without bound.

    The defaults were measured on 2 cores with 32 one-sentence clients (docs/performance.md, "the local
    server"): two threads of batches of at most 16 after 2 ms decoded 1.4x the sentences/s of one thread
    of 32 after 5 ms.
    """

    max_batch_size: int = 16
    batch_timeout_micros: int = 2000
    num_batch_threads: int = 2
    max_enqueued_batches: int = 16

    def __post_init__(self):
        for field in dataclasses.fields(self):
            minimum = 0 if field.name == "batch_timeout_micros" else 1
            if getattr(self, field.name) < minimum:
                raise ValueError(f"BatchingParameters.{field.name} must be at least {minimum}, got "
                                 f"{getattr(self, field.name)}")

    @classmethod
    def from_text(cls, text, path="<text>"):
        """Parses `name { value: N }` lines (TF Serving's file); ValueError naming the line otherwise."""
        values = {}
        names = {field.name for field in dataclasses.fields(cls)}
        for number, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0]
            if not line.strip():
                continue
            match = _LINE.match(line)
            if not match:
                raise ValueError(f"{path}:{number}: expected 'name {{ value: N }}', got {line.strip()!r}")
            name, value = match.group(1), match.group(2) or match.group(3)
            if name in _IGNORED_FIELDS:
                continue
            if name not in names:
                raise ValueError(f"{path}:{number}: unknown batching parameter {name!r}; known: {sorted(names)}")
            try:
                values[name] = int(value)
            except ValueError:
                raise ValueError(f"{path}:{number}: {name} must be an integer, got {value!r}") from None
        try:
            return cls(**values)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as stream:
            return cls.from_text(stream.read(), path)

    def capped(self, maximum):
        """These parameters with `max_batch_size` at most `maximum` (an export's `maximum_batch_size`: a batch
        over it would be refused whole); `maximum` None: unchanged."""
        if maximum is None or self.max_batch_size <= maximum:
            return self
        return dataclasses.replace(self, max_batch_size=maximum)

    def to_text(self):
        """The file TF Serving's `--batching_parameters_file` and the local server read."""
        return "".join(f"{field.name} {{ value: {getattr(self, field.name)} }}\n"
                       for field in dataclasses.fields(self))


class _Batch:
    """Requests of one signature waiting to run together."""

    def __init__(self, signature_name):
        self.signature_name = signature_name
        self.requests = []  # [(inputs, rows, _Answer)]
        self.rows = 0
        self.opened = time.monotonic()


class _Answer:
    """Where a batch thread leaves one request's outputs (or error) for the request's thread."""

    def __init__(self):
        self.enqueued = time.monotonic()
        self.done = threading.Event()
        self.outputs = None
        self.error = None


class RequestBatcher:
    """Joins concurrent calls of `run(signature_name, inputs)` into batches, as TF Serving's batching does.

    Every input of a batched signature is a vector `[rows]` (text in, one row per sentence); the inputs of
    a batch are concatenated, `run` is called once, and each output is split back by rows (its other
    dimensions are the batch's: a request may get more "" or 0 padding than it would alone). Requests are
    answered in their own threads; a failing batch fails each of its requests with the same error.

    Args:
        run: `run(signature_name, {name: array}) -> {name: array}`, each output with the rows first.
        parameters: `BatchingParameters`.
        on_batch: called as `on_batch(signature_name, rows, queuing_seconds)` before each batch runs, with the
            seconds each of its requests waited in the queue (the server's metrics); None: nothing is called.
    """

    def __init__(self, run, parameters, on_batch=None):
        self.run = run
        self.parameters = parameters
        self.on_batch = on_batch
        self._waiting = collections.deque()  # _Batch, oldest first
        self._condition = threading.Condition()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"batch-{index}", daemon=True)
                         for index in range(parameters.num_batch_threads)]
        for thread in self._threads:
            thread.start()

    def __call__(self, signature_name, inputs):
        """The outputs of `run` for `inputs` (rows first), run in a batch with other requests; ValueError for
        inputs of different row counts (each request's rows are joined to another's by position), as TF
        Serving's batching session refuses them."""
        counts = {name: len(value) for name, value in inputs.items()}
        if len(set(counts.values())) > 1:
            raise ValueError("Batching session Run() input tensors must have equal 0th-dimension size; got "
                             + ", ".join(f"{name!r} {count}" for name, count in sorted(counts.items())))
        rows = next(iter(counts.values()))
        if not 0 < rows <= self.parameters.max_batch_size:
            return self.run(signature_name, inputs)
        answer = _Answer()
        with self._condition:
            if self._closed:
                raise tf.errors.UnavailableError(None, None, "the server is shutting down")
            self._join(signature_name, inputs, rows, answer)
            self._condition.notify_all()
        answer.done.wait()
        if answer.error is not None:
            raise answer.error
        return answer.outputs

    def _join(self, signature_name, inputs, rows, answer):
        """Adds a request to the newest batch of its signature with room, or opens a batch."""
        for batch in reversed(self._waiting):
            if batch.signature_name == signature_name and batch.rows + rows <= self.parameters.max_batch_size:
                break
        else:
            if len(self._waiting) >= self.parameters.max_enqueued_batches:
                raise tf.errors.UnavailableError(
                    None, None, f"the batch queue is full ({self.parameters.max_enqueued_batches} batches "
                    "waiting): retry later")
            batch = _Batch(signature_name)
            self._waiting.append(batch)
        batch.requests.append((inputs, rows, answer))
        batch.rows += rows

    @property
    def waiting_batches(self):
        """Batches waiting for a batch thread."""
        with self._condition:
            return len(self._waiting)

    def close(self):
        """Stops the batch threads once the waiting batches have run."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()
        for thread in self._threads:
            thread.join()

    def _work(self):
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            self._run_batch(batch)

    def _next_batch(self):
        """The oldest batch once it is full or its timeout has passed (None once closed and empty)."""
        timeout = self.parameters.batch_timeout_micros / 1e6
        with self._condition:
            while True:
                if self._waiting:
                    batch = self._waiting[0]
                    left = batch.opened + timeout - time.monotonic()
                    if left <= 0 or batch.rows >= self.parameters.max_batch_size or self._closed:
                        return self._waiting.popleft()
                    self._condition.wait(left)
                elif self._closed:
                    return None
                else:
                    self._condition.wait()

    def _run_batch(self, batch):
        inputs = {name: np.concatenate([request_inputs[name] for request_inputs, _, _ in batch.requests])
                  for name in batch.requests[0][0]}
        if self.on_batch is not None:
            started = time.monotonic()
            waited = [started - answer.enqueued for _, _, answer in batch.requests]
            self.on_batch(batch.signature_name, batch.rows, waited)
        try:
            outputs = self.run(batch.signature_name, inputs)
        except Exception as error:  # every request of the batch gets the error
            for _, _, answer in batch.requests:
                answer.error = error
                answer.done.set()
            return
        start = 0
        for _, rows, answer in batch.requests:
            answer.outputs = {name: value[start : start + rows] for name, value in outputs.items()}
            start += rows
            answer.done.set()
