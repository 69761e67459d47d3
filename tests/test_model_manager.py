"""serving/model_manager.py: several models, the start-up look and the polling thread; and a real server switching
versions twice under concurrent gRPC and REST clients without one failed or mixed answer."""

import json
import os
import threading
import time
import urllib.request

import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

from serving.batching import BatchingParameters
from serving.local_server import LocalServer
from serving.model_manager import ModelManager
from serving.request_status import ServableNotFound
from serving.served_model import ServedModel, State
from helpers.versioned_exports import PROBES, copy_version, expected_translations, staged_versions


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return staged_versions(tmp_path_factory)


@pytest.fixture(scope="module")
def expected(staged, tmp_path_factory):
    return expected_translations(tmp_path_factory, staged)


def test_models_need_their_own_names_and_unknown_ones_are_named():
    with pytest.raises(ValueError, match="model name 'a' is given twice"):
        ModelManager([ServedModel("a"), ServedModel("a")])
    with pytest.raises(ValueError, match="no model to serve"):
        ModelManager([])
    manager = ModelManager([ServedModel("enfr"), ServedModel("fren")])
    assert manager.default_model_name == "enfr" and manager.model("fren").name == "fren"
    with pytest.raises(ServableNotFound, match=r"Latest\(deen\): no model 'deen'; this server has \['enfr', 'fren'\]"):
        manager.model("deen")


def test_start_refuses_a_model_without_a_loadable_version(staged, tmp_path):
    copy_version(staged, 1, tmp_path / "complete")
    copy_version(staged, 1, tmp_path / "partial", complete=False)
    models = [ServedModel("complete", tmp_path / "complete"), ServedModel("partial", tmp_path / "partial")]
    with pytest.raises(FileNotFoundError, match=r"partial: no version folder .* variables/variables.index"):
        ModelManager(models, 0).start()
    broken = copy_version(staged, 1, tmp_path / "broken")
    os.remove(os.path.join(broken, "saved_model.pb"))
    with open(os.path.join(broken, "saved_model.pb"), "wb") as stream:
        stream.write(b"\xff")
    with pytest.raises(FileNotFoundError, match=r"broken: no version of .* loaded \(version 1: .*\)"):
        ModelManager([ServedModel("broken", tmp_path / "broken")], 0).start()


# large: three loads of a version and the watcher; the default suite watches one model's new version
# (tests/test_served_model.py)
@pytest.mark.large
def test_the_watcher_loads_a_new_version_of_each_model(staged, expected, tmp_path):
    copy_version(staged, 1, tmp_path / "enfr")
    copy_version(staged, 2, tmp_path / "fren")
    manager = ModelManager([ServedModel("enfr", tmp_path / "enfr"), ServedModel("fren", tmp_path / "fren")],
                           poll_wait_seconds=0.05).start()
    try:
        assert manager.model("enfr").available_versions() == [1] and manager.model("fren").available_versions() == [2]
        copy_version(staged, 3, tmp_path / "enfr")
        deadline = time.monotonic() + 120
        while manager.model("enfr").available_versions() != [3] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert manager.model("enfr").available_versions() == [3]
        assert manager.model("fren").available_versions() == [2]
    finally:
        manager.close()


def _grpc_answer(channel):
    request = predict_pb2.PredictRequest()
    request.model_spec.name, request.model_spec.signature_name = "rnnsearch", "translate"
    request.inputs["text"].CopyFrom(tf.make_tensor_proto(np.array([probe.encode() for probe in PROBES], object)))
    response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=120)
    texts = [text.decode("utf-8") for text in tf.make_ndarray(response.outputs["translation"])]
    return response.model_spec.version.value, texts


