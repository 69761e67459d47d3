"""serving/monitoring_config.py: TF Serving's MonitoringConfig text format, read by protobuf's parser."""

import re

import pytest

from serving.metrics import PROMETHEUS_PATH
from serving.monitoring_config import MonitoringConfig, parse_monitoring_config, prometheus_path, read_monitoring_config


def test_tf_servings_example_enables_its_path(tmp_path):
    config = tmp_path / "monitoring.config"
    config.write_text('prometheus_config {\n  enable: true,\n  path: "/monitoring/prometheus/metrics"\n}\n')
    assert read_monitoring_config(config) == "/monitoring/prometheus/metrics"
    assert MonitoringConfig.DESCRIPTOR.full_name == "tensorflow.serving.MonitoringConfig"


def test_an_empty_path_is_tf_servings_and_a_disabled_config_serves_nothing():
    assert prometheus_path(parse_monitoring_config("prometheus_config { enable: true }")) == PROMETHEUS_PATH
    assert prometheus_path(parse_monitoring_config('prometheus_config { path: "/metrics" }')) is None
    assert prometheus_path(parse_monitoring_config("")) is None
    assert prometheus_path(parse_monitoring_config('prometheus_config { enable: true path: "/m" }')) == "/m"


@pytest.mark.parametrize("text, reason", [
    ("prometheus_config { enabled: true }", r'm\.config: not a MonitoringConfig: 1:\d+ .*no field named "enabled"'),
    ("prometheus_config { enable: maybe }", r"m\.config: not a MonitoringConfig: 1:\d+ .*enable"),
    ("prometheus_config { enable: true", r"m\.config: not a MonitoringConfig"),
])
def test_a_mistake_is_named_with_its_file_and_line(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_monitoring_config(text, "m.config")


def test_a_path_must_be_absolute():
    with pytest.raises(ValueError, match="prometheus_config.path must start with '/', got 'metrics'"):
        prometheus_path(parse_monitoring_config('prometheus_config { enable: true path: "metrics" }'))


@pytest.mark.parametrize("metrics_path, reason", [
    ("metrics", "prometheus_config.path must start with '/', got 'metrics'"),
    ("/", "prometheus_config.path '/' is a path of the server's own"),  # the page
    ("/static/page.js", "prometheus_config.path '/static/page.js' is a path of the server's own"),
    ("/v1/models/enfr", "prometheus_config.path '/v1/models/enfr' is a path of the server's own"),  # a model's status
    ("/v1", "prometheus_config.path '/v1' is a path of the server's own"),
])
def test_a_path_that_is_not_absolute_or_is_the_servers_own_is_refused_naming_the_file(tmp_path, metrics_path,
                                                                                        reason):
    config = tmp_path / "monitoring.config"
    config.write_text(f'prometheus_config {{ enable: true path: "{metrics_path}" }}\n')
    with pytest.raises(ValueError, match=f"^{re.escape(str(config))}: {re.escape(reason)}"):
        read_monitoring_config(config)
    config.write_text('prometheus_config { enable: true path: "/v1metrics" }\n')
    assert read_monitoring_config(config) == "/v1metrics"  # beside the API's paths: served
