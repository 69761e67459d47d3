import numpy as np
import pytest
import tensorflow as tf

from helpers import numpy_reference
from helpers.layer_test_case import run_layer_test
from rnnsearch_tf.layers import BidirectionalEncoder


def test_layer_basics():
    run_layer_test(
        BidirectionalEncoder,
        init_kwargs={"vocab_size": 12, "embedding_dim": 5, "units": 3},
        input_data={"source_ids": np.array([[5, 6, 7, 2], [8, 2, 0, 0]], dtype="int32")},
        expected_output_shape=(2, 4, 6),
        expected_num_trainable_weights=9,
    )


def test_annotations_match_numpy_transcription_and_ignore_padding():
    rng = np.random.default_rng(2)
    encoder = BidirectionalEncoder(vocab_size=12, embedding_dim=5, units=3)
    source_ids = np.array([[5, 6, 7, 2], [8, 2, 0, 0]], dtype="int32")
    encoder(source_ids)
    for variable in encoder.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    annotations = encoder(source_ids).numpy()
    p = numpy_reference.paper_matrices(encoder.paper_weights())
    for index, length in enumerate([4, 2]):
        x = [p["E_src"][word] for word in source_ids[index, :length]]
        h, forward = np.zeros(3), []
        for x_i in x:
            h = numpy_reference.gated_unit(p, "_fwd", x_i, h)
            forward.append(h)
        h, backward = np.zeros(3), [None] * length
        for position in reversed(range(length)):
            h = numpy_reference.gated_unit(p, "_bwd", x[position], h)
            backward[position] = h
        expected = np.concatenate([np.stack(forward), np.stack(backward)], axis=1)
        np.testing.assert_allclose(annotations[index, :length], expected, atol=1e-5)
        np.testing.assert_array_equal(annotations[index, length:], 0.0)


def test_misuse():
    encoder = BidirectionalEncoder(vocab_size=12, embedding_dim=5, units=3)
    with pytest.raises(ValueError, match=r"BidirectionalEncoder expects source_ids \(batch_size, src_len\)"):
        encoder(tf.constant([5, 6, 2]))
