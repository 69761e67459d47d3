"""serving/prediction_service.py: PredictionService over a real Servable, on an in-process gRPC server.

The same API through real servers, and against `tensorflow_model_server`, is tests/test_local_server.py.
"""


import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc

from serving.grpc_client import GrpcClient
from serving.model_manager import ModelManager
from serving.prediction_service import PredictionService
from serving.servable import Servable
from helpers.serving_test_utils import SENTENCES, exported_model, grpc_server

MAX_INPUT_BYTES = 1 << 16


@pytest.fixture(scope="module")
def servable(tmp_path_factory):
    return Servable(exported_model(tmp_path_factory)[1], "rnnsearch")


@pytest.fixture(scope="module")
def address(servable):
    with grpc_server(PredictionService(ModelManager.serving(servable), max_input_bytes=MAX_INPUT_BYTES).add_to_server) as address:
        yield address


@pytest.fixture(scope="module")
def client(address):
    client = GrpcClient(address, "rnnsearch")
    yield client
    client.close()


def _expect_error(code, pattern, call):
    with pytest.raises(grpc.RpcError) as raised:
        call()
    assert raised.value.code() == code, raised.value.details()
    assert pattern in raised.value.details(), raised.value.details()


def test_predict_answers_as_the_servable(client, servable):
    text = np.array([sentence.encode("utf-8") for sentence in SENTENCES], object)
    expected = servable.predict("translate", {"text": text})
    for signature_name in ("translate", "serving_default", ""):
        outputs = client.predict({"text": text}, signature_name)
        assert sorted(outputs) == sorted(expected)
        np.testing.assert_array_equal(outputs["translation"], expected["translation"])
        np.testing.assert_allclose(outputs["alignment"], expected["alignment"], rtol=1e-6)
    filtered = client.predict({"text": text}, "translate", output_filter=("translation",))
    assert list(filtered) == ["translation"]


def test_the_response_names_the_model_version_and_signature(address):
    request = predict_pb2.PredictRequest()
    request.model_spec.name = "rnnsearch"
    request.model_spec.version.value = 1
    request.inputs["text"].CopyFrom(tf.make_tensor_proto(np.array([b"the cat"], object)))
    with grpc.insecure_channel(address) as channel:
        response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=60)
    assert (response.model_spec.name, response.model_spec.version.value) == ("rnnsearch", 1)
    assert response.model_spec.signature_name == "serving_default"


def test_another_model_or_version_is_not_found(address):
    other = GrpcClient(address, "other_model")
    _expect_error(grpc.StatusCode.NOT_FOUND, "'other_model'", lambda: other.translate(["a"]))
    _expect_error(grpc.StatusCode.NOT_FOUND, "'other_model'", other.metadata)
    other.close()
    request = predict_pb2.PredictRequest()
    request.model_spec.name, request.model_spec.signature_name = "rnnsearch", "translate"
    request.model_spec.version.value = 999
    request.inputs["text"].CopyFrom(tf.make_tensor_proto(np.array([b"a"], object)))
    with grpc.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        _expect_error(grpc.StatusCode.NOT_FOUND, "version 999", lambda: stub.Predict(request, timeout=60))


def test_a_version_label_is_invalid_argument_as_tf_serving_answers_an_unknown_one(address):
    request = predict_pb2.PredictRequest()
    request.model_spec.name, request.model_spec.version_label = "rnnsearch", "stable"
    request.inputs["text"].CopyFrom(tf.make_tensor_proto(np.array([b"a"], object)))
    metadata = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
    metadata.model_spec.CopyFrom(request.model_spec)
    with grpc.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        for call in (lambda: stub.Predict(request, timeout=60), lambda: stub.GetModelMetadata(metadata, timeout=60)):
            _expect_error(grpc.StatusCode.INVALID_ARGUMENT, "Unrecognized servable version label: stable", call)


def test_bad_inputs_are_invalid_argument_with_the_reason(client, address):
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    _expect_error(invalid, "must be string", lambda: client.predict({"text": np.array([1, 2], np.int32)}, "translate"))
    _expect_error(invalid, "takes inputs ['text']", lambda: client.predict({"sentences": np.array([b"a"], object)}))
    _expect_error(invalid, "no_such_signature", lambda: client.predict({"text": np.array([b"a"], object)},
                                                                        "no_such_signature"))
    _expect_error(invalid, "has no outputs ['nothing']", lambda: client.predict(
        {"text": np.array([b"a"], object)}, "translate", output_filter=("nothing",)))
    _expect_error(invalid, "vocabulary ids", lambda: client.translate_ids([[4, 1000]]))  # refused by the graph
    _expect_error(invalid, "as many sentences", lambda: client.score(["a", "b"], ["la"]))
    huge = tf.make_tensor_proto(np.array([b"a"], object))
    huge.tensor_shape.dim[0].size = 10**12  # a few bytes that declare a terabyte
    _expect_error(invalid, "declares 1000000000000 elements", lambda: client.predict({"text": huge}, "translate"))
    copies = tf.make_tensor_proto(np.array([b"x" * 64], object))
    copies.tensor_shape.dim[0].size = MAX_INPUT_BYTES // 64 + 1  # expands past the limit
    _expect_error(invalid, f"at most {MAX_INPUT_BYTES} are accepted", lambda: client.predict({"text": copies}))
    over = tf.make_tensor_proto(np.array([b"a"], object))
    over.tensor_shape.dim[0].size = 1001  # the export's maximum_batch_size is 1000
    _expect_error(invalid, "holds 1001 sentences", lambda: client.predict({"text": over}, "translate"))
    with grpc.insecure_channel(address) as channel:
        raw_predict = channel.unary_unary("/tensorflow.serving.PredictionService/Predict",
                                          request_serializer=lambda data: data, response_deserializer=lambda data: data)
        _expect_error(invalid, "not a valid PredictRequest", lambda: raw_predict(b"\xff\xff\xff\xff", timeout=60))
    assert client.translate(["the dog"])["translation"].shape == (1,)  # the server lives


def test_metadata_is_the_signature_defs(client, servable, address):
    signatures = client.metadata()
    assert sorted(signatures) == sorted(servable.signature_defs)
    assert signatures["translate"] == servable.signature_defs["translate"]
    request = get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = "rnnsearch"
    request.metadata_field.append("labels")
    with grpc.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        _expect_error(grpc.StatusCode.INVALID_ARGUMENT, "metadata_field must be ['signature_def']",
                      lambda: stub.GetModelMetadata(request, timeout=60))


def test_an_unexpected_failure_is_internal(client, servable, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(servable, "predict", broken)
    _expect_error(grpc.StatusCode.INTERNAL, "RuntimeError: disk on fire", lambda: client.translate(["the cat"]))
