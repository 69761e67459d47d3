"""One version of a SavedModel base path (the newest unless told), called the way TensorFlow Serving's Predict
calls it."""

import concurrent.futures
import time

import tensorflow as tf
from absl import logging
from google.protobuf import message
from tensorflow_serving.apis import prediction_log_pb2

from data_pipeline.export_dir import ExportDir, ExportSettings
from serving.batching import RequestBatcher
from serving.metrics import ServerMetrics

WARMUP_THREADS = 2  # the peer-size export's 7 requests in 2.0 s against 2.8 s one at a time (docs/performance.md)


class Servable:
    """A loaded SavedModel version whose signatures are called with NumPy inputs checked like TF Serving.

    Before it answers anything it replays the version's warm-up requests (`ExportVersion.warmup_file`, TF
    Serving's format, written by `serving/export.py`), so the first client does not pay for the graph's
    first run.

    Args:
        model_base_path: folder of integer version subfolders (`serving/export.py` writes them).
        model_name: the name requests must use.
        batching: `serving.batching.BatchingParameters` to join concurrent requests of signatures
            whose inputs are all vectors of rows (`translate`, `score`) into batches; None: each
            request runs on its own.
        version: the version (subfolder) to load; None: the newest (`ExportDir.newest_version`).
        metrics: `serving.metrics.ServerMetrics` counting the load, the warm-up and the batches.

    Example:
    >>> servable = Servable("exports/rnnsearch", "rnnsearch")
    >>> servable.predict("translate", {"text": np.array([b"A sentence."], object)})["translation"]
    """

    def __init__(self, model_base_path, model_name, batching=None, version=None, metrics=None):
        self.model_name = model_name
        export_dir = ExportDir(model_base_path)
        self.export_version = export_dir.newest_version() if version is None else export_dir.version(int(version))
        self.version, self.path = self.export_version.number, self.export_version.path
        self.metrics = metrics or ServerMetrics()
        started = time.perf_counter()
        try:
            saved_model = self.export_version.read_saved_model()
            self.loaded = self.export_version.load(saved_model)
        except Exception:
            self.metrics.record_load(self.path, "fail", time.perf_counter() - started)
            raise
        self.metrics.record_load(self.path, "success", time.perf_counter() - started)
        self.signature_defs = saved_model.meta_graphs[0].signature_def
        # What the export recorded (`rnnsearch export`): languages, codecs, search options.
        self.settings = ExportSettings.read(self.loaded)
        self.maximum_batch_size = self.settings.get("maximum_batch_size")
        self.batcher = None
        if batching:
            self.batcher = RequestBatcher(self._run, batching.capped(self.maximum_batch_size), self._record_batch)
        self.warmup_requests = self._warm_up()

    def _record_batch(self, signature_name, rows, queuing_seconds):
        self.metrics.record_batch(self.model_name, signature_name, rows, queuing_seconds)

    def _warm_up(self):
        """Replays the warm-up records of the version folder; returns how many ran."""
        path = self.export_version.warmup_file
        if not tf.io.gfile.exists(path):
            return 0
        started = time.perf_counter()
        try:
            count = self._replay(path)
        except ValueError:
            self.metrics.record_warmup(self.path, "INVALID_ARGUMENT", time.perf_counter() - started)
            raise
        self.metrics.record_warmup(self.path, "OK", time.perf_counter() - started)
        logging.info("warmed up with %d requests from %s in %.2f s", count, path, time.perf_counter() - started)
        return count

    def _replay(self, path):
        """Runs every PredictionLog record of the warm-up file at `path`, each read and checked first, then
        `WARMUP_THREADS` at a time (a signature's first run is mostly TensorFlow instantiating its graph, which two
        signatures do at once: TF Serving's `num_model_warmup_threads`); returns how many."""
        requests = []
        for count, record in enumerate(tf.data.TFRecordDataset(path).as_numpy_iterator(), 1):
            try:
                log = prediction_log_pb2.PredictionLog.FromString(record)
            except message.DecodeError as error:
                raise ValueError(f"{path}: record {count} is not a PredictionLog: {error}") from None
            if not log.HasField("predict_log"):
                raise ValueError(f"{path}: record {count} is not a predict_log; only Predict is served")
            request = log.predict_log.request
            requests.append((count, request.model_spec.signature_name,
                             {name: tf.make_ndarray(proto) for name, proto in request.inputs.items()}))

        def run(numbered):
            count, signature_name, inputs = numbered
            try:
                self.predict(signature_name, inputs)
            except (ValueError, tf.errors.OpError) as error:
                raise ValueError(f"{path}: warm-up request {count} failed: {error}") from error

        with concurrent.futures.ThreadPoolExecutor(WARMUP_THREADS, thread_name_prefix="warm-up") as pool:
            list(pool.map(run, requests))  # the first failure, in the file's order, is raised
        return len(requests)

    def close(self):
        """Stops the batch threads (after the waiting batches have run)."""
        if self.batcher is not None:
            self.batcher.close()

    def input_specs(self, signature_name):
        """{input name: TensorSpec} of a signature; ValueError naming the known ones if it is unknown."""
        if signature_name not in self.loaded.signatures:
            raise ValueError(
                f"signature {signature_name!r} not found; this model has {sorted(self.loaded.signatures)}"
            )
        return self.loaded.signatures[signature_name].structured_input_signature[1]

    def predict(self, signature_name, inputs, output_filter=()):
        """Runs one signature.

        Args:
            signature_name: e.g. "serving_default"; "" means "serving_default".
            inputs: {input name: NumPy array}, exactly the signature's inputs.
            output_filter: names of the outputs to return; empty for all.

        Returns:
            {output name: NumPy array}.

        Raises:
            ValueError: unknown signature or output, missing or unknown inputs, wrong dtype or shape, more rows
                than the export's `maximum_batch_size` (checked before the graph runs, in one line).
            tf.errors.OpError: the graph refused the input (e.g. `InvalidArgumentError` from an assertion).
        """
        signature_name = signature_name or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        specs = self.input_specs(signature_name)
        if set(inputs) != set(specs):
            raise ValueError(
                f"signature {signature_name!r} takes inputs {sorted(specs)}, got {sorted(inputs)}"
            )
        tensors = {}
        for name, value in inputs.items():
            spec = specs[name]
            tensor = tf.convert_to_tensor(value)
            if tensor.dtype != spec.dtype or not spec.shape.is_compatible_with(tensor.shape):
                raise ValueError(
                    f"input {name!r} of signature {signature_name!r} must be {spec.dtype.name} of shape "
                    f"{spec.shape}, got {tensor.dtype.name} of shape {tensor.shape}"
                )
            if self.maximum_batch_size and tensor.shape.rank and tensor.shape[0] > self.maximum_batch_size:
                raise ValueError(f"input {name!r} holds {tensor.shape[0]} sentences; this model takes at most "
                                 f"{self.maximum_batch_size} per request")
            tensors[name] = tensor
        output_names = self.loaded.signatures[signature_name].structured_outputs
        unknown = sorted(set(output_filter) - set(output_names))
        if unknown:
            raise ValueError(f"signature {signature_name!r} has no outputs {unknown}; it has {sorted(output_names)}")
        if self.batcher is not None and specs and all(spec.shape.rank == 1 for spec in specs.values()):
            outputs = self.batcher(signature_name, {name: tensor.numpy() for name, tensor in tensors.items()})
        else:
            outputs = self._run(signature_name, tensors)
        return {name: outputs[name] for name in output_filter or outputs}

    def _run(self, signature_name, inputs):
        """One call of a signature: {name: tensor or array} in, {name: array} out."""
        outputs = self.loaded.signatures[signature_name](
            **{name: tf.convert_to_tensor(value) for name, value in inputs.items()}
        )
        return {name: value.numpy() for name, value in outputs.items()}
