"""`rnnsearch serve` as a benchmark starts it: a process on free loopback ports, ready when constructed.

Light on purpose (no TensorFlow), like `bench/peer.py`: the benches that time clients import only this.
"""

import json
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServedModel:
    """`rnnsearch serve --model_base_path=export_dir *server_flags`, REST at `rest_url`, after it printed
    `ready` (its warm-up done). Its --rest_api_port=0 would mean "no REST", so a free port is picked."""

    def __init__(self, export_dir, *server_flags):
        port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", f"--model_base_path={export_dir}",
             "--port=0", f"--rest_api_port={port}", *server_flags],
            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        ready = next((line for line in self.process.stdout if line.startswith("ready")), None)
        if ready is None:
            raise RuntimeError("rnnsearch serve ended before it was ready")
        self.rest_url = f"http://127.0.0.1:{port}"
        self.grpc_address = f"127.0.0.1:{dict(word.split('=') for word in ready.split()[1:])['grpc']}"
        self._grpc_client = None

    def translate_grpc(self, sentence):
        """Seconds one gRPC Predict of `translate` for `sentence` took, through `serving.grpc_client` (one
        channel for every thread, as a client process holds; it imports TensorFlow on first use)."""
        if self._grpc_client is None:
            from serving.grpc_client import GrpcClient  # noqa: PLC0415 (TensorFlow only for this client)

            self._grpc_client = GrpcClient(self.grpc_address, "rnnsearch")
        started = time.perf_counter()
        self._grpc_client.translate([sentence])
        return time.perf_counter() - started

    def translate(self, sentence):
        """Seconds one REST request of `translate` for `sentence` took."""
        body = json.dumps({"signature_name": "translate", "instances": [{"text": sentence}]}).encode()
        request = urllib.request.Request(f"{self.rest_url}/v1/models/rnnsearch:predict", body,
                                         {"Content-Type": "application/json"})
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=120) as response:
            json.load(response)
        return time.perf_counter() - started

    def stop(self):
        if self._grpc_client is not None:
            self._grpc_client.close()
        self.process.terminate()
        self.process.wait()
