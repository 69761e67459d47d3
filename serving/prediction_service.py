"""TensorFlow Serving's gRPC PredictionService (Predict, GetModelMetadata) over the models of a `ModelManager`."""

import time

import grpc
import tensorflow as tf
from google.protobuf import message
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc

from serving.metrics import ServerMetrics
from serving.request_status import error_message, grpc_code, unknown_label


class MalformedRequest:
    """A request whose bytes did not parse, with the parser's reason."""

    def __init__(self, reason):
        self.reason = reason


def _lenient_parser(message_class):
    def parse(data):
        try:
            return message_class.FromString(data)
        except message.DecodeError as error:
            return MalformedRequest(f"the request is not a valid {message_class.__name__}: {error}")

    return parse


def check_well_formed(request, context):
    """Aborts with INVALID_ARGUMENT, naming the parser's reason, a request that did not parse (`MalformedRequest`)."""
    if isinstance(request, MalformedRequest):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.reason)


def requested_version(model_spec):
    """The version a `ModelSpec` names, None for the newest (TF Serving's `version` wrapper, unset); ValueError
    (INVALID_ARGUMENT) for a `version_label`, as TF Serving answers a label its config does not define (this
    server defines none: `serving.model_server_config`)."""
    if model_spec.WhichOneof("version_choice") == "version_label":
        raise unknown_label(model_spec.version_label)
    return model_spec.version.value if model_spec.HasField("version") else None


def add_lenient_handlers(server, service_name, methods):
    """Registers `methods` ({name: (method, request class, response class)}) of `service_name` on a
    `grpc.Server`; a request that is not a valid protobuf reaches its method as `MalformedRequest` (gRPC's own
    deserializer would answer INTERNAL, a server error, for the caller's mistake)."""
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(method, request_deserializer=_lenient_parser(request_class),
                                                  response_serializer=response_class.SerializeToString)
        for name, (method, request_class, response_class) in methods.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service_name, handlers),))


class PredictionService(prediction_service_pb2_grpc.PredictionServiceServicer):
    """Answers Predict and GetModelMetadata as `tensorflow_model_server` does; never raises.

    A request for a model or version that is not AVAILABLE answers NOT_FOUND; a bad signature, input name,
    dtype or shape, a malformed TensorProto, or an input the graph refuses answers INVALID_ARGUMENT with the
    reason; any other failure answers its TensorFlow status (INTERNAL when it has none). The version that
    answered is the response's `model_spec.version`; it stays loaded until the answer is made, even when a
    newer version replaces it meanwhile. Classify, Regress and MultiInference answer UNIMPLEMENTED (the
    servicer's default).

    Args:
        models: the `serving.model_manager.ModelManager` to answer for.
        max_input_bytes: the most bytes an input tensor may expand to. A TensorProto can declare a huge
            shape in a few bytes (its last value is then repeated to fill it), so each input's expanded
            size (elements x the largest value's bytes) is checked before it is built, which bounds the
            memory one request can make the server allocate. A batch over the export's
            `maximum_batch_size` is refused too.
        metrics: `serving.metrics.ServerMetrics` counting each Predict (a new one by default).
    """

    def __init__(self, models, max_input_bytes=4 << 20, metrics=None):
        self.models = models
        self.max_input_bytes = max_input_bytes
        self.metrics = metrics or ServerMetrics()

    def add_to_server(self, server):
        """Registers Predict and GetModelMetadata on a `grpc.Server` (a malformed request is answered
        INVALID_ARGUMENT: `add_lenient_handlers`)."""
        add_lenient_handlers(server, "tensorflow.serving.PredictionService", {
            "Predict": (self.Predict, predict_pb2.PredictRequest, predict_pb2.PredictResponse),
            "GetModelMetadata": (self.GetModelMetadata, get_model_metadata_pb2.GetModelMetadataRequest,
                                 get_model_metadata_pb2.GetModelMetadataResponse),
        })

    def Predict(self, request, context):
        check_well_formed(request, context)
        signature_name = request.model_spec.signature_name or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        started, version, signatures = time.perf_counter(), None, ()
        try:
            model = self.models.model(request.model_spec.name)
            with model.servable(requested_version(request.model_spec)) as servable:
                version, signatures = servable.version, servable.signature_defs
                for name, proto in request.inputs.items():
                    self._check_input_size(name, proto, servable.maximum_batch_size)
                inputs = {name: _make_ndarray(proto) for name, proto in request.inputs.items()}
                outputs = servable.predict(signature_name, inputs, tuple(request.output_filter))
        except Exception as error:  # the server outlives any failure of one request
            code = grpc_code(error)
            self.metrics.record_request(request.model_spec.name, version, signature_name, "GRPC", code.name,
                                        time.perf_counter() - started, signatures=signatures,
                                        served_models=self.models.models)
            context.abort(code, error_message(error))
        response = predict_pb2.PredictResponse()
        response.model_spec.name = request.model_spec.name
        response.model_spec.version.value = version
        response.model_spec.signature_name = signature_name
        for name, value in outputs.items():
            response.outputs[name].CopyFrom(tf.make_tensor_proto(value))
        self.metrics.record_request(request.model_spec.name, version, signature_name, "GRPC", "OK",
                                    time.perf_counter() - started)
        return response

    def _check_input_size(self, name, proto, maximum):
        """ValueError (INVALID_ARGUMENT) for an input that expands past `max_input_bytes`, or of more than
        `maximum` sentences (the export's `maximum_batch_size`; None: no limit)."""
        dimensions = [max(dimension.size, 0) for dimension in proto.tensor_shape.dim]
        elements = 1
        for size in dimensions:
            elements *= size
        if proto.dtype == tf.string.as_datatype_enum:
            value_bytes = max((len(value) for value in proto.string_val), default=0)
        else:
            value_bytes = tf.as_dtype(proto.dtype).size if proto.dtype else 1
        if elements * max(value_bytes, 1) > self.max_input_bytes:
            raise ValueError(
                f"input {name!r} declares {elements} elements of up to {value_bytes} bytes, "
                f"{elements * max(value_bytes, 1)} bytes in all; at most {self.max_input_bytes} are accepted")
        if dimensions and maximum and dimensions[0] > maximum:
            raise ValueError(f"input {name!r} holds {dimensions[0]} sentences; this model takes at most {maximum} "
                             "per request")

    def GetModelMetadata(self, request, context):
        check_well_formed(request, context)
        unknown = sorted(set(request.metadata_field) - {"signature_def"})
        if unknown or not request.metadata_field:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"metadata_field must be ['signature_def'], got {list(request.metadata_field)}",
            )
        try:
            model = self.models.model(request.model_spec.name)
            with model.servable(requested_version(request.model_spec)) as servable:
                version, signature_defs = servable.version, servable.signature_defs
        except Exception as error:
            context.abort(grpc_code(error), error_message(error))
        signature_def_map = get_model_metadata_pb2.SignatureDefMap()
        for name, signature_def in signature_defs.items():
            signature_def_map.signature_def[name].CopyFrom(signature_def)
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        response.model_spec.name = request.model_spec.name
        response.model_spec.version.value = version
        response.metadata["signature_def"].Pack(signature_def_map)
        return response


def _make_ndarray(proto):
    """`tf.make_ndarray`, a malformed TensorProto of any kind being the caller's mistake (ValueError)."""
    try:
        return tf.make_ndarray(proto)
    except Exception as error:
        raise ValueError(f"malformed input tensor: {error}") from None
