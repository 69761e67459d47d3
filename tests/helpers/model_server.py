"""A model server process over the tiny export on loopback ports, with clients for it: what the server
tests (tests/test_local_server.py) and the command-line client's tests (tests/test_client.py) talk to."""

import os
import shutil
import socket
import subprocess
import sys
import time

import grpc
import pytest

from conftest import REPO_ROOT
from serving.grpc_client import GrpcClient
from helpers.serving_test_utils import exported_model

MODEL_NAME = "rnnsearch"
MAX_REQUEST_BYTES = 1 << 20  # the local server's limit in these tests
REST_CHANNEL_TIMEOUT = 3  # seconds the local server lets a REST connection stay silent in these tests
# `serving.local_server`, and the real `tensorflow_model_server` whenever it is on PATH.
SERVER_KINDS = ["local_server", "tensorflow_model_server"]
# TF Serving's MonitoringConfig, which both servers are given: Prometheus metrics on the REST port.
MONITORING_CONFIG = 'prometheus_config { enable: true, path: "/monitoring/prometheus/metrics" }\n'


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RunningServer:
    """A model server process on loopback ports, with clients for it."""

    def __init__(self, kind, export_dir, log_path):
        self.kind = kind
        grpc_port, rest_port = free_port(), free_port()
        monitoring_config = os.path.join(os.path.dirname(log_path), "monitoring.config")
        with open(monitoring_config, "w") as stream:
            stream.write(MONITORING_CONFIG)
        if kind == "local_server":
            command = [
                sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", f"--model_base_path={export_dir}",
                f"--model_name={MODEL_NAME}", f"--port={grpc_port}", f"--rest_api_port={rest_port}",
                f"--max_request_bytes={MAX_REQUEST_BYTES}", f"--rest_channel_timeout={REST_CHANNEL_TIMEOUT}",
                f"--monitoring_config_file={monitoring_config}",
            ]
        else:
            command = [
                "tensorflow_model_server", f"--port={grpc_port}", f"--rest_api_port={rest_port}",
                f"--model_name={MODEL_NAME}", f"--model_base_path={os.path.abspath(export_dir)}",
                f"--monitoring_config_file={monitoring_config}",
            ]
        self.log_path = log_path
        with open(log_path, "w") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
                env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
            )
        self.address = f"127.0.0.1:{grpc_port}"
        self.rest_url = f"http://127.0.0.1:{rest_port}"
        self.client = GrpcClient(self.address, MODEL_NAME, timeout=60)
        deadline = time.monotonic() + 180
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{kind} exited:\n{open(log_path).read()}")
            try:
                self.client.metadata()
                return
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{kind} not ready after 180 s:\n{open(log_path).read()}")
                time.sleep(0.5)

    def resident_bytes(self):
        """The server process's resident memory."""
        return 1024 * self._status("VmRSS")  # reported in kB

    def threads(self):
        """The server process's thread count."""
        return self._status("Threads")

    def _status(self, field):
        """The number of `field` in the server process's /proc status."""
        with open(f"/proc/{self.process.pid}/status") as status:
            return int(next(line for line in status if line.startswith(f"{field}:")).split()[1])

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        """SIGTERM, as `kill`, docker stop and Kubernetes stop a server; its exit status (-9: killed after 15 s)."""
        self.client.close()
        self.process.terminate()
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=15)


def start_server(kind, tmp_path_factory):
    """A `RunningServer` of `kind` over the session's tiny export; skips the test without that server."""
    if kind == "tensorflow_model_server" and shutil.which("tensorflow_model_server") is None:
        pytest.skip("tensorflow_model_server is not on PATH")
    _, export_dir, _ = exported_model(tmp_path_factory)
    return RunningServer(kind, export_dir, tmp_path_factory.mktemp("server") / "server.log")
