"""Averages the last (or best) checkpoints of a training run into `<model_dir>/averaged/`.

    python -m rnnsearch_tf.average_checkpoints --model_dir=models/multi30k --source=latest --count=5
    python -m rnnsearch_tf.translate --model_dir=models/multi30k --checkpoint=averaged < test.en

The averaged checkpoint is what `--checkpoint=averaged` of translate, score, evaluate and export reads;
`averaged/averaging.json` beside it records --source and the checkpoints averaged, with their steps (evaluate's
metrics.json repeats it).
"""

import os

from absl import app, flags

from rnnsearch_tf.cli import folder_flags
from rnnsearch_tf.training.checkpoint_averaging import average_checkpoints, checkpoints_to_average
from rnnsearch_tf.models.model_dir import ModelDir

_MODEL_DIR = folder_flags.define_model_dir(required=True)
_SOURCE = flags.DEFINE_enum(
    "source", "latest", ["latest", "best"], "Average the last checkpoints saved, or the last best ones (best/)."
)
_COUNT = flags.DEFINE_integer("count", 5, "How many checkpoints to average (the newest).", lower_bound=1)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    model_dir = ModelDir(_MODEL_DIR.value)
    paths = checkpoints_to_average(model_dir, _SOURCE.value, _COUNT.value)
    path = average_checkpoints(model_dir, paths, _SOURCE.value)
    found = f"{len(paths)} checkpoint{'s' if len(paths) > 1 else ''}"
    fewer = f": only {found} of the --count={_COUNT.value} asked in {os.path.dirname(paths[0])}"
    print(f"averaged {found} ({', '.join(paths)}) into {path}{fewer if len(paths) < _COUNT.value else ''}")

