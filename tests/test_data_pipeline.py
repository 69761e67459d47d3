"""The data_pipeline package: its classes come on first use, and translating with a word-level model does
not import tensorflow_text (which only a subword `TextCodec` needs)."""


import pytest

import data_pipeline
from conftest import fresh_python
from data_pipeline import text_codec
from data_pipeline.moses_tokenizer import MosesTokenizer
from data_pipeline.vocabulary import Vocabulary


def test_every_exported_name_is_the_class_of_its_module():
    assert data_pipeline.MosesTokenizer is MosesTokenizer and data_pipeline.Vocabulary is Vocabulary
    for name in data_pipeline.__all__:
        value = getattr(data_pipeline, name)
        assert value.__name__ == name and value.__module__.startswith("data_pipeline.")


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="Tokeniser"):
        data_pipeline.Tokeniser  # noqa: B018


def test_the_translate_command_does_not_import_tensorflow_text(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("".join(f"the cat number {number} sleeps in the house .\n" for number in range(200)))
    text_codec.learn_sentencepiece([text], tmp_path / "spm.model", "bpe", 300, seed=1)
    script = (
        "import sys\n"
        "import rnnsearch_tf.cli.translate, rnnsearch_tf.cli.serve\n"
        "print('tensorflow_text' in sys.modules)\n"
        "from data_pipeline.text_codec import TextCodec\n"
        f"TextCodec('en', None, 'sentencepiece', {str(tmp_path / 'spm.model')!r})\n"
        "print('tensorflow_text' in sys.modules)\n"
    )
    assert fresh_python(script) == ["False", "True"]