def _rest_answer(url):
    body = json.dumps({"signature_name": "translate", "instances": PROBES}).encode("utf-8")
    request = urllib.request.Request(f"{url}/v1/models/rnnsearch:predict", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        version = int(response.headers["X-Model-Version"])
        return version, [prediction["translation"] for prediction in json.loads(response.read())["predictions"]]


def _client(index, server, model, stop, answers, errors):
    """Asks until `stop`; records (versions AVAILABLE before asking, answer's version, its texts, after)."""
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        while not stop.is_set():
            before = model.available_versions()
            try:
                if index % 2:
                    version, texts = _rest_answer(f"http://127.0.0.1:{server.rest_api_port}")
                else:
                    version, texts = _grpc_answer(channel)
            except Exception as error:  # every failure is a finding
                errors.append(f"{type(error).__name__}: {error}")
                continue
            answers.append((index, before, version, texts, model.available_versions()))
    finally:
        channel.close()


def _wait_for_answers_of(version, answers, deadline):
    while not any(answer[2] == version for answer in list(answers)):
        assert time.monotonic() < deadline, f"no answer of version {version} in time"
        time.sleep(0.05)


def _switch_twice_under_load(staged, expected, base_path, clients):
    copy_version(staged, 1, base_path)
    batching = BatchingParameters(max_batch_size=8, batch_timeout_micros=5000, num_batch_threads=2)
    model = ServedModel("rnnsearch", base_path, batching=batching)
    manager = ModelManager([model], poll_wait_seconds=0.05).start()
    server = LocalServer(manager, rest_api_port=0, workers=clients + 4).start()
    stop, answers, errors = threading.Event(), [], []
    threads = [threading.Thread(target=_client, args=(index, server, model, stop, answers, errors))
               for index in range(clients)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 300
        _wait_for_answers_of(1, answers, deadline)
        copy_version(staged, 2, base_path)  # copied in place, not renamed: seen half-copied first
        _wait_for_answers_of(2, answers, deadline)
        copy_version(staged, 3, base_path)
        _wait_for_answers_of(3, answers, deadline)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=300)
        server.stop()
        manager.close()
    assert errors == []
    last = {}
    for index, before, version, texts, after in answers:
        assert texts == expected[version], (version, texts)  # no answer mixes versions
        assert min(before) <= version <= max(after)  # a version AVAILABLE while it was asked
        assert version >= last.get(index, 0)  # a client never goes back to an older version
        last[index] = version
    assert {version for _, _, version, _, _ in answers} == {1, 2, 3}
    assert len({index for index, *_ in answers}) == clients


@pytest.mark.large  # three SavedModel loads under load: over a minute; the watcher's switch is tested above
def test_eight_clients_see_two_switches_without_an_error(staged, expected, tmp_path):
    _switch_twice_under_load(staged, expected, tmp_path / "rnnsearch", clients=8)


@pytest.mark.large
def test_thirty_two_clients_see_two_switches_without_an_error(staged, expected, tmp_path):
    _switch_twice_under_load(staged, expected, tmp_path / "rnnsearch", clients=32)


def test_close_waits_for_requests_in_flight_at_most_its_timeout(staged, tmp_path):
    """A stopping server (`rnnsearch serve`) gives the requests in flight a bounded time: a version that a request
    still holds then is left to it, unclosed, and counted; the other models are unloaded."""
    copy_version(staged, 1, tmp_path / "enfr")
    copy_version(staged, 2, tmp_path / "fren")
    manager = ModelManager([ServedModel("enfr", tmp_path / "enfr"), ServedModel("fren", tmp_path / "fren")], 0.2)
    manager.start()
    with manager.model("enfr").servable() as held:
        started = time.monotonic()
        assert manager.close(timeout=0.5) == 1
        assert 0.5 <= time.monotonic() - started < 5
        assert [(version, state) for version, state, _ in manager.model("enfr").version_status()] == [
            (1, State.UNLOADING)]
        assert [(version, state) for version, state, _ in manager.model("fren").version_status()] == [(2, State.END)]
        assert held.predict("translate", {"text": np.array([b"dog"], object)})["translation"].shape == (1,)
