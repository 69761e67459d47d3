"""Sizes and choices of an RNNsearch or RNNencdec model."""

import dataclasses
import json

from rnnsearch_tf.utils.config_checks import check_choices
from rnnsearch_tf.utils.precision import PRECISIONS
from rnnsearch_tf.layers.initializers import INITIALIZERS

READOUT_STATES = ("current", "previous")
# Fields that neither shape the weights nor change what trained weights compute: how they were drawn,
# dropout in training, the arithmetic's precision. A model continued from trained weights
# (`rnnsearch train --init_from`) may set them anew; every other field must be its parent's.
NON_ARCHITECTURE_FIELDS = ("initializer", "embedding_dropout", "hidden_dropout", "readout_dropout", "precision")


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Hyperparameters shared by `RNNSearch` and `RNNEncDec`.

    Defaults are the paper's (Bahdanau et al. 2014, Appendix A.2.3 and B.1; Section 4.1); the CPU
    configs deviate where measurements said so (docs/training.md, "The CPU recipe").

    Args:
        source_vocab_size: K_x, shortlist size of the source language plus reserved tokens.
        target_vocab_size: K_y, likewise for the target language.
        embedding_dim: m, word embedding size (620).
        hidden_dim: n, gated hidden units per RNN (1000).
        maxout_dim: l, maxout units of the deep output (500); the layer below has 2l units.
        alignment_dim: n', hidden units of the alignment model (1000). Unused by RNNencdec.
        readout_state: which decoder state feeds the deep output: "current" (s_i, Eq. 4 of the paper
            and its earlier versions) or "previous" (s_{i-1}, the final version of Appendix A.2.2).
        initializer: "paper" (Appendix B.1), "uniform" (U(-0.1, 0.1) for every weight, as OpenNMT-py) or
            "xavier" (Glorot per gate block, small normal embeddings, as Joey NMT); see
            `layers/initializers.py`.
        embedding_dropout: dropout rate on source and target word embeddings in training (paper: 0).
        hidden_dropout: dropout rate on the annotations (RNNencdec: c) and on the decoder states read by
            the deep output, in training (paper: 0).
        readout_dropout: dropout rate on the maxout units before W_o, in training (paper: 0).
        precision: "float32" (the paper), "mixed_bfloat16" (bf16 matmuls and activations, float32
            weights; softmax, loss and search scores in float32) or "auto" (mixed_bfloat16 where the
            machine has bf16 hardware: a GPU, AVX512_BF16 or AMX; else float32). Training and decoding; a
            model read for decoding holds its weights in bf16 (`inference.model_loader.decoding_model`).
    """

    source_vocab_size: int = 30004
    target_vocab_size: int = 30004
    embedding_dim: int = 620
    hidden_dim: int = 1000
    maxout_dim: int = 500
    alignment_dim: int = 1000
    readout_state: str = dataclasses.field(default="current", metadata={"choices": READOUT_STATES})
    initializer: str = dataclasses.field(default="paper", metadata={"choices": INITIALIZERS})
    embedding_dropout: float = 0.0
    hidden_dropout: float = 0.0
    readout_dropout: float = 0.0
    precision: str = dataclasses.field(default="float32", metadata={"choices": PRECISIONS})

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"ModelConfig.{field.name} must be a positive integer, got {value!r}")
        for name in ("source_vocab_size", "target_vocab_size"):
            if getattr(self, name) < 5:
                raise ValueError(
                    f"ModelConfig.{name} = {getattr(self, name)} leaves no room for words: the first 4 ids "
                    "are <pad>, <s>, </s>, <unk>"
                )
        check_choices(self)
        for name in ("embedding_dropout", "hidden_dropout", "readout_dropout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
                raise ValueError(f"ModelConfig.{name} must be a rate in [0, 1), got {value!r}")

    def to_dict(self):
        return dataclasses.asdict(self)

    def architecture_differences(self, other):
        """[(field, this config's value, `other`'s value)] for the fields outside `NON_ARCHITECTURE_FIELDS`
        where the two configs differ: the weights of one do not fit the other."""
        return [
            (field.name, getattr(self, field.name), getattr(other, field.name))
            for field in dataclasses.fields(self)
            if field.name not in NON_ARCHITECTURE_FIELDS and getattr(self, field.name) != getattr(other, field.name)
        ]

    @classmethod
    def from_dict(cls, values):
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"ModelConfig has no field(s) {unknown}; known fields: {sorted(known)}")
        return cls(**values)

    def save(self, path):
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(self.to_dict(), stream, indent=2, sort_keys=True)
            stream.write("\n")

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as stream:
            try:
                values = json.load(stream)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}: not a JSON model config ({error})") from error
        return cls.from_dict(values)
