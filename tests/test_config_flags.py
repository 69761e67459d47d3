"""rnnsearch_tf/cli/config_flags.py: the flags generated from the config dataclasses."""

import pytest
from absl import flags

from rnnsearch_tf import ModelConfig
from rnnsearch_tf.cli.config_flags import (config_from_flags, define_config_flags, field_helps, given_flags,
                                           write_flagfile)
from rnnsearch_tf.training.training_config import TrainingConfig


def test_flags_are_generated_from_the_config_fields():
    flag_values = flags.FlagValues()
    holders = define_config_flags(ModelConfig, skip=("source_vocab_size", "target_vocab_size"),
                                  flag_values=flag_values)
    flag_values(["test", "--hidden_dim=7", "--initializer=xavier", "--hidden_dropout=0.25"])
    config = config_from_flags(ModelConfig, holders, source_vocab_size=10, target_vocab_size=12)
    assert config == ModelConfig(source_vocab_size=10, target_vocab_size=12, hidden_dim=7, initializer="xavier",
                                 hidden_dropout=0.25)
    assert flag_values["embedding_dim"].default == ModelConfig.embedding_dim
    assert flag_values["initializer"].help.startswith('<paper|uniform|xavier>: "paper" (Appendix B.1)')
    with pytest.raises(flags.IllegalFlagValueError):
        flag_values["initializer"].parse("normal")


def test_every_training_field_has_a_documented_flag():
    helps = field_helps(TrainingConfig)
    flag_values = flags.FlagValues()
    holders = define_config_flags(TrainingConfig, flag_values=flag_values)
    for name, holder in holders.items():
        assert name in helps, f"TrainingConfig's docstring does not document {name}"
        assert flag_values[name].help.endswith(helps[name])  # enum flags put their choices first
    assert flag_values["adadelta_epsilon"].help.startswith("ε of Adadelta")  # a continued entry, whole
    assert flag_values["adadelta_rho"].help.endswith("in [0, 1).")
    assert flag_values["data_dir"].default is None


def test_given_flags_are_those_set_to_other_than_their_defaults():
    flag_values = flags.FlagValues()
    holders = define_config_flags(ModelConfig, skip=("source_vocab_size", "target_vocab_size"),
                                  flag_values=flag_values)
    flag_values(["test", "--hidden_dim=7", f"--embedding_dim={ModelConfig.embedding_dim}", "--initializer=xavier"])
    assert given_flags(holders.values()) == ["--hidden_dim", "--initializer"]  # the default, given, passes



def test_a_written_flagfile_reads_back_the_flags_set_with_the_values_given_in_place(tmp_path):
    flag_values = flags.FlagValues()
    holders = define_config_flags(TrainingConfig, flag_values=flag_values)
    flag_values(["test", "--data_dir=data", "--model_dir=run one", "--learning_rate=0.5", "--shuffle_batches"])
    path = tmp_path / "flags.txt"
    write_flagfile(path, holders.values(), {"data_dir": "/abs/data", "init_from": "/abs/parent:latest"})
    written = path.read_text(encoding="utf-8").splitlines()
    assert "--data_dir=/abs/data" in written and "--init_from=/abs/parent:latest" in written  # set by `values`
    assert "--model_dir=run one" in written  # a value with a space, one line
    assert len(written) == sum(holder.value is not None for holder in holders.values()) + 1  # init_from was unset
    read_back = flags.FlagValues()
    define_config_flags(TrainingConfig, flag_values=read_back)
    read_back(["test", f"--flagfile={path}"])
    assert read_back["learning_rate"].value == 0.5 and read_back["shuffle_batches"].value is True
    assert read_back["model_dir"].value == "run one" and read_back["data_dir"].value == "/abs/data"
