"""A development stand-in for `tensorflow_model_server`: the same gRPC API over the newest version.

    python -m serving.local_server --model_base_path=exports/rnnsearch --model_name=rnnsearch \
        --port=8500 --rest_api_port=8501

Implements PredictionService.Predict and GetModelMetadata (and a REST predict/metadata endpoint), so
`serving/client.py` and the tests talk to it exactly as to TF Serving. Binds 127.0.0.1 unless told.
"""

import concurrent.futures
import http.server
import threading

import grpc
from absl import app, flags, logging
from tensorflow_serving.apis import prediction_service_pb2_grpc

from serving.prediction_service import PredictionService
from serving.rest_request_handler import RestRequestHandler
from serving.servable import Servable

_MODEL_BASE_PATH = flags.DEFINE_string("model_base_path", None, "Folder of integer versions.", required=True)
_MODEL_NAME = flags.DEFINE_string("model_name", "rnnsearch", "Name requests must use.")
_HOST = flags.DEFINE_string("host", "127.0.0.1", "Address to bind; 0.0.0.0 exposes the server to the network.")
_PORT = flags.DEFINE_integer("port", 8500, "gRPC port.")
_REST_API_PORT = flags.DEFINE_integer("rest_api_port", 0, "REST port (8501 in TF Serving); 0 for none.")
_MAX_REQUEST_BYTES = flags.DEFINE_integer("max_request_bytes", 4 << 20, "Larger requests are refused.")
_WORKERS = flags.DEFINE_integer("workers", 8, "Requests answered concurrently.")


class LocalServer:
    """gRPC (and optionally REST) server of one `Servable`.

    Args:
        servable: the `Servable` to serve.
        host: address to bind ("127.0.0.1": this machine only).
        port: gRPC port; 0 picks a free one (see `port` after `start`).
        rest_api_port: REST port, 0 picks a free one, None for no REST.
        max_request_bytes: the largest request accepted (gRPC answers RESOURCE_EXHAUSTED, REST 413);
            also the most elements one input tensor may declare.
        workers: threads answering gRPC requests; more requests wait.
    """

    def __init__(
        self, servable, host="127.0.0.1", port=0, rest_api_port=None, max_request_bytes=4 << 20, workers=8
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
        prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(
            PredictionService(servable, max_input_elements=max_request_bytes), self._grpc_server
        )
        self.port = self._grpc_server.add_insecure_port(f"{host}:{port}")
        if self.port == 0:
            raise OSError(f"cannot bind {host}:{port}")
        self._rest_server = None
        self.rest_api_port = None
        if rest_api_port is not None:
            self._rest_server = http.server.ThreadingHTTPServer((host, rest_api_port), RestRequestHandler)
            self._rest_server.daemon_threads = True
            self._rest_server.servable = servable
            self._rest_server.max_request_bytes = max_request_bytes
            self.rest_api_port = self._rest_server.server_address[1]

    def start(self):
        self._grpc_server.start()
        if self._rest_server is not None:
            threading.Thread(target=self._rest_server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self._rest_server is not None:
            self._rest_server.shutdown()
            self._rest_server.server_close()
        self._grpc_server.stop(grace=1.0).wait()
        self._executor.shutdown(wait=False)

    def wait(self):
        self._grpc_server.wait_for_termination()


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    servable = Servable(_MODEL_BASE_PATH.value, _MODEL_NAME.value)
    server = LocalServer(
        servable,
        host=_HOST.value,
        port=_PORT.value,
        rest_api_port=_REST_API_PORT.value or None,
        max_request_bytes=_MAX_REQUEST_BYTES.value,
        workers=_WORKERS.value,
    ).start()
    rest = f", REST on {server.host}:{server.rest_api_port}" if server.rest_api_port else ""
    logging.info(
        "serving %s version %d from %s: gRPC on %s:%d%s",
        servable.model_name, servable.version, servable.path, server.host, server.port, rest,
    )
    print(f"ready grpc={server.port} rest={server.rest_api_port or 0}", flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    app.run(main)
