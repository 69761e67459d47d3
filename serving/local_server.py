"""A development stand-in for `tensorflow_model_server`: the same gRPC and REST APIs over the same models.

    rnnsearch serve --model_base_path=exports/rnnsearch --model_name=rnnsearch --port=8500 --rest_api_port=8501

Implements PredictionService.Predict and GetModelMetadata, ModelService.GetModelStatus, and TF Serving's REST
API (model status, metadata, predict in row and columnar format, the Prometheus metrics of
`--monitoring_config_file`) served by waitress, over the models and versions of a `ModelManager`, so
`rnnsearch client` and the tests talk to it exactly as to TF Serving; the REST port also serves the
translation page at `/` (`serving/page.py`). Binds 127.0.0.1 unless told.
"""

import concurrent.futures
import socket
import threading

import grpc
import waitress
import waitress.channel
import waitress.parser
import waitress.server
import waitress.utilities

from serving.browser_guard import ANY_ADDRESS, BrowserGuard
from serving.http_messages import error_body
from serving.metrics import ServerMetrics
from serving.model_service import ModelService
from serving.prediction_service import PredictionService
from serving.rest_app import RestApp


class _JsonError(waitress.utilities.Error):
    """A refusal of waitress' parser (its status) with TF Serving's JSON error body."""

    def __init__(self, refusal, message):
        super().__init__(message)
        self.code, self.reason = refusal.code, refusal.reason

    def to_response(self, ident=None):
        return f"{self.code} {self.reason}", [("Content-Type", "application/json")], error_body(self.body)


class _JsonErrorParser(waitress.parser.HTTPRequestParser):
    """waitress' request parser, whose refusals, made before the application sees the request (a malformed
    request line, header or `Content-Length`: 400; headers too large: 431; a body over the limit: 413), are
    TF Serving's JSON error body, not waitress' text; a body over the limit is named with its size (waitress
    names only the limit). The limit is `adj.max_request_body_size - 1` (waitress refuses a body as large
    as that setting)."""

    def received(self, data):
        consumed = super().received(data)
        if type(self.error) is waitress.utilities.RequestEntityTooLarge:
            limit = self.adj.max_request_body_size - 1
            size = (f"of {self.content_length} bytes" if not self.chunked
                    else f"sent in chunks passed {self.body_bytes_received} bytes")
            self.error = _JsonError(self.error, f"the request body {size}; this server takes at most {limit} bytes "
                                                "(rnnsearch serve --max_request_bytes)")
        elif self.error is not None and not isinstance(self.error, _JsonError):
            self.error = _JsonError(self.error, self.error.body)
        return consumed


class _JsonErrorChannel(waitress.channel.HTTPChannel):
    parser_class = _JsonErrorParser


def bound_sockets(host, port, flag="--rest_api_port"):
    """A TCP socket bound to each address `host` resolves to (`localhost`: 127.0.0.1, and ::1 where the
    machine resolves it so too), all at one port: `port`, or for 0 the free one the first address is given, as
    gRPC binds a name. OSError naming `flag` where one cannot be bound."""
    sockets = []
    try:
        for family, kind, protocol, _, address in dict.fromkeys(
                socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)):
            bound = socket.socket(family, kind, protocol)
            sockets.append(bound)
            bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is no obstacle
            if family == socket.AF_INET6:
                bound.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # the IPv4 address is its own socket
            bound.bind((address[0], port, *address[2:]))
            port = bound.getsockname()[1]  # the next addresses at the same port
    except OSError as error:
        for bound in sockets:
            bound.close()
        raise OSError(f"{flag}={port}: cannot listen on {host}:{port} ({error.strerror or error}); give another "
                      "port") from None
    return sockets


def page_url(host, port):
    """The address of the page on this machine, one the REST port's Host check accepts: the bound address, or
    for every address (0.0.0.0, ::) the loopback one."""
    name = ANY_ADDRESS.get(host, host)
    return f"http://{f'[{name}]' if ':' in name else name}:{port}/"


