"""serving/model_server_config.py: TF Serving's ModelServerConfig text format, parsed by protobuf."""

import pytest

from serving.model_server_config import model_config, parse_model_config_list, read_model_config_file, version_policy
from serving.served_model import wanted_versions

TWO_MODELS = """
model_config_list {
  config { name: "enfr" base_path: "/models/enfr" model_platform: "tensorflow"
           model_version_policy { latest { num_versions: 2 } } }
  config { name: "fren" base_path: "/models/fren" model_platform: "tensorflow"
           model_version_policy { specific { versions: 3 versions: 4 } } }
  config { name: "deen" base_path: "/models/deen" }
}
"""


def test_tf_servings_example_gives_each_model_its_policy(tmp_path):
    path = tmp_path / "models.config"
    path.write_text(TWO_MODELS)
    enfr, fren, deen = read_model_config_file(path)
    assert (enfr.name, enfr.base_path, enfr.model_version_policy.latest.num_versions) == ("enfr", "/models/enfr", 2)
    assert list(fren.model_version_policy.specific.versions) == [3, 4]
    assert deen.model_version_policy.WhichOneof("policy_choice") is None  # TF Serving's default: latest 1


def test_latest_without_num_versions_is_read_as_tf_serving_reads_it():
    """`latest {}` (num_versions 0) serves the newest version: TF Serving's std::max(num_versions, 1)."""
    [config] = parse_model_config_list("model_config_list { config { name: 'x' base_path: '/a' "
                                       "model_version_policy { latest { } } } }")
    assert wanted_versions(config.model_version_policy, {1: "1", 4: "4"}) == {4}


def test_the_flags_make_the_same_config():
    config = model_config("rnnsearch", "/models/rnnsearch", version_policy(specific=["2", "5"]))
    assert (config.name, config.base_path, config.model_platform) == ("rnnsearch", "/models/rnnsearch", "tensorflow")
    assert list(config.model_version_policy.specific.versions) == [2, 5]
    assert version_policy(latest=3).latest.num_versions == 3
    assert version_policy().latest.num_versions == 1
    with pytest.raises(ValueError, match="latest.num_versions must be at least 1, got 0"):
        version_policy(latest=0)
    with pytest.raises(ValueError, match="not both"):
        version_policy(latest=2, specific=[1])


@pytest.mark.parametrize("text, reason", [
    ("model_config_list { config { nam: 'x' } }", r'm\.config: not a ModelServerConfig: 1:\d+ .*no field named "nam"'),
    ("", "model_config_list is missing"),
    ("model_config_list { }", "model_config_list holds no config"),
    ("model_config_list { config { name: 'x' } }", r"config 1 \(x\): name and base_path are required"),
    ("model_config_list { config { name: 'x' base_path: '/a' } config { name: 'x' base_path: '/b' } }",
     r"config 2 \(x\): name 'x' is given twice"),
    ("model_config_list { config { name: 'x' base_path: '/a' model_platform: 'pytorch' } }",
     "model_platform must be 'tensorflow', got 'pytorch'"),
    ("model_config_list { config { name: 'x' base_path: '/a' version_labels { key: 'stable' value: 1 } } }",
     "version_labels are not served here"),
    ("model_config_list { config { name: 'x' base_path: '/a' logging_config { } } }",
     r"m\.config: config 1 \(x\): logging_config is not served here \(requests are not logged\); remove it"),
    ("model_config_list { config { name: 'x' base_path: '/a' model_version_policy { specific { } } } }",
     "model_version_policy.specific names no versions"),
])
def test_a_mistake_is_named_with_its_file_and_field(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_model_config_list(text, "m.config")
