"""A development stand-in for `tensorflow_model_server`: the same gRPC API over the newest version.

    python -m serving.local_server --model_base_path=exports/rnnsearch --model_name=rnnsearch \
        --port=8500 --rest_api_port=8501

Implements PredictionService.Predict and GetModelMetadata, and TF Serving's REST API (model status,
metadata, predict in row and columnar format) served by waitress, so `serving/client.py` and the tests
talk to it exactly as to TF Serving; the REST port also serves the translation page at `/`
(`serving/page.py`). Binds 127.0.0.1 unless told.
"""

import concurrent.futures
import socket
import threading

import grpc
import waitress
from absl import app, flags, logging

from rnnsearch_tf.cli.errors import with_one_line_errors
from rnnsearch_tf.utils.threads import share_cores
from serving.batching import BatchingParameters
from serving.prediction_service import PredictionService
from serving.rest_app import RestApp
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
    "batching_parameters_file", None, "TF Serving's BatchingParameters text file (`serving/export.py` writes "
    "one beside the versions); default: the defaults of BatchingParameters. Implies --enable_batching."
)
_REST_CHANNEL_TIMEOUT = flags.DEFINE_integer(
    "rest_channel_timeout", 30, "Seconds a REST connection may stay silent (e.g. a body never sent)."
)


class LocalServer:
    """gRPC (and optionally REST) server of one `Servable`.

    Args:
        servable: the `Servable` to serve.
        host: address to bind ("127.0.0.1": this machine only).
        port: gRPC port; 0 picks a free one (see `port` after `start`).
        rest_api_port: REST port, 0 picks a free one, None for no REST.
        max_request_bytes: the largest request accepted (gRPC answers RESOURCE_EXHAUSTED, REST 413);
            also the most bytes one input tensor may expand to (gRPC answers INVALID_ARGUMENT).
        workers: threads answering gRPC requests, and as many answering REST requests; more requests wait.
        rest_channel_timeout: seconds after which a silent REST connection is closed.
        rest_connection_limit: REST connections held at once (waiting ones cost a socket, not a thread).
    """

    def __init__(
        self,
        servable,
        host="127.0.0.1",
        port=0,
        rest_api_port=None,
        max_request_bytes=4 << 20,
        workers=64,
        rest_channel_timeout=30,
        rest_connection_limit=1000,
    ):
        self.servable = servable
        self.host = host
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        self._grpc_server = grpc.server(
            self._executor,
            options=[
                ("grpc.max_receive_message_length", max_request_bytes),
                ("grpc.max_send_message_length", -1),
            ],
        )
        PredictionService(servable, max_input_bytes=max_request_bytes).add_to_server(self._grpc_server)
        try:
            self.port = self._grpc_server.add_insecure_port(f"{host}:{port}")
        except RuntimeError:  # grpcio raises where its older versions returned 0
            self.port = 0
        if self.port == 0:
            raise OSError(f"cannot listen for gRPC on {host}:{port}")
        self._rest_server = None
        self.rest_api_port = None
        if rest_api_port is not None:
            self._rest_server = waitress.create_server(
                RestApp(servable),
                host=host,
                port=rest_api_port,
                threads=workers,
                backlog=1024,
                connection_limit=rest_connection_limit,
                channel_timeout=rest_channel_timeout,
                cleanup_interval=min(30, rest_channel_timeout),  # how often timed-out connections are closed
                max_request_body_size=max_request_bytes,
                asyncore_use_poll=True,  # select() fails beyond 1024 sockets
                ident="rnnsearch-tf",
            )
            self.rest_api_port = self._rest_server.effective_port

    def start(self):
        self._grpc_server.start()
        if self._rest_server is not None:
            threading.Thread(target=self._rest_server.run, daemon=True).start()
        return self

    def stop(self):
        if self._rest_server is not None:
            self._rest_server.close()
            self._rest_server.task_dispatcher.shutdown(timeout=1)
        self._grpc_server.stop(grace=1.0).wait()
        self._executor.shutdown(wait=False)

    def wait(self):
        self._grpc_server.wait_for_termination()


def check_port(host, port, flag):
    """Raises OSError naming `flag` where `host:port` cannot be listened on (0: any free port, passes), so
    that a port in use is reported before the model is loaded, not seconds later with a traceback."""
    if not port:
        return
    family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is no obstacle
        try:
            probe.bind(address)
        except OSError as error:
            raise OSError(f"{flag}={port}: cannot listen on {host}:{port} ({error.strerror}); give another port") from None


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
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


if __name__ == "__main__":
    app.run(with_one_line_errors(main))
