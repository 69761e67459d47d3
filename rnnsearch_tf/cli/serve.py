"""Serves exports over TF Serving's gRPC and REST APIs, with the translation page (`serving.LocalServer`).

    rnnsearch serve --model_base_path=exports/rnnsearch --model_name=rnnsearch --port=8500 --rest_api_port=8501
    rnnsearch serve --model_config_file=models.config --monitoring_config_file=monitoring.config --rest_api_port=8501
"""

import os
import signal
import sys

from absl import app, flags, logging

from rnnsearch_tf.utils.function_cache import run_graphs_without_grappler
from rnnsearch_tf.utils.threads import share_cores
from serving.batching import BatchingParameters
from serving.browser_guard import ANY_ADDRESS
from serving.local_server import LocalServer, check_port
from serving.metrics import ServerMetrics
from serving.model_manager import ModelManager
from serving.model_server_config import model_config, read_model_config_file, version_policy
from serving.monitoring_config import read_monitoring_config
from serving.served_model import ServedModel

_MODEL_BASE_PATH = flags.DEFINE_string(
    "model_base_path", None, "Folder of integer versions (TF Serving's flag); or --model_config_file.")
_MODEL_NAME = flags.DEFINE_string("model_name", "rnnsearch", "Name requests must use.")
_MODEL_CONFIG_FILE = flags.DEFINE_string(
    "model_config_file", None, "TF Serving's ModelServerConfig text file: model_config_list { config { name, "
    "base_path, model_platform: \"tensorflow\", model_version_policy } ... }, for several models.")
_NUM_LATEST_VERSIONS = flags.DEFINE_integer(
    "num_latest_versions", 1, "With --model_base_path: serve the newest N versions (TF Serving's default "
    "policy, latest 1).")
_MODEL_VERSIONS = flags.DEFINE_list(
    "model_versions", [], "With --model_base_path: serve these versions only (a `specific` version policy).")
_FILE_SYSTEM_POLL_WAIT_SECONDS = flags.DEFINE_float(
    "file_system_poll_wait_seconds", 1, "Seconds between two looks for new versions in every base path (TF "
    "Serving's flag); 0: only at start.")
_MONITORING_CONFIG_FILE = flags.DEFINE_string(
    "monitoring_config_file", None, "TF Serving's MonitoringConfig text file: prometheus_config { enable: true, "
    "path: \"/monitoring/prometheus/metrics\" } serves the metrics on the REST port.")
_HOST = flags.DEFINE_string(
    "host", "127.0.0.1", "Address to bind (a name: each of its addresses); 0.0.0.0 exposes the server to the network.")
_PORT = flags.DEFINE_integer("port", 8500, "gRPC port.")
_REST_API_PORT = flags.DEFINE_integer("rest_api_port", 0, "REST port (8501 in TF Serving); 0 for none.")
_MAX_REQUEST_BYTES = flags.DEFINE_integer("max_request_bytes", 4 << 20, "Larger requests are refused.", lower_bound=1)
_WORKERS = flags.DEFINE_integer(
    "workers", 64, "Requests held at once (each of gRPC and REST); with --enable_batching also the largest "
    "number of requests that can share a batch. Waiting requests cost a thread each, not a core.", lower_bound=1
)
_ENABLE_BATCHING = flags.DEFINE_boolean(
    "enable_batching", False, "Decode concurrent requests together (TF Serving's flag; serving/batching.py)."
)
_BATCHING_PARAMETERS_FILE = flags.DEFINE_string(
    "batching_parameters_file", None, "TF Serving's BatchingParameters text file (`rnnsearch export` writes "
    "one beside the versions); default: the defaults of BatchingParameters. Implies --enable_batching."
)
_ALLOWED_HOSTS = flags.DEFINE_list(
    "allowed_hosts", [], "Names the REST port answers to besides --host, localhost and the loopback addresses "
    "(e.g. this machine's DNS name when --host=0.0.0.0); a request of another Host is refused."
)
_REST_CHANNEL_TIMEOUT = flags.DEFINE_integer(
    "rest_channel_timeout", 30, "Seconds a REST connection may stay silent (e.g. a body never sent)."
)


def _model_configs():
    """The `ModelConfig`s of --model_config_file, or of --model_base_path and --model_name; a flag the chosen way
    would not read is refused, not ignored."""
    if _MODEL_CONFIG_FILE.value:
        single_model_flags = (_MODEL_BASE_PATH, _MODEL_NAME, _NUM_LATEST_VERSIONS, _MODEL_VERSIONS)
        ignored = [f"--{holder.name}" for holder in single_model_flags if holder.present]
        if ignored:
            raise app.UsageError(f"give --model_config_file or {', '.join(ignored)}, not both (the file names each "
                                 "model, its base_path and its model_version_policy)")
        return read_model_config_file(_MODEL_CONFIG_FILE.value)
    if not _MODEL_BASE_PATH.value:
        raise app.UsageError("--model_base_path or --model_config_file is required")
    if _MODEL_VERSIONS.present and _NUM_LATEST_VERSIONS.present:
        raise app.UsageError("give --model_versions or --num_latest_versions, not both (a version policy serves "
                             "specific versions or the latest N)")
    try:
        versions = [int(version) for version in _MODEL_VERSIONS.value]
    except ValueError:
        raise app.UsageError(f"--model_versions must be integers, got {_MODEL_VERSIONS.value}") from None
    policy = version_policy(None if versions else _NUM_LATEST_VERSIONS.value, versions)
    return [model_config(_MODEL_NAME.value, _MODEL_BASE_PATH.value, policy)]


