"""TensorFlow Serving's gRPC PredictionService (Predict, GetModelMetadata) over one `Servable`."""

import grpc
import tensorflow as tf
from google.protobuf import message
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc

# tf.errors codes are the gRPC status codes, by number.
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


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


def _check_well_formed(request, context):
    if isinstance(request, MalformedRequest):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.reason)


class PredictionService(prediction_service_pb2_grpc.PredictionServiceServicer):
    """Answers Predict and GetModelMetadata as `tensorflow_model_server` does; never raises.

    A request for another model or version answers NOT_FOUND; a bad signature, input name, dtype or
    shape, a malformed TensorProto, or an input the graph refuses answers INVALID_ARGUMENT with the
    reason; any other failure answers its TensorFlow status (INTERNAL when it has none). Classify,
    Regress and MultiInference answer UNIMPLEMENTED (the servicer's default).

    Args:
        servable: the `Servable` to answer for.
        max_input_bytes: the most bytes an input tensor may expand to. A TensorProto can declare a huge
            shape in a few bytes (its last value is then repeated to fill it), so each input's expanded
            size (elements x the largest value's bytes) is checked before it is built, which bounds the
            memory one request can make the server allocate. A batch over the export's
            `maximum_batch_size` is refused too.
    """

    def __init__(self, servable, max_input_bytes=4 << 20):
        self.servable = servable
        self.max_input_bytes = max_input_bytes

    def _check_model_spec(self, model_spec, context):
        if model_spec.name != self.servable.model_name:
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"Servable not found for request: model {model_spec.name!r}; this server has "
                f"{self.servable.model_name!r}",
            )
        if model_spec.HasField("version") and model_spec.version.value != self.servable.version:
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"version {model_spec.version.value} of {model_spec.name!r} is not served (serving "
                f"{self.servable.version})",
            )

    def add_to_server(self, server):
        """Registers Predict and GetModelMetadata on a `grpc.Server`; a request that is not a valid
        protobuf reaches them as `MalformedRequest` and is answered INVALID_ARGUMENT (gRPC's own
        deserializer would answer INTERNAL, a server error, for the caller's mistake)."""
        handlers = {
            name: grpc.unary_unary_rpc_method_handler(
                method,
                request_deserializer=_lenient_parser(request_class),
                response_serializer=response_class.SerializeToString,
            )
            for name, method, request_class, response_class in (
                ("Predict", self.Predict, predict_pb2.PredictRequest, predict_pb2.PredictResponse),
                ("GetModelMetadata", self.GetModelMetadata, get_model_metadata_pb2.GetModelMetadataRequest,
                 get_model_metadata_pb2.GetModelMetadataResponse),
            )
        }
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("tensorflow.serving.PredictionService", handlers),)
        )

    def Predict(self, request, context):
        _check_well_formed(request, context)
        self._check_model_spec(request.model_spec, context)
        for name, proto in request.inputs.items():
            self._check_input_size(name, proto, context)
        try:
            inputs = {name: tf.make_ndarray(proto) for name, proto in request.inputs.items()}
        except Exception as error:  # a malformed TensorProto of any kind is the caller's mistake
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed input tensor: {error}")
        try:
            outputs = self.servable.predict(
                request.model_spec.signature_name, inputs, tuple(request.output_filter)
            )
        except ValueError as error:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except tf.errors.OpError as error:
            context.abort(_STATUS_CODES.get(error.error_code, grpc.StatusCode.INTERNAL), error.message)
        except Exception as error:  # the server outlives any failure of one request
            context.abort(grpc.StatusCode.INTERNAL, f"{type(error).__name__}: {error}")
        response = predict_pb2.PredictResponse()
        response.model_spec.name = self.servable.model_name
        response.model_spec.version.value = self.servable.version
        response.model_spec.signature_name = (
            request.model_spec.signature_name or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        )
        for name, value in outputs.items():
            response.outputs[name].CopyFrom(tf.make_tensor_proto(value))
        return response

    def _check_input_size(self, name, proto, context):
        """Aborts with INVALID_ARGUMENT before building an input that is too big or too many sentences."""
        dimensions = [max(dimension.size, 0) for dimension in proto.tensor_shape.dim]
        elements = 1
        for size in dimensions:
            elements *= size
        if proto.dtype == tf.string.as_datatype_enum:
            value_bytes = max((len(value) for value in proto.string_val), default=0)
        else:
            value_bytes = tf.as_dtype(proto.dtype).size if proto.dtype else 1
        if elements * max(value_bytes, 1) > self.max_input_bytes:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"input {name!r} declares {elements} elements of up to {value_bytes} bytes, "
                f"{elements * max(value_bytes, 1)} bytes in all; at most {self.max_input_bytes} are accepted",
            )
        maximum = self.servable.maximum_batch_size
        if dimensions and maximum and dimensions[0] > maximum:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"input {name!r} holds {dimensions[0]} sentences; this model takes at most {maximum} per request",
            )

    def GetModelMetadata(self, request, context):
        _check_well_formed(request, context)
        self._check_model_spec(request.model_spec, context)
        unknown = sorted(set(request.metadata_field) - {"signature_def"})
        if unknown or not request.metadata_field:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"metadata_field must be ['signature_def'], got {list(request.metadata_field)}",
            )
        signature_defs = get_model_metadata_pb2.SignatureDefMap()
        for name, signature_def in self.servable.signature_defs.items():
            signature_defs.signature_def[name].CopyFrom(signature_def)
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        response.model_spec.name = self.servable.model_name
        response.model_spec.version.value = self.servable.version
        response.metadata["signature_def"].Pack(signature_defs)
        return response
