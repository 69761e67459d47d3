"""Initializer for fused recurrent matrices whose square blocks must each be orthogonal."""

import keras


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class BlockOrthogonal(keras.initializers.Initializer):
    """Fills a `[n, k * n]` matrix with k independent random orthogonal `[n, n]` blocks.

    Bahdanau et al. 2014, Appendix B.1 initialise each recurrent matrix (U, U_z, U_r) as a random
    orthogonal matrix. Fusing [U_z | U_r] into one `[n, 2n]` weight must keep each block orthogonal,
    which `keras.initializers.Orthogonal` on the whole matrix does not.

    Args:
        seed: optional integer; block i uses `seed + i`.
    """

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype=None):
        rows, columns = shape
        if columns % rows:
            raise ValueError(f"BlockOrthogonal needs [n, k * n], got shape {tuple(shape)}")
        blocks = [
            keras.initializers.Orthogonal(seed=None if self.seed is None else self.seed + index)(
                (rows, rows), dtype=dtype
            )
            for index in range(columns // rows)
        ]
        return keras.ops.concatenate(blocks, axis=1)  # [n, k * n]

    def get_config(self):
        return {"seed": self.seed}
