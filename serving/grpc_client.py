"""A client of TensorFlow Serving's gRPC PredictionService (the real server or `serving.local_server`)."""

import grpc
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc


class GrpcClient:
    """Calls the signatures of one served model over gRPC (port 8500 by default in TF Serving).

    Args:
        server: "host:port".
        model_name: the served model's name.
        timeout: seconds per request.
        max_message_bytes: the largest response accepted.

    Raises (from every call): `grpc.RpcError`, whose `code()` is e.g. `INVALID_ARGUMENT` and whose
    `details()` says why.

    Example:
    >>> client = GrpcClient("localhost:8500", "rnnsearch")
    >>> client.translate(["A sentence."])["translation"]
    array([b'Une phrase.'], dtype=object)
    """

    def __init__(self, server, model_name, timeout=60.0, max_message_bytes=64 << 20):
        self.model_name = model_name
        self.timeout = timeout
        self._channel = grpc.insecure_channel(
            server,
            options=[
                ("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", -1),
            ],
        )
        self._stub = prediction_service_pb2_grpc.PredictionServiceStub(self._channel)

    def predict(self, inputs, signature_name="serving_default", output_filter=()):
        """{input name: array-like or TensorProto} -> {output name: NumPy array} of one signature."""
        request = predict_pb2.PredictRequest()
        request.model_spec.name = self.model_name
        request.model_spec.signature_name = signature_name
        request.output_filter.extend(output_filter)
        for name, value in inputs.items():
            proto = value if isinstance(value, tensor_pb2.TensorProto) else tf.make_tensor_proto(value)
            request.inputs[name].CopyFrom(proto)
        response = self._stub.Predict(request, timeout=self.timeout)
        return {name: tf.make_ndarray(proto) for name, proto in response.outputs.items()}

    def translate(self, sentences, signature_name="translate"):
        """Raw sentences (str or bytes) -> the `translate` outputs (see `Translator.translate`)."""
        return self.predict({"text": np.array(_as_bytes(sentences), dtype=object)}, signature_name)

    def translate_ids(self, source_ids):
        """int32 `[batch, src_len]` source ids (0-padded, no EOS) -> the `translate_ids` outputs."""
        return self.predict({"source_ids": np.asarray(source_ids, dtype=np.int32)}, "translate_ids")

    def score(self, sources, targets):
        """Raw sentence pairs -> the `score` outputs (`log_prob` per pair)."""
        return self.predict(
            {
                "source": np.array(_as_bytes(sources), dtype=object),
                "target": np.array(_as_bytes(targets), dtype=object),
            },
            "score",
        )

    def metadata(self):
        """{signature name: SignatureDef proto} of the served version."""
        request = get_model_metadata_pb2.GetModelMetadataRequest()
        request.model_spec.name = self.model_name
        request.metadata_field.append("signature_def")
        response = self._stub.GetModelMetadata(request, timeout=self.timeout)
        signature_defs = get_model_metadata_pb2.SignatureDefMap()
        response.metadata["signature_def"].Unpack(signature_defs)
        return dict(signature_defs.signature_def)

    def close(self):
        self._channel.close()


def _as_bytes(sentences):
    return [sentence.encode("utf-8") if isinstance(sentence, str) else bytes(sentence) for sentence in sentences]
