import numpy as np
import pytest
import tensorflow as tf

from helpers import numpy_reference
from helpers.layer_test_case import run_layer_test
from rnnsearch_tf.layers import UnidirectionalEncoder


def test_layer_basics():
    run_layer_test(
        UnidirectionalEncoder,
        init_kwargs={"vocab_size": 12, "embedding_dim": 5, "units": 3},
        input_data={"source_ids": np.array([[5, 6, 7, 2], [8, 2, 0, 0]], dtype="int32")},
        expected_output_shape=(2, 3),
        expected_num_trainable_weights=7,
    )


def test_summary_matches_numpy_transcription_and_ignores_padding():
    rng = np.random.default_rng(3)
    encoder = UnidirectionalEncoder(vocab_size=12, embedding_dim=5, units=3)
    source_ids = np.array([[5, 6, 7, 2], [8, 2, 0, 0]], dtype="int32")
    encoder(source_ids)
    for variable in encoder.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    summary = encoder(source_ids).numpy()
    p = numpy_reference.paper_matrices(encoder.paper_weights())
    for index, length in enumerate([4, 2]):
        h = np.zeros(3)
        for word in source_ids[index, :length]:
            h = numpy_reference.gated_unit(p, "_enc", p["E_src"][word], h)
        np.testing.assert_allclose(summary[index], np.tanh(p["V"] @ h + p["b_V"]), atol=1e-5)


def test_misuse():
    encoder = UnidirectionalEncoder(vocab_size=12, embedding_dim=5, units=3)
    with pytest.raises(ValueError, match=r"UnidirectionalEncoder expects source_ids \(batch_size, src_len\)"):
        encoder(tf.constant([5, 6, 2]))
