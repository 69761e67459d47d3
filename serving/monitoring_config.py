"""TF Serving's `--monitoring_config_file`: a text-format `tensorflow.serving.MonitoringConfig`.

    prometheus_config { enable: true, path: "/monitoring/prometheus/metrics" }

The message is TF Serving's (`tensorflow_serving/config/monitoring_config.proto`). tensorflow-serving-api
ships the other config protos but not this one; where it is missing, the same two messages (same package,
names and field numbers) are built here from a `FileDescriptorProto`, so protobuf's own text-format parser
reads the file exactly as `tensorflow_model_server` does, and names the line of a mistake.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

from serving.metrics import PROMETHEUS_PATH
from serving.page import Page
from serving.rest_app import API_PREFIX


def _monitoring_config_class():
    """`tensorflow_serving.config.monitoring_config_pb2.MonitoringConfig`, or the same message built here."""
    try:
        from tensorflow_serving.config import monitoring_config_pb2  # not in every tensorflow-serving-api
    except ImportError:
        pass
    else:
        return monitoring_config_pb2.MonitoringConfig
    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name="tensorflow_serving/config/monitoring_config.proto", package="tensorflow.serving", syntax="proto3")
    prometheus = proto.message_type.add(name="PrometheusConfig")
    prometheus.field.add(name="enable", number=1, type=field.TYPE_BOOL, label=field.LABEL_OPTIONAL)
    prometheus.field.add(name="path", number=2, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    monitoring = proto.message_type.add(name="MonitoringConfig")
    monitoring.field.add(name="prometheus_config", number=1, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                         type_name=".tensorflow.serving.PrometheusConfig")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow.serving.MonitoringConfig"))


MonitoringConfig = _monitoring_config_class()


def parse_monitoring_config(text, path="<text>"):
    """A `MonitoringConfig` from its text format; ValueError naming `path` and the parser's line otherwise."""
    try:
        return text_format.Parse(text, MonitoringConfig())
    except text_format.ParseError as error:
        raise ValueError(f"{path}: not a MonitoringConfig: {error}") from None


def prometheus_path(config, path="<text>"):
    """Where a `MonitoringConfig` (read from `path`) puts the Prometheus page: its path (TF Serving's default when
    empty), or None when `prometheus_config.enable` is false. ValueError naming `path` for a path that is not
    absolute, or that one of the server's own routes takes: the page's (`Page.serves`, e.g. "/") would answer
    instead, and one under TF Serving's API (`/v1/`) would hide a model's status or predict."""
    if not config.prometheus_config.enable:
        return None
    metrics_path = config.prometheus_config.path or PROMETHEUS_PATH
    if not metrics_path.startswith("/"):
        raise ValueError(f"{path}: prometheus_config.path must start with '/', got {metrics_path!r}")
    if Page.serves(metrics_path) or metrics_path == API_PREFIX.rstrip("/") or metrics_path.startswith(API_PREFIX):
        raise ValueError(f"{path}: prometheus_config.path {metrics_path!r} is a path of the server's own (the page "
                         f"and {API_PREFIX}...); default: {PROMETHEUS_PATH!r}")
    return metrics_path


def read_monitoring_config(path):
    """`prometheus_path` of the MonitoringConfig text file at `path`."""
    with open(path, encoding="utf-8") as stream:
        return prometheus_path(parse_monitoring_config(stream.read(), path), path)
