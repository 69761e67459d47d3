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
        self._grpc_channel = self._grpc_stub = None

    def translate_grpc(self, sentence):
        """Seconds one gRPC Predict of `translate` for `sentence` took."""
        return self.answer_grpc(sentence)[0]

    def answer_grpc(self, sentence):
        """(seconds, version that answered: the response's model_spec.version) of one gRPC Predict of
        `translate` for `sentence`, built as `serving.grpc_client` builds it, over one channel for every
        thread (as a client process holds; TensorFlow is imported on first use)."""
        if self._grpc_stub is None:
            import grpc  # noqa: PLC0415 (TensorFlow only for this client)
            import tensorflow as tf  # noqa: PLC0415
            from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc  # noqa: PLC0415

            self._grpc_channel = grpc.insecure_channel(self.grpc_address)
            self._grpc_stub = prediction_service_pb2_grpc.PredictionServiceStub(self._grpc_channel)
            self._grpc_modules = tf, predict_pb2
        tf, predict_pb2 = self._grpc_modules
        request = predict_pb2.PredictRequest()
        request.model_spec.name = "rnnsearch"
        request.model_spec.signature_name = "translate"
        request.inputs["text"].CopyFrom(tf.make_tensor_proto([sentence.encode()]))
        started = time.perf_counter()
        response = self._grpc_stub.Predict(request, timeout=120)
        for proto in response.outputs.values():  # decoded as serving.grpc_client decodes them
            tf.make_ndarray(proto)
        return time.perf_counter() - started, response.model_spec.version.value

    def translate(self, sentence):
        """Seconds one REST request of `translate` for `sentence` took."""
        return self.answer(sentence)[0]

    def answer(self, sentence):
        """(seconds, version that answered: the `X-Model-Version` header) of one REST request of
        `translate` for `sentence`."""
        body = json.dumps({"signature_name": "translate", "instances": [{"text": sentence}]}).encode()
        request = urllib.request.Request(f"{self.rest_url}/v1/models/rnnsearch:predict", body,
                                         {"Content-Type": "application/json"})
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=120) as response:
            json.load(response)
            version = int(response.headers["X-Model-Version"])
        return time.perf_counter() - started, version

    def stop(self):
        if self._grpc_channel is not None:
            self._grpc_channel.close()
        self.process.terminate()
        self.process.wait()
