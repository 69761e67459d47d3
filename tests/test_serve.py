"""`rnnsearch serve` (rnnsearch_tf/cli/serve.py) in its own process: several models of TF Serving's
--model_config_file, each with its version policy, requests naming a version over gRPC and REST, the model
status, the page's list of models and the metrics of --monitoring_config_file; and its one-line mistakes."""

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import get_model_status_pb2, model_service_pb2_grpc, predict_pb2, prediction_service_pb2_grpc

from conftest import REPO_ROOT
from data_pipeline.export_dir import ExportDir
from serving.grpc_client import GrpcClient
from helpers.model_server import MONITORING_CONFIG, free_port
from helpers.serving_test_utils import exported_model
from helpers.versioned_exports import PROBES, copy_version, expected_translations, staged_versions
from helpers import preimported

_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")


def _serve(*flags, timeout=120):
    return preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", *flags], cwd=REPO_ROOT,
                           capture_output=True, text=True, env=_ENV, timeout=timeout)


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return staged_versions(tmp_path_factory)


@pytest.fixture(scope="module")
def server(staged, tmp_path_factory):
    """`rnnsearch serve` of two models: "enfr" (versions 1 and 2, a specific policy) and "fren" (version 3)."""
    root = tmp_path_factory.mktemp("serve")
    for version in (1, 2):
        copy_version(staged, version, root / "enfr")
    copy_version(staged, 3, root / "fren")
    (root / "models.config").write_text(
        'model_config_list {\n'
        f'  config {{ name: "enfr" base_path: "{root / "enfr"}" model_platform: "tensorflow"\n'
        '           model_version_policy { specific { versions: 1 versions: 2 } } }\n'
        f'  config {{ name: "fren" base_path: "{root / "fren"}" model_platform: "tensorflow" }}\n'
        '}\n')
    (root / "monitoring.config").write_text(MONITORING_CONFIG)
    grpc_port, rest_port = free_port(), free_port()
    log = open(root / "serve.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", f"--model_config_file={root / 'models.config'}",
         f"--monitoring_config_file={root / 'monitoring.config'}", f"--port={grpc_port}",
         f"--rest_api_port={rest_port}", "--file_system_poll_wait_seconds=0.2"],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=log, text=True, env=_ENV)
    ready = process.stdout.readline()
    assert ready.startswith("ready"), (ready, (root / "serve.log").read_text()[-3000:])
    process.address, process.url = f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{rest_port}"
    process.root = root
    yield process
    process.terminate()
    process.wait(timeout=30)
    log.close()


def _rest(server, path, body=None):
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(server.url + path, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.headers, response.read().decode("utf-8")


def _rest_translations(server, path):
    headers, text = _rest(server, path, {"signature_name": "translate", "instances": PROBES})
    return int(headers["X-Model-Version"]), [row["translation"] for row in json.loads(text)["predictions"]]


# large: the fresh two-model server above; the default suite serves several models in-process
# (tests/test_model_manager.py, tests/test_rest_app.py) and starts `rnnsearch serve` fresh (tests/test_local_server.py)
@pytest.mark.large
def test_each_model_answers_with_the_version_asked(server, staged, tmp_path_factory):
    expected = expected_translations(tmp_path_factory, staged)
    assert _rest_translations(server, "/v1/models/enfr/versions/1:predict") == (1, expected[1])
    assert _rest_translations(server, "/v1/models/enfr/versions/2:predict") == (2, expected[2])
    assert _rest_translations(server, "/v1/models/enfr:predict") == (2, expected[2])  # the newest
    assert _rest_translations(server, "/v1/models/fren:predict") == (3, expected[3])
    request = predict_pb2.PredictRequest()
    request.model_spec.name, request.model_spec.signature_name = "enfr", "translate"
    request.model_spec.version.value = 1
    request.inputs["text"].CopyFrom(tf.make_tensor_proto(np.array([probe.encode() for probe in PROBES], object)))
    with grpc.insecure_channel(server.address) as channel:
        response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=120)
        assert response.model_spec.version.value == 1
        assert [text.decode() for text in tf.make_ndarray(response.outputs["translation"])] == expected[1]
        request.model_spec.version.value = 3
        with pytest.raises(grpc.RpcError) as missing:
            prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=120)
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND and "Specific(enfr, 3)" in missing.value.details()
        status_request = get_model_status_pb2.GetModelStatusRequest()
        status_request.model_spec.name = "enfr"
        status = model_service_pb2_grpc.ModelServiceStub(channel).GetModelStatus(status_request, timeout=60)
    assert [(entry.version, entry.state) for entry in status.model_version_status] == [
        (1, get_model_status_pb2.ModelVersionStatus.AVAILABLE), (2, get_model_status_pb2.ModelVersionStatus.AVAILABLE)]


# large: the fresh two-model server above (the first test's note)
@pytest.mark.large
def test_status_page_and_metrics_name_both_models(server):
    for name, versions in (("enfr", ["1", "2"]), ("fren", ["3"])):
        status = json.loads(_rest(server, f"/v1/models/{name}")[1])["model_version_status"]
        assert [(entry["version"], entry["state"]) for entry in status] == [(v, "AVAILABLE") for v in versions]
    page = _rest(server, "/")[1]
    assert 'content="[&quot;enfr&quot;, &quot;fren&quot;]"' in page
    metrics = _rest(server, "/monitoring/prometheus/metrics")[1]
    assert ':tensorflow:cc:saved_model:load_attempt_count_total{model_path="' in metrics


