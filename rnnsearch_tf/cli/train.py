"""Trains RNNsearch or RNNencdec.

    python -m rnnsearch_tf.train --flagfile=configs/rnnsearch50.flags --model_dir=runs/rnnsearch50

Flags after --flagfile override it. Relative paths, in flags and in flagfiles (including a nested
--flagfile), are relative to the working directory, as absl reads them. The resolved flags are written to
<model_dir>/flags.txt with absolute folders, so `--flagfile=<model_dir>/flags.txt` reproduces (or resumes) the run
from any working directory; a run refused, or already at its limit, leaves it as it was. Several GPUs are used through
MirroredStrategy; several machines through MultiWorkerMirroredStrategy when TF_CONFIG names them.
"""

import json
import signal
import sys

from absl import app
from absl import logging

from data_pipeline.data_dir import DataDir
from rnnsearch_tf.cli.config_flags import config_from_flags, define_config_flags, write_flagfile
from rnnsearch_tf.evaluation.corpus_scores import scorers
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.training.strategy import make_strategy, strategy_name
from rnnsearch_tf.training.trainer import Trainer
from rnnsearch_tf.training.training_config import PATH_FIELDS, TrainingConfig
from rnnsearch_tf.utils.precision import bfloat16_speedup, dtype_policy

# One flag per config field, with the field's default and docstring (`config_flags`); the vocabulary
# sizes come from the data directory.
_MODEL_FLAGS = define_config_flags(ModelConfig, skip=("source_vocab_size", "target_vocab_size"))
_TRAINING_FLAGS = define_config_flags(TrainingConfig)
# The search of the validation translations (dev BLEU); a model in training has no vocabulary shortlist yet
# (`rnnsearch shortlist` builds one from a trained model directory).
_SEARCH_FLAGS = define_config_flags(
    SearchConfig,
    skip=("num_hypotheses", "forbid_unk", "sampling", "num_samples", "sampling_temperature", "sampling_seed",
          "shortlist"),
)
_ALL_FLAGS = [*_MODEL_FLAGS.values(), *_TRAINING_FLAGS.values(), *_SEARCH_FLAGS.values()]


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    training_config = config_from_flags(TrainingConfig, _TRAINING_FLAGS)  # checked before the strategy uses it
    strategy = make_strategy(training_config.cpu_replicas)  # before any other TensorFlow work
    try:
        metadata = DataDir(_TRAINING_FLAGS["data_dir"].value).read_metadata()
    except FileNotFoundError as error:
        raise app.UsageError(f"{error}; build the data first") from error
    scorers(metadata["target_language"])  # dev BLEU's tokenizer (MeCab), before any writing
    vocabularies = metadata["vocabularies"]
    model_config = config_from_flags(
        ModelConfig,
        _MODEL_FLAGS,
        source_vocab_size=vocabularies["source"]["size"],
        target_vocab_size=vocabularies["target"]["size"],
    )
    logging.info("TensorBoard: tensorboard --logdir %s", training_config.model_dir)
    logging.info("%s: %d replica(s) on %s", strategy_name(strategy), strategy.num_replicas_in_sync,
                 ", ".join(strategy.extended.worker_devices))
    if model_config.precision == "auto":
        logging.info("precision auto: %s (a bf16 matmul runs %.2fx float32 here)",
                     dtype_policy("auto"), bfloat16_speedup())
    search_config = config_from_flags(SearchConfig, _SEARCH_FLAGS)
    trainer = Trainer.create(model_config, training_config, strategy, search_config)  # checks, then writes
    summary = trainer.train(before_first_update=lambda: _write_flags(training_config))
    print(json.dumps(summary, indent=2))
    if summary["signal"]:  # stopped early, its checkpoint saved: the exit status of the signal, for scripts
        sys.exit(128 + signal.Signals[summary["signal"]])


def _write_flags(training_config):
    """Writes the resolved flags to `<model_dir>/flags.txt`, once the trainer has accepted them and resumed, before
    its first update: a refused run, or one at its limit already (no update), leaves the model directory's flags as
    they were (or no model directory). Its folders are absolute (`TrainingConfig.with_absolute_paths`), so that the
    file resumes the run from any working directory."""
    absolute = training_config.with_absolute_paths()
    write_flagfile(ModelDir(training_config.model_dir).flags_file, _ALL_FLAGS,
                   {name: getattr(absolute, name) for name in PATH_FIELDS})
