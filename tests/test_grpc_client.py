"""serving/grpc_client.py: the requests GrpcClient sends are TF Serving's PredictionService requests of what it
is given, and the answers come back as NumPy arrays; errors, deadlines and the message limit reach the caller.

A recording PredictionService (TF Serving's API, none of our code) answers here; GrpcClient against our
server over a real export is tests/test_prediction_service.py and tests/test_local_server.py.
"""

import time

import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import meta_graph_pb2
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc

from serving.grpc_client import GrpcClient
from helpers.serving_test_utils import grpc_server


class RecordingService(prediction_service_pb2_grpc.PredictionServiceServicer):
    """Answers each Predict with its inputs as outputs (filtered as asked), and records the requests."""

    def __init__(self):
        self.requests = []

    def Predict(self, request, context):
        self.requests.append(request)
        if request.model_spec.signature_name == "refuse":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "text must be a string vector")
        if request.model_spec.signature_name == "slow":
            time.sleep(1.0)  # five times the impatient client's deadline
        response = predict_pb2.PredictResponse()
        for name, proto in request.inputs.items():
            if not request.output_filter or name in request.output_filter:
                response.outputs[name].CopyFrom(proto)
        return response

    def GetModelMetadata(self, request, context):
        self.requests.append(request)
        signature_defs = get_model_metadata_pb2.SignatureDefMap()
        signature = signature_defs.signature_def["translate"]
        signature.method_name = "tensorflow/serving/predict"
        signature.inputs["text"].CopyFrom(meta_graph_pb2.TensorInfo(name="text:0", dtype=tf.string.as_datatype_enum))
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        response.model_spec.name = request.model_spec.name
        response.metadata["signature_def"].Pack(signature_defs)
        return response


@pytest.fixture(scope="module")
def service():
    return RecordingService()


@pytest.fixture(scope="module")
def address(service):
    with grpc_server(lambda server: prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(
            service, server)) as address:
        yield address


@pytest.fixture(scope="module")
def client(address):
    client = GrpcClient(address, "rnnsearch", timeout=30)
    yield client
    client.close()


def test_translate_sends_utf8_sentences_to_the_named_model_and_signature(client, service):
    sentences = ["The cat.", "Le café", b"raw \xff bytes"]
    outputs = client.translate(sentences)
    request = service.requests[-1]
    assert (request.model_spec.name, request.model_spec.signature_name) == ("rnnsearch", "translate")
    assert list(request.inputs) == ["text"]
    text = tf.make_ndarray(request.inputs["text"])
    assert text.shape == (3,) and list(text) == [b"The cat.", "Le café".encode("utf-8"), b"raw \xff bytes"]
    assert list(outputs) == ["text"] and list(outputs["text"]) == list(text)  # a NumPy array of bytes
    client.translate(["a"], signature_name="serving_default")
    assert service.requests[-1].model_spec.signature_name == "serving_default"


def test_translate_ids_and_score_send_their_signatures_inputs(client, service):
    outputs = client.translate_ids([[4, 6, 9, 0], [7, 0, 0, 0]])
    request = service.requests[-1]
    assert request.model_spec.signature_name == "translate_ids"
    assert request.inputs["source_ids"].dtype == tf.int32.as_datatype_enum
    np.testing.assert_array_equal(outputs["source_ids"], [[4, 6, 9, 0], [7, 0, 0, 0]])
    assert outputs["source_ids"].dtype == np.int32
    outputs = client.score(["the cat", "a dog"], ["le chat", b"un chien"])
    request = service.requests[-1]
    assert request.model_spec.signature_name == "score" and sorted(request.inputs) == ["source", "target"]
    assert list(outputs["source"]) == [b"the cat", b"a dog"] and list(outputs["target"]) == [b"le chat", b"un chien"]


def test_predict_takes_arrays_or_tensor_protos_and_filters_outputs(client, service):
    proto = tf.make_tensor_proto(np.array([b"x"], object))
    outputs = client.predict({"text": proto, "lengths": np.array([3.5, 1.0], np.float32)}, "translate",
                             output_filter=("lengths",))
    request = service.requests[-1]
    assert request.inputs["text"] == proto and list(request.output_filter) == ["lengths"]
    assert list(outputs) == ["lengths"] and outputs["lengths"].dtype == np.float32
    np.testing.assert_array_equal(outputs["lengths"], [3.5, 1.0])


def test_metadata_unpacks_the_signature_defs(client, service):
    signatures = client.metadata()
    request = service.requests[-1]
    assert request.model_spec.name == "rnnsearch" and list(request.metadata_field) == ["signature_def"]
    assert list(signatures) == ["translate"]
    assert signatures["translate"].inputs["text"].dtype == tf.string.as_datatype_enum


def test_the_servers_error_reaches_the_caller_with_its_code_and_reason(client):
    with pytest.raises(grpc.RpcError) as raised:
        client.predict({"text": np.array([1, 2], np.int32)}, "refuse")
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details() == "text must be a string vector"


def test_a_request_past_its_timeout_is_deadline_exceeded(address):
    impatient = GrpcClient(address, "rnnsearch", timeout=0.2)
    try:
        with pytest.raises(grpc.RpcError) as raised:
            impatient.translate(["a"], signature_name="slow")
        assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    finally:
        impatient.close()


def test_a_response_over_max_message_bytes_is_refused(address):
    small = GrpcClient(address, "rnnsearch", max_message_bytes=1000)
    try:
        assert small.translate(["x" * 100])["text"].shape == (1,)
        with pytest.raises(grpc.RpcError) as raised:
            small.translate(["x" * 2000])  # sending it is not limited; its echo is
        assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        small.close()
