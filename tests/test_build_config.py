"""data_pipeline/build_config.py: the one place of build-data's defaults, its checks, and the flags made from it."""

import dataclasses

import pytest
from absl import flags

from data_pipeline.build_config import BuildConfig
from data_pipeline.dataset_builder import DatasetBuilder
from rnnsearch_tf.cli.config_flags import define_config_flags


def test_every_field_becomes_a_flag_with_its_default_and_help():
    flag_values = flags.FlagValues()
    holders = define_config_flags(BuildConfig, flag_values=flag_values)
    flag_values(["build-data"])
    assert set(holders) == {field.name for field in dataclasses.fields(BuildConfig)}
    assert {name: holder.value for name, holder in holders.items()} == dataclasses.asdict(BuildConfig())
    assert flag_values["subwords"].parser.enum_values == ["sentencepiece"]
    assert "languages written without spaces" in flag_values["subwords"].help
    flag_values(["build-data", "--subwords=sentencepiece", "--subword_vocabulary_size=4000", "--nojoint_subwords"])
    assert (holders["subwords"].value, holders["subword_vocabulary_size"].value, holders["joint_subwords"].value) == (
        "sentencepiece", 4000, False)


@pytest.mark.parametrize("options, message", [
    ({"num_shards": 0}, "num_shards must be at least 1, got 0"),
    ({"vocabulary_size": -5}, "vocabulary_size must be at least 1, got -5"),
    ({"vocabulary_size": 0}, "vocabulary_size must be at least 1, got 0"),
    ({"max_length": 0}, "max_length must be at least 1, got 0"),
    ({"max_line_chars": -1}, "max_line_chars must be at least 1, got -1"),
    ({"joined_share": 1.0}, r"joined_share must be in \[0, 1\), got 1.0"),
    ({"copy_share": -0.1}, r"copy_share must be in \[0, 1\), got -0.1"),
    ({"joined_share": 0.5, "max_joined_sentences": 1}, "max_joined_sentences must be at least 2, got 1"),
    ({"subwords": "bpe"}, "subwords must be None or 'sentencepiece', got 'bpe'"),
    ({"subwords": "sentencepiece", "subword_model": "word"}, "subword_model must be one of"),
    ({"subwords": "sentencepiece", "subword_vocabulary_size": 100}, "subword_vocabulary_size must be at least 300"),
    ({"subwords": "sentencepiece", "vocabulary_from": "M"}, "vocabulary_from copies a model's text codec"),
])
def test_contradictory_options_are_refused_in_one_line(options, message):
    with pytest.raises(ValueError, match=message):
        BuildConfig(**options)


def test_the_builder_takes_the_configs_fields_and_nothing_else(tmp_path):
    from data_pipeline import corpus_registry

    corpus = corpus_registry.get_corpus("multi30k_deen")
    builder = DatasetBuilder(corpus, tmp_path / "out", vocabulary_size=10, seed=7)
    assert builder.config == BuildConfig(vocabulary_size=10, seed=7)
    with pytest.raises(TypeError, match="vocabulary"):
        DatasetBuilder(corpus, tmp_path / "out", vocabulary=10)


def test_joined_and_copy_shares_are_each_a_share_of_all_the_records():
    """--joined_share=0.5 --copy_share=0.25: of the 4 * kept records, half joined and a quarter copy pairs; two
    shares that leave no room for the kept pairs are refused."""
    config = BuildConfig(joined_share=0.5, copy_share=0.25)
    joined, copies = config.added_records(1000)
    assert (joined, copies) == (2000, 1000) and joined / (1000 + joined + copies) == 0.5
    assert BuildConfig(joined_share=0.25).added_records(30) == (10, 0)
    assert BuildConfig().added_records(30) == (0, 0)
    with pytest.raises(ValueError, match=r"^joined_share \+ copy_share must be below 1 \(shares of the training "
                                         r"records, the kept pairs the rest\), got 0.5 \+ 0.5$"):
        BuildConfig(joined_share=0.5, copy_share=0.5)
