"""Helpers shared by the model tests."""

import numpy as np

from rnnsearch_tf import ModelConfig

SMALL_CONFIG = dict(
    source_vocab_size=23, target_vocab_size=19, embedding_dim=6, hidden_dim=7, maxout_dim=5, alignment_dim=9
)


def small_config(**overrides):
    return ModelConfig(**dict(SMALL_CONFIG, **overrides))


def randomize_weights(model, seed=0, stddev=0.5):
    """Replaces every weight with N(0, stddev²) so that no term of the equations is negligible."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0.0, stddev, size=variable.shape).astype("float32"))


def padded_batch():
    """A right-padded batch of three sentence pairs of different lengths (ids end with EOS = 2)."""
    sources = [[5, 9, 14, 7, 2], [11, 2], [8, 8, 20, 2]]
    targets = [[4, 6, 2], [17, 13, 10, 12, 2], [9, 2]]
    return sources, targets, pad(sources), pad(targets)


def pad(sequences, length=None):
    length = length or max(len(s) for s in sequences)
    return np.array([s + [0] * (length - len(s)) for s in sequences], dtype="int32")
