import functools

import numpy as np
import pytest
import tensorflow as tf

from helpers.layer_test_case import run_layer_test
from rnnsearch_tf.layers import Decoder

CONFIG = {"vocab_size": 11, "embedding_dim": 4, "units": 3, "maxout_dim": 2}


def attention_state(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "s": rng.normal(size=(2, 3)).astype("float32"),
        "annotations": rng.normal(size=(2, 5, 6)).astype("float32"),
        "source_mask": np.array([[True] * 5, [True, True, True, False, False]]),
    }


def test_layer_basics_with_attention():
    run_layer_test(
        Decoder,
        init_kwargs=dict(CONFIG, alignment_dim=7, readout_state="previous"),
        input_data={"previous_ids": np.array([[1, 5, 6], [1, 7, 2]], "int32"),
                    "encoder_outputs": attention_state()},
        expected_output_shape=((2, 3, 11), (2, 3, 5)),
        expected_num_trainable_weights=16,
    )


def test_layer_basics_with_fixed_context():
    run_layer_test(
        Decoder,
        init_kwargs=dict(CONFIG, alignment_dim=None, readout_state="current"),
        input_data={
            "previous_ids": np.array([[1, 5, 6], [1, 7, 2]], "int32"),
            "encoder_outputs": {"s": np.ones((2, 3), "float32"), "context": np.ones((2, 3), "float32")},
        },
        expected_output_shape=((2, 3, 11), (2, 3, 0)),
        expected_num_trainable_weights=12,
    )


def test_start_and_padding_embed_to_zero():
    decoder = Decoder(**CONFIG, alignment_dim=7)
    decoder(np.array([[1, 5]], "int32"), attention_state())
    embedded = decoder.embed_previous(tf.constant([1, 0, 5])).numpy()
    np.testing.assert_array_equal(embedded[:2], 0.0)
    assert np.any(embedded[2] != 0.0)


def test_call_equals_step_by_step():
    decoder = Decoder(**CONFIG, alignment_dim=7)
    state = attention_state(3)
    previous_ids = np.array([[1, 5, 6, 9], [1, 7, 2, 0]], "int32")
    decoder(previous_ids, state)
    rng = np.random.default_rng(6)
    for variable in decoder.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    logits, alignment = decoder(previous_ids, state)
    step_logits, step_alignment = step_by_step(decoder, previous_ids, state)
    np.testing.assert_allclose(step_logits.numpy(), logits.numpy(), atol=1e-5)
    np.testing.assert_allclose(step_alignment.numpy(), alignment.numpy(), atol=1e-6)


@pytest.mark.parametrize("alignment_dim", [7, None])
def test_a_restricted_step_gives_the_candidates_logits(alignment_dim):
    decoder = Decoder(**CONFIG, alignment_dim=alignment_dim)
    previous_ids = np.array([[1, 5, 6, 9], [1, 7, 2, 0]], "int32")  # BOS first, PAD last
    if alignment_dim:
        state = attention_state(4)
    else:
        state = {"s": np.ones((2, 3), "float32"), "context": np.full((2, 3), 0.5, "float32")}
    decoder(previous_ids, state)
    rng = np.random.default_rng(8)
    for variable in decoder.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    candidate_ids = np.array([0, 1, 2, 3, 5, 6, 7, 9], "int32")  # the reserved ids keep their positions
    restriction = decoder.restrict(tf.constant(candidate_ids))
    full, restricted = decoder.initial_state(state), decoder.initial_state(state)
    for position in range(previous_ids.shape[1]):
        ids = previous_ids[:, position]
        logits, new_state, alignment = decoder.step(ids, full)
        positions = np.searchsorted(candidate_ids, ids).astype("int32")
        restricted_logits, restricted_state, restricted_alignment = decoder.step(positions, restricted, restriction)
        np.testing.assert_allclose(restricted_logits.numpy(), logits.numpy()[:, candidate_ids], atol=1e-5)
        np.testing.assert_allclose(restricted_state["s"].numpy(), new_state["s"].numpy(), atol=1e-6)
        np.testing.assert_allclose(restricted_alignment.numpy(), alignment.numpy(), atol=1e-6)
        full, restricted = dict(full, **new_state), dict(restricted, **restricted_state)


def test_misuse():
    decoder = Decoder(**CONFIG, alignment_dim=7)
    with pytest.raises(KeyError, match="annotations"):
        decoder(np.array([[1, 5]], "int32"), {"s": np.ones((1, 3), "float32")})


@pytest.mark.parametrize("alignment_dim", [7, None])
def test_gradients_equal_autodiff_of_stepping_by_hand(alignment_dim):
    """Teacher forcing's gradients (its loop over `transition`, C c_i and C_o c_i from C h and C_o h
    after it) equal those of `step` applied position by position, for every weight and encoder output."""
    rng = np.random.default_rng(4)
    decoder = Decoder(**CONFIG, alignment_dim=alignment_dim, readout_state="previous")
    encoder_outputs = attention_state(5) if alignment_dim else {
        "s": rng.normal(size=(2, 3)).astype("float32"), "context": rng.normal(size=(2, 3)).astype("float32")}
    encoder_outputs = {name: tf.constant(value) for name, value in encoder_outputs.items()}
    previous_ids = np.array([[1, 5, 6, 9], [1, 7, 2, 0]], "int32")
    decoder(previous_ids, encoder_outputs)
    for variable in decoder.weights:
        variable.assign(rng.normal(0, 0.5, size=variable.shape).astype("float32"))
    logit_weights = tf.constant(rng.normal(size=(2, 4, 11)), tf.float32)
    alignment_weights = tf.constant(rng.normal(size=(2, 4, 5 if alignment_dim else 0)), tf.float32)
    differentiable = [name for name in ("s", "annotations", "context") if name in encoder_outputs]

    def gradients(forward):
        with tf.GradientTape() as tape:
            tape.watch([encoder_outputs[name] for name in differentiable])
            logits, alignments = forward(previous_ids, encoder_outputs)
            loss = tf.reduce_sum(logits * logit_weights) + tf.reduce_sum(alignments * alignment_weights)
        return tape.gradient(loss, [encoder_outputs[name] for name in differentiable] + decoder.trainable_weights)

    names = differentiable + [variable.path for variable in decoder.trainable_weights]
    stepped = functools.partial(step_by_step, decoder)
    for actual, expected, name in zip(gradients(decoder), gradients(stepped), names, strict=True):
        assert actual is not None and expected is not None, name
        actual, expected = tf.convert_to_tensor(actual), tf.convert_to_tensor(expected)  # E's: IndexedSlices
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def step_by_step(decoder, previous_ids, encoder_outputs):
    """`decoder.step` at every position from `initial_state`: logits and α stacked like `call`'s."""
    state, logits, alignments = decoder.initial_state(encoder_outputs), [], []
    for position in range(previous_ids.shape[1]):
        step_logits, new_state, step_alignment = decoder.step(previous_ids[:, position], state)
        state = dict(state, **new_state)  # s_i; the rest is read only
        logits.append(step_logits)
        alignments.append(step_alignment)
    return tf.stack(logits, axis=1), tf.stack(alignments, axis=1)  # [batch, tgt_len, K_y], [batch, tgt_len, src_len]
