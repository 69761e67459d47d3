"""Filters stdin to stdout through a text codec, so you see exactly what the model sees (lines typed at a terminal
one at a time, as they are entered).

    echo "L'homme a 3,5 kg." | rnnsearch tokenize --lang=fr                    # Moses words
    echo "Ein Mann, z.B. heute." | rnnsearch tokenize --lang=de              # German prefixes ("z.B.")
    echo "The Brakkenfeld family." | rnnsearch tokenize --model_dir=M          # M's source codec (pieces)
    rnnsearch tokenize --model_dir=M --side=target --detokenize < pieces.txt  # tokens back to text
"""

import os
import sys

import tensorflow as tf
from absl import app
from absl import flags

from data_pipeline import languages
from data_pipeline.data_dir import DataDir
from data_pipeline.line_batches import batched
from data_pipeline.text_codec import TextCodec
from rnnsearch_tf.cli import folder_flags
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import each_line

_LANG = flags.DEFINE_string(
    "lang", None, "Language of the text, a code (e.g. de, cs, fr): Moses' word-level rules for it (sacremoses').")
_MODEL_DIR = folder_flags.define_model_dir(
    "instead of --lang, its text codec (or that of a data directory of `rnnsearch build-data`)")
_SIDE = flags.DEFINE_enum("side", "source", ["source", "target"], "With --model_dir: which language's codec.")
_DETOKENIZE = flags.DEFINE_bool("detokenize", False, "Join space-separated tokens back into text.")
_BATCH_LINES = flags.DEFINE_integer("batch_lines", 1000, "Lines processed together.", lower_bound=1)


def codec():
    """The codec of --model_dir's --side (a model directory's data.json, or a data directory's metadata.json),
    or Moses' rules for --lang."""
    if (_LANG.value is None) == (_MODEL_DIR.value is None):
        raise app.UsageError("give exactly one of --lang and --model_dir")
    if _LANG.value:
        return TextCodec(languages.check(_LANG.value, "--lang"))
    model_dir, data_dir = ModelDir(_MODEL_DIR.value), DataDir(_MODEL_DIR.value)
    if model_dir.has_model():
        return model_dir.codec(_SIDE.value)
    if not os.path.exists(data_dir.metadata_file):
        raise FileNotFoundError(f"--model_dir={_MODEL_DIR.value} is neither a model directory (no "
                                f"{os.path.basename(model_dir.model_file)}) nor a data directory (no "
                                f"{os.path.basename(data_dir.metadata_file)}): give the --model_dir of `rnnsearch "
                                "train` or the --output_dir of `rnnsearch build-data`")
    return data_dir.codec(_SIDE.value)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    text_codec = codec()
    stdout = open(sys.stdout.fileno(), "wb", closefd=False)
    for lines in _batches(each_line("-"), sys.stdin.isatty()):
        batch = tf.constant(lines)
        if _DETOKENIZE.value:
            output = text_codec.detokenize(tf.strings.split(batch)).numpy().tolist()
        else:
            output = tf.strings.reduce_join(text_codec.tokenize(batch), axis=-1, separator=" ").numpy().tolist()
        stdout.write(b"".join(line + b"\n" for line in output))
        stdout.flush()


def _batches(lines, at_terminal):
    """The input's lines (`each_line`: as translate reads them, a byte order mark opening them skipped) in lists
    of --batch_lines; from a terminal, each line alone as it is typed."""
    return ([line] for line in lines) if at_terminal else batched(lines, _BATCH_LINES.value)
