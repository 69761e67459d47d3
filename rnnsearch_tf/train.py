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

from rnnsearch_tf.model_config import READOUT_STATES, ModelConfig
from rnnsearch_tf.model_dir import MODEL_CLASSES
from rnnsearch_tf.strategy import make_strategy
from rnnsearch_tf.training_config import OPTIMIZERS, TrainingConfig

_MODEL = flags.DEFINE_enum("model", "rnnsearch", sorted(MODEL_CLASSES), "Which model to train.")
_DATA_DIR = flags.DEFINE_string("data_dir", None, "Output folder of `python -m data_pipeline.build`.")
_MODEL_DIR = flags.DEFINE_string("model_dir", None, "Folder of checkpoints and TensorBoard logs.")
_EMBEDDING_DIM = flags.DEFINE_integer("embedding_dim", 620, "m: word embedding size.")
_HIDDEN_DIM = flags.DEFINE_integer("hidden_dim", 1000, "n: gated hidden units per RNN.")
_MAXOUT_DIM = flags.DEFINE_integer("maxout_dim", 500, "l: maxout units of the deep output.")
_ALIGNMENT_DIM = flags.DEFINE_integer("alignment_dim", 1000, "n': hidden units of the alignment model.")
_READOUT_STATE = flags.DEFINE_enum(
    "readout_state", "current", READOUT_STATES, "Decoder state feeding the deep output: s_i or s_{i-1}."
)
_TRAIN_STEPS = flags.DEFINE_integer("train_steps", 300_000, "Updates in total.")
_MAX_EPOCHS = flags.DEFINE_float("max_epochs", None, "Stop after this many passes over the data.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 80, "Global minibatch of sentence pairs.")
_SORT_WINDOW = flags.DEFINE_integer("sort_window", 20, "Minibatches sorted by length together.")
_MAX_TOKENS = flags.DEFINE_integer("max_tokens", None, "Token-count batching: tokens per side per batch.")
_SEED = flags.DEFINE_integer("seed", 1234, "Seed of shuffling and initialisation.")
_OPTIMIZER = flags.DEFINE_enum("optimizer", "adadelta", OPTIMIZERS, "Optimizer.")
_LEARNING_RATE = flags.DEFINE_float("learning_rate", 1.0, "Learning rate (1.0 for Adadelta).")
_ADADELTA_RHO = flags.DEFINE_float("adadelta_rho", 0.95, "Adadelta decay ρ.")
_ADADELTA_EPSILON = flags.DEFINE_float("adadelta_epsilon", 1e-6, "Adadelta ε.")
_CLIP_NORM = flags.DEFINE_float("clip_norm", 1.0, "Largest L2 norm of the whole gradient.")
_LOG_EVERY = flags.DEFINE_integer("log_every", 100, "Updates between console lines.")
_CHECKPOINT_EVERY = flags.DEFINE_integer("checkpoint_every", 1000, "Updates between checkpoints.")
_KEEP_CHECKPOINTS = flags.DEFINE_integer("keep_checkpoints", 5, "Last checkpoints kept.")
_VALIDATE_EVERY = flags.DEFINE_integer("validate_every", 5000, "Updates between validations (0: never).")
_DEV_SPLIT = flags.DEFINE_string("dev_split", "dev", "Split of --data_dir used for validation.")
_DEV_BLEU_SENTENCES = flags.DEFINE_integer("dev_bleu_sentences", None, "Dev sentences decoded for BLEU.")
_BEAM_SIZE = flags.DEFINE_integer("beam_size", 12, "Beam of the validation search.")
_LENGTH_NORMALIZATION = flags.DEFINE_enum(
    "length_normalization", "none", ["none", "length", "gnmt"], "Length normalisation of the validation search."
)
_PATIENCE = flags.DEFINE_integer("patience", None, "Validations without better dev BLEU before stopping.")
_MAX_NONFINITE_STEPS = flags.DEFINE_integer("max_nonfinite_steps", 5, "Non-finite updates in a row before stopping.")
_ATTENTION_SENTENCES = flags.DEFINE_integer("attention_sentences", 3, "Dev sentences shown in TensorBoard.")
_CPU_REPLICAS = flags.DEFINE_integer("cpu_replicas", None, "Split the CPU into this many replicas.")
_JIT_COMPILE = flags.DEFINE_bool("jit_compile", False, "Compile each update with XLA (lengths padded to buckets).")
_JIT_LENGTH_MULTIPLE = flags.DEFINE_integer(
    "jit_length_multiple", 4, "With --jit_compile, lengths are padded to multiples of this (one compile per bucket)."
)
flags.mark_flags_as_required(["data_dir", "model_dir"])

_ALL_FLAGS = [value for name, value in dict(globals()).items() if isinstance(value, flags.FlagHolder)]


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    strategy = make_strategy(_CPU_REPLICAS.value)  # before any other TensorFlow work
    from rnnsearch_tf.trainer import Trainer  # imports TensorFlow's device setup after the strategy

    metadata_file = os.path.join(_DATA_DIR.value, "metadata.json")
    if not os.path.exists(metadata_file):
        raise app.UsageError(f"{metadata_file} is missing: build the data first (python -m data_pipeline.build)")
    with open(metadata_file, encoding="utf-8") as stream:
        vocabularies = json.load(stream)["vocabularies"]
    model_config = ModelConfig(
        source_vocab_size=vocabularies["source"]["size"],
        target_vocab_size=vocabularies["target"]["size"],
        embedding_dim=_EMBEDDING_DIM.value,
        hidden_dim=_HIDDEN_DIM.value,
        maxout_dim=_MAXOUT_DIM.value,
        alignment_dim=_ALIGNMENT_DIM.value,
        readout_state=_READOUT_STATE.value,
    )
    training_config = TrainingConfig(
        data_dir=_DATA_DIR.value,
        model_dir=_MODEL_DIR.value,
        model=_MODEL.value,
        train_steps=_TRAIN_STEPS.value,
        max_epochs=_MAX_EPOCHS.value,
        batch_size=_BATCH_SIZE.value,
        sort_window=_SORT_WINDOW.value,
        max_tokens=_MAX_TOKENS.value,
        seed=_SEED.value,
        optimizer=_OPTIMIZER.value,
        learning_rate=_LEARNING_RATE.value,
        adadelta_rho=_ADADELTA_RHO.value,
        adadelta_epsilon=_ADADELTA_EPSILON.value,
        clip_norm=_CLIP_NORM.value,
        log_every=_LOG_EVERY.value,
        checkpoint_every=_CHECKPOINT_EVERY.value,
        keep_checkpoints=_KEEP_CHECKPOINTS.value,
        validate_every=_VALIDATE_EVERY.value,
        dev_split=_DEV_SPLIT.value,
        dev_bleu_sentences=_DEV_BLEU_SENTENCES.value,
        beam_size=_BEAM_SIZE.value,
        length_normalization=_LENGTH_NORMALIZATION.value,
        patience=_PATIENCE.value,
        max_nonfinite_steps=_MAX_NONFINITE_STEPS.value,
        attention_sentences=_ATTENTION_SENTENCES.value,
        cpu_replicas=_CPU_REPLICAS.value,
        jit_compile=_JIT_COMPILE.value,
        jit_length_multiple=_JIT_LENGTH_MULTIPLE.value,
    )
    os.makedirs(_MODEL_DIR.value, exist_ok=True)
    with open(os.path.join(_MODEL_DIR.value, "flags.txt"), "w", encoding="utf-8") as stream:
        stream.writelines(flags.FLAGS[holder.name].serialize() + "\n" for holder in _ALL_FLAGS
                          if flags.FLAGS[holder.name].value is not None)
    logging.info("TensorBoard: tensorboard --logdir %s", _MODEL_DIR.value)
    summary = Trainer(model_config, training_config, strategy).train()
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    app.run(main)
