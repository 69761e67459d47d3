"""`rnnsearch serve` as a benchmark starts it: a process on free loopback ports, ready when constructed.

Light on purpose (no TensorFlow), like `bench/peer.py`: the benches that time clients import only this.
"""

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
# TF Serving's MonitoringConfig that serves the metrics at their default path (serving/monitoring_config.py).
MONITORING_CONFIG = 'prometheus_config { enable: true, path: "/monitoring/prometheus/metrics" }\n'
METRICS_PATH = "/monitoring/prometheus/metrics"


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

    def cpu_seconds(self):
        """{"tensorflow", "python"}: user + system CPU seconds the server process has used so far (Linux'
        /proc), in TensorFlow's own threads (named `tf_*`: the graph's ops) and in every other thread (the
        Python front: gRPC, HTTP, JSON, batching; the threads of exited ones are not counted)."""
        seconds = dict(tensorflow=0.0, python=0.0)
        for task in pathlib.Path(f"/proc/{self.process.pid}/task").iterdir():
            try:
                name = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # the thread ended meanwhile
                continue
            used = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            seconds["tensorflow" if name.startswith("tf_") else "python"] += used
        return seconds

    def batch_metrics(self, signature_name="translate"):
        """The server's own batching metrics (started with `MONITORING_CONFIG`): {"batch_sizes": {upper
        limit: batches run of at most that many rows, cumulative}, "batches", "rows", "queued_requests",
        "queuing_s"} of `signature_name` so far, from TF Serving's `processed_batch_size` and
        `queuing_latency` histograms."""
        from prometheus_client.parser import text_string_to_metric_families  # noqa: PLC0415

        with urllib.request.urlopen(self.rest_url + METRICS_PATH, timeout=30) as response:
            text = response.read().decode("utf-8")
        result = dict(batch_sizes={}, batches=0, rows=0, queued_requests=0, queuing_s=0.0)
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name.endswith("processed_batch_size_bucket") and (
                        sample.labels.get("signature_name") == signature_name):
                    result["batch_sizes"][float(sample.labels["le"])] = sample.value
                elif sample.name.endswith("processed_batch_size_count") and (
                        sample.labels.get("signature_name") == signature_name):
                    result["batches"] = sample.value
                elif sample.name.endswith("processed_batch_size_sum") and (
                        sample.labels.get("signature_name") == signature_name):
                    result["rows"] = sample.value
                elif sample.name.endswith("queuing_latency_count"):
                    result["queued_requests"] += sample.value
                elif sample.name.endswith("queuing_latency_sum"):
                    result["queuing_s"] += sample.value / 1e6
        return result

    def stop(self):
        if self._grpc_channel is not None:
            self._grpc_channel.close()
        self.process.terminate()
        self.process.wait()
