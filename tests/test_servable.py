"""serving/servable.py: warm-up before serving, and batched requests over a real local server."""

import concurrent.futures
import itertools
import json
import os
import shutil
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from data_pipeline.export_dir import WARMUP_FILE
from serving import export
from serving.batching import BatchingParameters
from serving.grpc_client import GrpcClient
from serving.local_server import LocalServer
from serving.model_manager import ModelManager
from serving.rest_client import RestClient
from serving.servable import Servable
from helpers.serving_test_utils import SEARCH_OPTIONS, SOURCE_WORDS, exported_model

# 64 different sentences of the tiny model's source words, of 1 to 6 words.
SENTENCES = [" ".join(words) for words in itertools.islice(
    (combination for length in range(1, 7) for combination in itertools.permutations(SOURCE_WORDS[:6], length)),
    0, 64 * 30, 30)]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return exported_model(tmp_path_factory)[1]


@pytest.fixture(scope="module")
def servable(export_dir):
    """The export loaded without batching (a version loads in seconds: loaded once for the tests that only read
    it or ask it)."""
    return Servable(export_dir, "rnnsearch")


def test_the_export_warms_up_the_servable(servable):
    # translate 1 sentence and 2, then one request of serving_default, translate_prefix, translate_constrained,
    # translate_ids and score: every signature that searches or scores (serving/export.py)
    assert servable.warmup_requests == 7


def test_a_version_is_loaded_by_number_and_its_load_counted(export_dir):
    from serving.metrics import ServerMetrics

    metrics = ServerMetrics()
    servable = Servable(export_dir, "rnnsearch", version=1, metrics=metrics)
    assert (servable.version, servable.path) == (1, os.path.join(str(export_dir), "1"))
    with pytest.raises(Exception, match="saved_model.pb"):
        Servable(export_dir, "rnnsearch", version=7, metrics=metrics)
    counted = metrics.exposition().decode("utf-8")
    assert f'load_attempt_count_total{{model_path="{servable.path}",status="success"}} 1.0' in counted
    assert f'load_attempt_count_total{{model_path="{os.path.join(str(export_dir), "7")}",status="fail"}} 1.0' in counted


def test_a_broken_warmup_file_is_named(export_dir, tmp_path):
    copy = tmp_path / "rnnsearch"
    shutil.copytree(export_dir, copy)
    version = sorted(name for name in os.listdir(copy) if name.isdigit())[-1]
    with tf.io.TFRecordWriter(str(copy / version / WARMUP_FILE)) as writer:
        writer.write(b"not a PredictionLog")
    with pytest.raises(Exception, match=WARMUP_FILE.replace(".", r"\.")):
        Servable(copy, "rnnsearch")


def test_a_failing_warmup_request_is_named_by_its_record_though_they_run_two_at_a_time(export_dir, tmp_path):
    copy = tmp_path / "rnnsearch"
    shutil.copytree(export_dir, copy)
    version = sorted(name for name in os.listdir(copy) if name.isdigit())[-1]
    export.write_warmup_requests(str(copy / version / WARMUP_FILE), ["the cat"], [4])
    records = list(tf.data.TFRecordDataset(str(copy / version / WARMUP_FILE)).as_numpy_iterator())
    failing = prediction_log_pb2.PredictionLog.FromString(records[4])
    failing.predict_log.request.model_spec.signature_name = "nope"  # the fifth of seven
    with tf.io.TFRecordWriter(str(copy / version / WARMUP_FILE)) as writer:
        for record in records[:4] + [failing.SerializeToString()] + records[5:]:
            writer.write(record)
    with pytest.raises(ValueError, match=r"tf_serving_warmup_requests: warm-up request 5 failed: signature 'nope' "
                                         r"not found"):
        Servable(copy, "rnnsearch")


def test_64_sentences_from_32_threads_each_get_their_own_translation(export_dir, servable):
    assert len(set(SENTENCES)) == 64
    expected = [servable.predict("translate", {"text": np.array([sentence.encode()], dtype=object)})
                for sentence in SENTENCES]
    batching = BatchingParameters(max_batch_size=16, batch_timeout_micros=20_000, num_batch_threads=2)
    batched = Servable(export_dir, "rnnsearch", batching)
    server = LocalServer(ModelManager.serving(batched), rest_api_port=0, workers=32).start()
    clients = [GrpcClient(f"127.0.0.1:{server.port}", "rnnsearch"),
               RestClient(f"http://127.0.0.1:{server.rest_api_port}", "rnnsearch")]
    try:
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            answers = list(pool.map(lambda index: clients[index % 2].translate([SENTENCES[index]]), range(64)))
    finally:
        server.stop()
        batched.close()
    for sentence, answer, wanted in zip(SENTENCES, answers, expected):
        assert [_text(value) for value in answer["translation"]] == [_text(wanted["translation"][0])], sentence
        np.testing.assert_allclose(np.asarray(answer["score"], dtype=np.float32), wanted["score"], rtol=1e-4,
                                   err_msg=sentence)


# large: an export of its own (27 s); the default suite caps batching at an export's maximum_batch_size
# (tests/test_batching.py) and translates through an export of maximum_batch_size=1 (tests/test_batch_translator.py)
@pytest.mark.large
def test_an_export_of_one_sentence_a_request_warms_up_and_serves_batched_requests(tmp_path_factory, tmp_path):
    from rnnsearch_tf.inference.translator import Translator

    model_dir = exported_model(tmp_path_factory)[0]  # the session's one model
    narrow = str(tmp_path / "narrow")
    export.export(Translator.from_model_dir(model_dir, maximum_batch_size=1, **SEARCH_OPTIONS), narrow)
    written = BatchingParameters.from_file(os.path.join(narrow, "batching_parameters.txt"))
    assert written == BatchingParameters(max_batch_size=1)
    for batching in (written, BatchingParameters()):  # a file of 16 written for an earlier version is capped
        batched = Servable(narrow, "rnnsearch", batching)
        try:
            assert batched.warmup_requests == 7
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(lambda sentence: batched.predict(
                    "translate", {"text": np.array([sentence.encode()], dtype=object)}), SENTENCES[:8]))
        finally:
            batched.close()
        assert [len(answer["translation"]) for answer in answers] == [1] * 8


def test_a_server_that_refuses_work_answers_unavailable_and_503(export_dir):
    servable = Servable(export_dir, "rnnsearch", BatchingParameters())
    server = LocalServer(ModelManager.serving(servable), rest_api_port=0).start()
    servable.close()  # its batcher takes nothing more, as when the queue is full
    try:
        with pytest.raises(grpc.RpcError) as raised:
            GrpcClient(f"127.0.0.1:{server.port}", "rnnsearch").translate(["the cat"])
        assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.rest_api_port}/v1/models/rnnsearch:predict",
            json.dumps({"signature_name": "translate", "instances": [{"text": "the cat"}]}).encode(),
            {"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 503
        assert "shutting down" in json.loads(refused.value.read())["error"]
    finally:
        server.stop()


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value
