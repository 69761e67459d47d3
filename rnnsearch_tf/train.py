"""Trains RNNsearch or RNNencdec.

    python -m rnnsearch_tf.train --flagfile=configs/rnnsearch50.flags --model_dir=runs/rnnsearch50

Flags after --flagfile override it. The resolved flags are written to <model_dir>/flags.txt, so
`--flagfile=<model_dir>/flags.txt` reproduces (or resumes) the run. Several GPUs are used through
MirroredStrategy; several machines through MultiWorkerMirroredStrategy when TF_CONFIG names them.
"""

import json
import os

from absl import app
from absl import flags
from absl import logging

from rnnsearch_tf.config_flags import config_from_flags, define_config_flags
from rnnsearch_tf.model_config import ModelConfig
from rnnsearch_tf.strategy import make_strategy
from rnnsearch_tf.training_config import TrainingConfig

# One flag per config field, with the field's default and docstring (`config_flags`); the vocabulary
# sizes come from the data directory.
_MODEL_FLAGS = define_config_flags(ModelConfig, skip=("source_vocab_size", "target_vocab_size"))
_TRAINING_FLAGS = define_config_flags(TrainingConfig)
_ALL_FLAGS = list(_MODEL_FLAGS.values()) + list(_TRAINING_FLAGS.values())


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    strategy = make_strategy(_TRAINING_FLAGS["cpu_replicas"].value)  # before any other TensorFlow work
    from rnnsearch_tf.trainer import Trainer  # imports TensorFlow's device setup after the strategy

    data_dir = _TRAINING_FLAGS["data_dir"].value
    metadata_file = os.path.join(data_dir, "metadata.json")
    if not os.path.exists(metadata_file):
        raise app.UsageError(f"{metadata_file} is missing: build the data first (python -m data_pipeline.build)")
    with open(metadata_file, encoding="utf-8") as stream:
        vocabularies = json.load(stream)["vocabularies"]
    model_config = config_from_flags(
        ModelConfig,
        _MODEL_FLAGS,
        source_vocab_size=vocabularies["source"]["size"],
        target_vocab_size=vocabularies["target"]["size"],
    )
    training_config = config_from_flags(TrainingConfig, _TRAINING_FLAGS)
    os.makedirs(training_config.model_dir, exist_ok=True)
    with open(os.path.join(training_config.model_dir, "flags.txt"), "w", encoding="utf-8") as stream:
        stream.writelines(flags.FLAGS[holder.name].serialize() + "\n" for holder in _ALL_FLAGS
                          if flags.FLAGS[holder.name].value is not None)
    logging.info("TensorBoard: tensorboard --logdir %s", training_config.model_dir)
    summary = Trainer(model_config, training_config, strategy).train()
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    app.run(main)
