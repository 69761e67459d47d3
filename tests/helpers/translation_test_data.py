"""Input lines, prefixes and a model directory shared by the BatchTranslator and `rnnsearch translate` tests."""

from helpers.serving_test_utils import BAD_SENTENCES, SENTENCES, write_model_dir

LONG_LINE = " ".join(["cat"] * 30)  # more than SEARCH_OPTIONS["maximum_source_length"] = 12 tokens
INPUT = SENTENCES + ["", LONG_LINE, " \t  "] + BAD_SENTENCES[2:4]  # one sentence per line
PREFIXES = ["le", "", "chat chien", "zyzzyva la", "la", "", "vert", "vert", ""]  # one per line of INPUT


def translation_model_dir(tmp_path_factory):
    """A tiny random-weight model directory in a fresh temporary folder (call it from a module fixture)."""
    return write_model_dir(tmp_path_factory.mktemp("translate") / "model")
