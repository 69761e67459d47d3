"""Weight initialisation schemes: the paper's (Bahdanau et al. 2014, Appendix B.1) and two modern ones.

Every layer takes `initializer="paper" | "uniform" | "xavier"` and asks `initializer(scheme, role)` for
each of its weights, so one name in `ModelConfig.initializer` sets the whole model:

| role | paper (B.1) | uniform (OpenNMT-py) | xavier (Joey NMT) |
|---|---|---|---|
| `embedding` (E, Ē) | N(0, 0.01²) | U(-0.1, 0.1) | N(0, 0.01²) |
| `input` (W_z, W_r, W, C_z, C_r, C) | N(0, 0.01²) | U(-0.1, 0.1) | Glorot uniform per gate block |
| `recurrent` (U_z, U_r, U) | orthogonal per block | U(-0.1, 0.1) | Glorot uniform per gate block |
| `dense` (W_s, V, V', U_o, V_o, C_o, W_o) | N(0, 0.01²) | U(-0.1, 0.1) | Glorot uniform |
| `alignment` (W_a, U_a) | N(0, 0.001²) | U(-0.1, 0.1) | Glorot uniform |
| `alignment_vector` (v_a) | zeros | U(-0.1, 0.1) | Glorot uniform as a `[n', 1]` matrix |
| `bias` | zeros | U(-0.1, 0.1) | zeros |

"uniform" is OpenNMT-py's `-param_init 0.1` (every parameter, biases included); "xavier" is Joey NMT's
default (`joeynmt/initialization.py`: `xavier_uniform_n_` on fused gate matrices, embeddings
N(0, 0.01²), zero biases).

Inside `restored_weights()` every weight starts as zeros, whatever the scheme: for a model whose weights a
checkpoint replaces at once, which then draws no random numbers (the paper's orthogonal blocks cost seconds at
the paper's size, for every command that loads a model).
"""

import contextlib
import contextvars
import math

import keras

from rnnsearch_tf.layers.dense import Dense

INITIALIZERS = ("paper", "uniform", "xavier")
ROLES = ("embedding", "input", "recurrent", "dense", "alignment", "alignment_vector", "bias")
_RESTORED = contextvars.ContextVar("restored_weights", default=False)


@contextlib.contextmanager
def restored_weights():
    """Inside: `initializer` gives zeros, for layers whose weights are read from a checkpoint before any use
    (`ModelDir.load_model`): building them draws no random numbers."""
    token = _RESTORED.set(True)
    try:
        yield
    finally:
        _RESTORED.reset(token)


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class Blockwise(keras.initializers.Initializer):
    """Fills a fused `[rows, blocks * n]` matrix with `blocks` independent `[rows, n]` draws of `block`.

    A fused gate matrix such as [U_z | U_r] must be initialised as its separate matrices would be:
    each orthogonal (Appendix B.1), or each Glorot-scaled by its own fan-out (Joey NMT).

    Args:
        block: a Keras initializer for one `[rows, n]` block.
        blocks: how many blocks the columns hold.
    """

    def __init__(self, block, blocks):
        self.block = keras.initializers.get(block)
        self.blocks = blocks

    def __call__(self, shape, dtype=None):
        rows, columns = shape
        if columns % self.blocks:
            raise ValueError(f"Blockwise needs [rows, {self.blocks} * n], got shape {tuple(shape)}")
        width = columns // self.blocks
        # A fresh copy per block: an unseeded Keras initializer repeats its values on every call.
        draws = [type(self.block).from_config(self.block.get_config()) for _ in range(self.blocks)]
        # Drawn in float32: the orthogonal draw's QR has no bf16 kernel (a model built to decode in bf16).
        matrix = keras.ops.concatenate([draw((rows, width), dtype="float32") for draw in draws], axis=1)
        return keras.ops.cast(matrix, dtype or "float32")  # [rows, blocks * n]

    def get_config(self):
        return {"block": keras.initializers.serialize(self.block), "blocks": self.blocks}


def initializer(scheme, role, blocks=1, vector_length=None):
    """The Keras initializer of one weight (see the module's table).

    Args:
        scheme: one of `INITIALIZERS`.
        role: one of `ROLES`.
        blocks: gate blocks side by side in a fused `input` or `recurrent` matrix (3 for [W_z | W_r | W],
            2 for [U_z | U_r]).
        vector_length: n', the length of v_a (role `alignment_vector`, scheme "xavier").
    """
    if scheme not in INITIALIZERS:
        raise ValueError(f"initializer must be one of {INITIALIZERS}, got {scheme!r}")
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    if _RESTORED.get():
        return keras.initializers.Zeros()
    if scheme == "uniform":
        return keras.initializers.RandomUniform(-0.1, 0.1)
    if role == "bias":
        return keras.initializers.Zeros()
    if role == "embedding" or (scheme == "paper" and role in ("input", "dense")):
        return keras.initializers.RandomNormal(stddev=0.01)
    if scheme == "paper":
        return {
            "recurrent": Blockwise(keras.initializers.Orthogonal(), blocks),
            "alignment": keras.initializers.RandomNormal(stddev=0.001),
            "alignment_vector": keras.initializers.Zeros(),
        }[role]
    if role == "alignment_vector":
        limit = math.sqrt(6.0 / (vector_length + 1))  # Glorot uniform of a [n', 1] matrix
        return keras.initializers.RandomUniform(-limit, limit)
    return Blockwise(keras.initializers.GlorotUniform(), blocks)


def initialized_dense(units, scheme, role="dense", blocks=1, use_bias=True, **kwargs):
    """A `dense.Dense` whose kernel (`role`, `blocks`) and bias follow `scheme`; `kwargs` go to Dense."""
    return Dense(
        units,
        use_bias=use_bias,
        kernel_initializer=initializer(scheme, role, blocks),
        bias_initializer=initializer(scheme, "bias"),
        **kwargs,
    )
