"""Serves an export over TF Serving's gRPC and REST APIs, with the translation page (`serving.LocalServer`).

    rnnsearch serve --model_base_path=exports/rnnsearch --model_name=rnnsearch --port=8500 --rest_api_port=8501
"""

import sys

from absl import app, flags, logging

from rnnsearch_tf.utils.threads import share_cores
from serving.batching import BatchingParameters
from serving.local_server import LocalServer, check_port
from serving.servable import Servable

_MODEL_BASE_PATH = flags.DEFINE_string("model_base_path", None, "Folder of integer versions.", required=True)
_MODEL_NAME = flags.DEFINE_string("model_name", "rnnsearch", "Name requests must use.")
_HOST = flags.DEFINE_string("host", "127.0.0.1", "Address to bind; 0.0.0.0 exposes the server to the network.")
_PORT = flags.DEFINE_integer("port", 8500, "gRPC port.")
_REST_API_PORT = flags.DEFINE_integer("rest_api_port", 0, "REST port (8501 in TF Serving); 0 for none.")
_MAX_REQUEST_BYTES = flags.DEFINE_integer("max_request_bytes", 4 << 20, "Larger requests are refused.")
_WORKERS = flags.DEFINE_integer(
    "workers", 64, "Requests held at once (each of gRPC and REST); with --enable_batching also the largest "
    "number of requests that can share a batch. Waiting requests cost a thread each, not a core."
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


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if _HOST.value in ("0.0.0.0", "::", ""):
        print(f"warning: --host={_HOST.value} serves every network this machine is on: whoever reaches its ports "
              "can translate with the model (the REST port answers only to the Host names localhost, the loopback "
              "addresses and --allowed_hosts)", file=sys.stderr)
    check_port(_HOST.value, _PORT.value, "--port")
    check_port(_HOST.value, _REST_API_PORT.value, "--rest_api_port")
    batching = None
    if _BATCHING_PARAMETERS_FILE.value:
        batching = BatchingParameters.from_file(_BATCHING_PARAMETERS_FILE.value)
    elif _ENABLE_BATCHING.value:
        batching = BatchingParameters()
    if batching:
        share_cores(batching.num_batch_threads)
    servable = Servable(_MODEL_BASE_PATH.value, _MODEL_NAME.value, batching)
    server = LocalServer(
        servable,
        host=_HOST.value,
        port=_PORT.value,
        rest_api_port=_REST_API_PORT.value or None,
        max_request_bytes=_MAX_REQUEST_BYTES.value,
        workers=_WORKERS.value,
        rest_channel_timeout=_REST_CHANNEL_TIMEOUT.value,
        allowed_hosts=_ALLOWED_HOSTS.value,
    ).start()
    rest = f", REST on {server.host}:{server.rest_api_port}" if server.rest_api_port else ""
    logging.info(
        "serving %s version %d from %s: gRPC on %s:%d%s; %d warm-up requests; batching: %s",
        servable.model_name, servable.version, servable.path, server.host, server.port, rest,
        servable.warmup_requests, batching or "off",
    )
    print(f"ready grpc={server.port} rest={server.rest_api_port or 0}", flush=True)
    if server.rest_api_port:
        print(f"page: open http://{server.host}:{server.rest_api_port}/ in a browser", flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        server.stop()
        servable.close()