class LocalServer:
    """gRPC (and optionally REST) server of the models of a `ModelManager`.

    Args:
        models: the `serving.model_manager.ModelManager` to serve (started: its versions loaded).
        host: address to bind ("127.0.0.1": this machine only).
        port: gRPC port; 0 picks a free one (see `port` after `start`).
        rest_api_port: REST port, 0 picks a free one, None for no REST.
        max_request_bytes: the largest request accepted (gRPC answers RESOURCE_EXHAUSTED, REST 413);
            also the most bytes one input tensor may expand to (gRPC answers INVALID_ARGUMENT).
        workers: threads answering gRPC requests, and as many answering REST requests; more requests wait.
        rest_channel_timeout: seconds after which a silent REST connection is closed.
        rest_connection_limit: REST connections held at once (waiting ones cost a socket, not a thread).
        allowed_hosts: names the REST port answers to besides `host`, localhost and the loopback addresses
            (`BrowserGuard`: a request of another Host, or a POST of another Origin, is refused).
        metrics: the `serving.metrics.ServerMetrics` the requests are counted in (give the one the models
            count their loads and batches in); default a new one.
        metrics_path: the REST path of the metrics (`serving.monitoring_config.prometheus_path`); None: 404.
    """

    def __init__(
        self,
        models,
        host="127.0.0.1",
        port=0,
        rest_api_port=None,
        max_request_bytes=4 << 20,
        workers=64,
        rest_channel_timeout=30,
        rest_connection_limit=1000,
        allowed_hosts=(),
        metrics=None,
        metrics_path=None,
    ):
        self.models = models
        self.metrics = metrics or ServerMetrics()
        self.host = host
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        self._grpc_server = grpc.server(
            self._executor,
            options=[
                ("grpc.max_receive_message_length", max_request_bytes),
                ("grpc.max_send_message_length", -1),
            ],
        )
        PredictionService(models, max_input_bytes=max_request_bytes, metrics=self.metrics).add_to_server(
            self._grpc_server)
        ModelService(models).add_to_server(self._grpc_server)
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # gRPC binds every address of a name
        try:
            self.port = self._grpc_server.add_insecure_port(address)
        except RuntimeError:  # grpcio raises where its older versions returned 0
            self.port = 0
        if self.port == 0:
            raise OSError(f"cannot listen for gRPC on {address}")
        self._rest_server = None
        self._rest_listeners = []
        self.rest_api_port = None
        if rest_api_port is not None:
            guarded = BrowserGuard(RestApp(models, self.metrics, metrics_path), host, allowed_hosts)
            sockets = bound_sockets(host, rest_api_port)
            connections = {}  # waitress' map of its listening sockets and connections
            self._rest_server = waitress.create_server(
                guarded,
                map=connections,
                sockets=sockets,  # one server, or with several addresses waitress' MultiSocketServer
                threads=workers,
                backlog=1024,
                connection_limit=rest_connection_limit,
                channel_timeout=rest_channel_timeout,
                cleanup_interval=min(30, rest_channel_timeout),  # how often timed-out connections are closed
                max_request_body_size=max_request_bytes + 1,  # waitress refuses a body of this size
                asyncore_use_poll=True,  # select() fails beyond 1024 sockets
                ident="rnnsearch-tf",
            )
            self._rest_listeners = [listener for listener in connections.values()
                                    if isinstance(listener, waitress.server.BaseWSGIServer)]
            for listener in self._rest_listeners:
                listener.channel_class = _JsonErrorChannel
            self.rest_api_port = guarded.port = sockets[0].getsockname()[1]

    def start(self):
        self._grpc_server.start()
        if self._rest_server is not None:
            threading.Thread(target=self._rest_server.run, daemon=True).start()
        return self

    @property
    def page_url(self):
        """The translation page's address on this machine (`page_url`); None without REST."""
        return None if self.rest_api_port is None else page_url(self.host, self.rest_api_port)

    def stop(self):
        for listener in self._rest_listeners:
            listener.close()
        if self._rest_server is not None:
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
    for probe in bound_sockets(host, port, flag):
        probe.close()
