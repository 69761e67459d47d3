"""Input lines, prefixes and a model directory shared by the BatchTranslator and `rnnsearch translate` tests;
`translate`, the outputs of a model directory (or ensemble) on SENTENCES."""

import tensorflow as tf

from rnnsearch_tf.inference.translator import Translator
from helpers.serving_test_utils import BAD_SENTENCES, SEARCH_OPTIONS, SENTENCES, write_model_dir

LONG_LINE = " ".join(["cat"] * 30)  # more than SEARCH_OPTIONS["maximum_source_length"] = 12 tokens
INPUT = SENTENCES + ["", LONG_LINE, " \t  "] + BAD_SENTENCES[2:4]  # one sentence per line
PREFIXES = ["le", "", "chat chien", "zyzzyva la", "la", "", "vert", "vert", ""]  # one per line of INPUT


def translation_model_dir(tmp_path_factory):
    """A tiny random-weight model directory in a fresh temporary folder (call it from a module fixture)."""
    return write_model_dir(tmp_path_factory.mktemp("translate") / "model")


def translate(model_dir, checkpoint="best", **options):
    """(translate's outputs and log_prob as NumPy, the checkpoint path) of `model_dir` on SENTENCES."""
    translator = Translator.from_model_dir(model_dir, checkpoint, **dict(SEARCH_OPTIONS, **options))
    checkpoint = translator.checkpoint_path
    outputs = translator.translate(tf.constant(SENTENCES))
    scores = translator.score(tf.constant(SENTENCES), outputs["translation"])
    return {name: value.numpy() for name, value in dict(outputs, log_prob=scores["log_prob"]).items()}, checkpoint