def _check_ports():
    """Refuses, before any model is loaded, --port and --rest_api_port where they are one port or cannot be
    listened on."""
    if _REST_API_PORT.value and _REST_API_PORT.value == _PORT.value:
        raise app.UsageError(f"--port and --rest_api_port are both {_PORT.value}: give each its own port")
    check_port(_HOST.value, _PORT.value, "--port")
    check_port(_HOST.value, _REST_API_PORT.value, "--rest_api_port")


def _page_line(server):
    """Where to open the translation page: an address of this machine that the REST port's Host check takes (with
    --host=0.0.0.0, the loopback one; other machines need their name for it in --allowed_hosts)."""
    elsewhere = (f" (from another machine: http://NAME:{server.rest_api_port}/ with --allowed_hosts=NAME, this "
                 "machine's name)") if server.host in ANY_ADDRESS else ""
    return f"page: open {server.page_url} in a browser on this machine{elsewhere}"


def _batching():
    """The BatchingParameters of --batching_parameters_file or --enable_batching; None for no batching."""
    if _BATCHING_PARAMETERS_FILE.value:
        return BatchingParameters.from_file(_BATCHING_PARAMETERS_FILE.value)
    return BatchingParameters() if _ENABLE_BATCHING.value else None


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if _HOST.value in ANY_ADDRESS:
        print(f"warning: --host={_HOST.value} serves every network this machine is on: whoever reaches its ports "
              "can translate with the model (the REST port answers only to the Host names localhost, the loopback "
              "addresses and --allowed_hosts)", file=sys.stderr)
    configs = _model_configs()
    metrics_path = read_monitoring_config(_MONITORING_CONFIG_FILE.value) if _MONITORING_CONFIG_FILE.value else None
    _check_ports()
    batching = _batching()
    if batching:
        share_cores(batching.num_batch_threads)
    run_graphs_without_grappler()  # each signature's first call (the warm-up) twice as fast, the others as fast
    metrics = ServerMetrics()
    models = ModelManager([ServedModel(config.name, config.base_path, config.model_version_policy, batching, metrics)
                           for config in configs], _FILE_SYSTEM_POLL_WAIT_SECONDS.value).start()
    server = LocalServer(
        models,
        host=_HOST.value,
        port=_PORT.value,
        rest_api_port=_REST_API_PORT.value or None,
        max_request_bytes=_MAX_REQUEST_BYTES.value,
        workers=_WORKERS.value,
        rest_channel_timeout=_REST_CHANNEL_TIMEOUT.value,
        allowed_hosts=_ALLOWED_HOSTS.value,
        metrics=metrics,
        metrics_path=metrics_path,
    ).start()
    rest = f", REST on {server.host}:{server.rest_api_port}" if server.rest_api_port else ""
    for model in models.models.values():
        logging.info("serving %s versions %s from %s", model.name, model.available_versions(), model.base_path)
    logging.info("gRPC on %s:%d%s; batching: %s; metrics: %s", server.host, server.port, rest, batching or "off",
                 metrics_path or "off")
    print(f"ready grpc={server.port} rest={server.rest_api_port or 0}", flush=True)
    if server.rest_api_port:
        print(_page_line(server), flush=True)
    # SIGTERM (`kill`, docker stop, Kubernetes) stops as Ctrl-C does: the ports close, requests in flight get a second
    # to finish (`LocalServer.stop`), exit status 0. A shell starts `serve &` with SIGINT ignored, so `kill -INT` alone
    # would not stop it.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    abandoned = 0
    try:
        server.wait()
    except KeyboardInterrupt:
        for number in (signal.SIGINT, signal.SIGTERM):  # a second signal would end it in Python's exit, which waits
            signal.signal(number, signal.SIG_IGN)       # for the gRPC pool's threads: stopping is bounded already
        logging.info("stopping: no new requests, a second for those in flight")
        server.stop()
        abandoned = models.close(timeout=0)  # their second was given at the ports
    print("stopped", flush=True)
    if abandoned:
        # A running graph cannot be cancelled, and Python would wait for its thread at exit (the gRPC pool's threads
        # are joined then): the process ends here, not when the abandoned batches end (docker stop kills at 10 s).
        logging.warning("%d requests still decoding after their second were abandoned", abandoned)
        logging.flush()
        sys.stderr.flush()
        os._exit(0)
