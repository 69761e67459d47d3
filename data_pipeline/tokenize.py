"""Filters stdin to stdout through the model's tokenizer, so you see exactly what the model sees.

    echo "L'homme a 3,5 kg." | python -m data_pipeline.tokenize --lang=fr
    python -m data_pipeline.tokenize --lang=fr --detokenize < tokens.txt
"""

import sys

import tensorflow as tf
from absl import app
from absl import flags

from data_pipeline.moses_tokenizer import MosesTokenizer

_LANG = flags.DEFINE_enum("lang", None, ["en", "fr"], "Language of the text.")
_DETOKENIZE = flags.DEFINE_bool("detokenize", False, "Join space-separated tokens back into text.")
_BATCH_LINES = flags.DEFINE_integer("batch_lines", 1000, "Lines processed together.")
flags.mark_flag_as_required("lang")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    tokenizer = MosesTokenizer(_LANG.value)
    stdin = open(sys.stdin.fileno(), "rb", closefd=False)
    stdout = open(sys.stdout.fileno(), "wb", closefd=False)
    lines = [line.rstrip(b"\r\n") for line in stdin]
    for start in range(0, len(lines), _BATCH_LINES.value):
        batch = tf.constant(lines[start : start + _BATCH_LINES.value])
        if _DETOKENIZE.value:
            output = tokenizer.detokenize(tf.strings.split(batch)).numpy().tolist()
        else:
            output = tf.strings.reduce_join(tokenizer.tokenize(batch), axis=-1, separator=" ").numpy().tolist()
        stdout.write(b"".join(line + b"\n" for line in output))
    stdout.flush()


if __name__ == "__main__":
    app.run(main)