# large: the fresh two-model server above (the first test's note)
@pytest.mark.large
def test_a_version_outside_the_specific_policy_is_not_served(server, staged):
    copy_version(staged, 3, server.root / "enfr")
    time.sleep(1.0)  # five polls
    status = json.loads(_rest(server, "/v1/models/enfr")[1])["model_version_status"]
    assert [entry["version"] for entry in status] == ["1", "2"]
    with pytest.raises(urllib.error.HTTPError) as missing:
        _rest(server, "/v1/models/enfr/versions/3/metadata")
    assert missing.value.code == 404


@pytest.mark.parametrize("flags, message", [
    (["--model_base_path=/x", "--model_config_file=/y"], "give --model_config_file or --model_base_path, not both"),
    ([], "--model_base_path or --model_config_file is required"),
    (["--model_base_path=/x", "--model_versions=a"], "--model_versions must be integers, got ['a']"),
    (["--model_base_path=/x", "--num_latest_versions=0"], "latest.num_versions must be at least 1, got 0"),
    (["--model_config_file=/y", "--model_name=enfr"],
     "give --model_config_file or --model_name, not both (the file names each model"),
    (["--model_config_file=/y", "--num_latest_versions=2", "--model_versions=1"],
     "give --model_config_file or --num_latest_versions, --model_versions, not both"),
    (["--model_base_path=/x", "--model_versions=1,3", "--num_latest_versions=2"],
     "give --model_versions or --num_latest_versions, not both"),
    (["--model_base_path=/x", "--max_request_bytes=0"], "flag --max_request_bytes=0: 0 is not"),
    (["--model_base_path=/x", "--workers=0"], "flag --workers=0: 0 is not"),
    (["--model_base_path=/x", "--port=18810", "--rest_api_port=18810"],
     "--port and --rest_api_port are both 18810: give each its own port"),
])
def test_a_mistake_is_one_line(flags, message):
    refused = _serve(*flags)
    assert refused.returncode == 1, refused.stderr[-2000:]
    assert refused.stderr.strip().splitlines()[-1].startswith(f"error: {message}")


def test_a_bad_config_file_is_named(tmp_path):
    (tmp_path / "models.config").write_text("model_config_list { config { name: 'x' base_path: '/a' platform: 1 } }")
    (tmp_path / "monitoring.config").write_text("prometheus_config { enable: yes }")
    refused = _serve(f"--model_config_file={tmp_path / 'models.config'}")
    assert refused.returncode == 1 and 'models.config: not a ModelServerConfig: 1:' in refused.stderr
    assert 'has no field named "platform"' in refused.stderr
    refused = _serve("--model_base_path=/x", f"--monitoring_config_file={tmp_path / 'monitoring.config'}")
    assert refused.returncode == 1 and "monitoring.config: not a MonitoringConfig: 1:" in refused.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = _serve(f"--model_base_path={empty}", "--port=0")
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        f"error: rnnsearch: no version folder (an integer name holding saved_model.pb and variables/variables.index) "
        f"that the version policy serves in {empty}")


def test_sigterm_gives_requests_in_flight_a_second_then_ends_the_server(tmp_path_factory, tmp_path):
    """SIGTERM (`kill`, docker stop, Kubernetes) ends the server about a second later with status 0, also while
    requests are still running: here a gRPC and a REST request that wait a minute in the batch queue (as a long
    decode would run on), abandoned, not waited for (docker stop kills at 10 s)."""
    _, export_dir, _ = exported_model(tmp_path_factory)
    shutil.copytree(os.path.join(export_dir, "1"), tmp_path / "exports" / "1")
    os.remove(ExportDir(tmp_path / "exports").version(1).warmup_file)  # its requests would wait in the queue too
    (tmp_path / "batching.txt").write_text("max_batch_size { value: 64 }\nbatch_timeout_micros { value: 60000000 }\n")
    grpc_port, rest_port = free_port(), free_port()
    log = open(tmp_path / "serve.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", f"--model_base_path={tmp_path / 'exports'}",
         f"--port={grpc_port}", f"--rest_api_port={rest_port}",
         f"--batching_parameters_file={tmp_path / 'batching.txt'}"],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=log, text=True, env=_ENV)
    outcomes = {}

    def ask_grpc():
        try:
            GrpcClient(f"127.0.0.1:{grpc_port}", "rnnsearch", timeout=120).translate(["the cat"])
            outcomes["grpc"] = "answered"
        except grpc.RpcError as error:
            outcomes["grpc"] = error.code()

    def ask_rest():
        try:
            body = json.dumps({"signature_name": "translate", "instances": ["the dog"]}).encode()
            urllib.request.urlopen(f"http://127.0.0.1:{rest_port}/v1/models/rnnsearch:predict", body, timeout=120)
            outcomes["rest"] = "answered"
        except (OSError, http.client.HTTPException) as error:
            outcomes["rest"] = type(error).__name__

    try:
        assert process.stdout.readline().startswith("ready"), (tmp_path / "serve.log").read_text()[-3000:]
        clients = [threading.Thread(target=ask) for ask in (ask_grpc, ask_rest)]
        for client in clients:
            client.start()
        time.sleep(2)  # both requests wait in the queue
        assert not outcomes
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert time.monotonic() - stopping < 8
        assert process.stdout.read().splitlines()[-1] == "stopped"
        for client in clients:
            client.join(timeout=30)
    finally:
        process.kill()
        log.close()
    assert outcomes["grpc"] in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)
    assert outcomes["rest"] != "answered"
    assert "2 requests still decoding after their second were abandoned" in (tmp_path / "serve.log").read_text()
