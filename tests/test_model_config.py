import pytest

from helpers.model_test_utils import small_config
from rnnsearch_tf import ModelConfig


def test_defaults_are_the_papers():
    config = ModelConfig()
    assert (config.embedding_dim, config.hidden_dim, config.maxout_dim, config.alignment_dim) == (
        620, 1000, 500, 1000)
    assert config.readout_state == "current"


def test_json_round_trip(tmp_path):
    config = ModelConfig(source_vocab_size=100, target_vocab_size=90, readout_state="previous")
    path = tmp_path / "model_config.json"
    config.save(path)
    assert ModelConfig.load(path) == config


def test_bad_values_name_the_field(tmp_path):
    with pytest.raises(ValueError, match="hidden_dim must be a positive integer"):
        ModelConfig(hidden_dim=0)
    with pytest.raises(ValueError, match="readout_state must be one of"):
        ModelConfig(readout_state="next")
    with pytest.raises(ValueError, match=r"source_vocab_size = 4 leaves no room"):
        ModelConfig(source_vocab_size=4)
    with pytest.raises(ValueError, match=r"no field\(s\) \['hiden_dim'\]"):
        ModelConfig.from_dict({"hiden_dim": 3})
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="broken.json: not a JSON model config"):
        ModelConfig.load(path)


@pytest.mark.parametrize("field, value, message", [
    ("initializer", "normal", "initializer must be one of"),
    ("hidden_dropout", 1.0, r"hidden_dropout must be a rate in \[0, 1\)"),
    ("embedding_dropout", -0.1, r"embedding_dropout must be a rate"),
])
def test_bad_model_options_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        small_config(**{field: value})
