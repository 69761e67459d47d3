"""What `rnnsearch serve` counts, in Prometheus' text format at TF Serving's path (`--monitoring_config_file`).

Names are TF Serving's where it has the metric: TensorFlow's monitoring name with every character that is not
a letter, digit or '_' turned into ':' (tensorflow/serving's `util/prometheus_exporter.cc`), so
`/tensorflow/serving/request_count` is `:tensorflow:serving:request_count`; their labels and units
(microseconds) and bucket limits are TF Serving's too. prometheus_client writes a counter `NAME` as
`NAME_total` (and `NAME_created`): the counters read `:tensorflow:serving:request_count_total`, where
TF Serving writes `:tensorflow:serving:request_count`. What TF Serving does not count (per signature and
version) carries the prefix `:rnnsearch:serving:`; `processed_batch_size` has labels TF Serving's lacks (the
model and signature of each batch).

Each server has its own `prometheus_client.CollectorRegistry`, so that servers in one process (the tests)
count apart.
"""

import prometheus_client

# TF Serving's prometheus_exporter: where the page is when MonitoringConfig.prometheus_config.path is empty.
PROMETHEUS_PATH = "/monitoring/prometheus/metrics"
CONTENT_TYPE = prometheus_client.CONTENT_TYPE_LATEST


def exponential_buckets(scale, growth, count):
    """tensorflow::monitoring::Buckets::Exponential(scale, growth, count): the upper limits scale * growth^i,
    i < count (prometheus_client adds +Inf)."""
    return [scale * growth**index for index in range(count)]


# TF Serving's buckets: requests (10 us x 1.8^i, 33 buckets, ~20 minutes), queueing (100 us x 1.2^i, 52, ~1 s).
REQUEST_LATENCY_BUCKETS = exponential_buckets(10, 1.8, 33)
QUEUING_LATENCY_BUCKETS = exponential_buckets(100, 1.2, 52)
BATCH_SIZE_BUCKETS = exponential_buckets(1, 2, 14)  # 1, 2, 4, ... 8192 rows (TF Serving's batching_util.h)
# The `model_name` label of every failed request for a model the server does not serve, and the `signature_name`
# label of one for a signature the answering version does not have: made-up names share this one value, so that a
# client cannot add a counter or histogram per name to the server's memory and metrics page.
UNKNOWN = "<unknown>"


class ServerMetrics:
    """The counters and histograms of one server, in its own registry.

    Args:
        registry: a `prometheus_client.CollectorRegistry`; default a new one.

    Example:
    >>> metrics = ServerMetrics()
    >>> metrics.record_request("rnnsearch", 1, "translate", "GRPC", "OK", 0.05, served_models=["rnnsearch"])
    >>> b":tensorflow:serving:request_count_total" in metrics.exposition()
    True
    """

    def __init__(self, registry=None):
        self.registry = registry or prometheus_client.CollectorRegistry()
        add = dict(registry=self.registry)
        self.request_count = prometheus_client.Counter(
            ":tensorflow:serving:request_count", "The total number of requests.", ["model_name", "status"], **add)
        self.request_latency = prometheus_client.Histogram(
            ":tensorflow:serving:request_latency",
            "Distribution of wall time (in microseconds) for Tensorflow Serving request.",
            ["model_name", "API", "entrypoint"], buckets=REQUEST_LATENCY_BUCKETS, **add)
        self.signature_latency = prometheus_client.Histogram(
            ":rnnsearch:serving:signature_request_latency",
            "Distribution of wall time (in microseconds) of Predict requests per version and signature.",
            ["model_name", "version", "signature_name", "status"], buckets=REQUEST_LATENCY_BUCKETS, **add)
        self.queuing_latency = prometheus_client.Histogram(
            ":tensorflow:serving:batching_session:queuing_latency",
            "Distribution of wall time spent (in microseconds) in queuing",
            ["thread_pool_name"], buckets=QUEUING_LATENCY_BUCKETS, **add)
        self.processed_batch_size = prometheus_client.Histogram(
            ":tensorflow:serving:batching_session:processed_batch_size",
            "Rows of the batches run (requests joined along their first dimension).",
            ["thread_pool_name", "signature_name"], buckets=BATCH_SIZE_BUCKETS, **add)
        self.wrapped_run_count = prometheus_client.Counter(
            ":tensorflow:serving:batching_session:wrapped_run_count",
            "Total count of run calls on the wrapped session", **add)
        self.load_attempt_count = prometheus_client.Counter(
            ":tensorflow:cc:saved_model:load_attempt_count",
            "The number of times a SavedModel was successfully loaded.", ["model_path", "status"], **add)
        self.load_latency = prometheus_client.Counter(
            ":tensorflow:cc:saved_model:load_latency",
            "Latency in microseconds for SavedModels that were successfully loaded.", ["model_path"], **add)
        self.warmup_latency = prometheus_client.Histogram(
            ":tensorflow:serving:model_warmup_latency",
            "Distribution of wall time (in microseconds) for warming up the model.",
            ["model_path", "status"], buckets=REQUEST_LATENCY_BUCKETS, **add)

    def record_request(self, model_name, version, signature_name, entrypoint, status, seconds, api="Predict",
                       signatures=(), served_models=()):
        """One Predict request: `entrypoint` "GRPC" or "REST", `status` a gRPC code name ("OK",
        "INVALID_ARGUMENT", ...), `version` the version that answered (None when none did), `signatures` the
        signature names that version has, `served_models` the model names the server serves. As in TF Serving
        (`RecordRequestLatency` in its prediction service), `request_latency` counts answered requests only; every
        outcome is in `request_count` and, with its latency, in `signature_request_latency`. The request's
        `model_name` and `signature_name` are its labels only where the request succeeded or they are among
        `served_models` / `signatures`, else `UNKNOWN`: the names a client makes up cannot grow the page."""
        microseconds = seconds * 1e6
        if status != "OK" and model_name not in served_models:
            model_name = UNKNOWN
        if status != "OK" and signature_name not in signatures:
            signature_name = UNKNOWN
        self.request_count.labels(model_name, status).inc()
        if status == "OK":
            self.request_latency.labels(model_name, api, entrypoint).observe(microseconds)
        version = "" if version is None else str(version)
        self.signature_latency.labels(model_name, version, signature_name, status).observe(microseconds)

    def record_batch(self, thread_pool_name, signature_name, rows, queuing_seconds):
        """One batch run by `serving.batching.RequestBatcher`: its rows and each request's time in the queue."""
        self.wrapped_run_count.inc()
        self.processed_batch_size.labels(thread_pool_name, signature_name).observe(rows)
        for seconds in queuing_seconds:
            self.queuing_latency.labels(thread_pool_name).observe(seconds * 1e6)

    def record_load(self, model_path, status, seconds):
        """One attempt to load the SavedModel of `model_path`; `status` "success" or "fail" (TensorFlow's)."""
        self.load_attempt_count.labels(model_path, status).inc()
        if status == "success":
            self.load_latency.labels(model_path).inc(seconds * 1e6)

    def record_warmup(self, model_path, status, seconds):
        """The warm-up replay of a version; `status` a gRPC code name."""
        self.warmup_latency.labels(model_path, status).observe(seconds * 1e6)

    def exposition(self):
        """The registry in Prometheus' text format (bytes)."""
        return prometheus_client.generate_latest(self.registry)
