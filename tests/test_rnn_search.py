"""RNNsearch against a NumPy transcription of Bahdanau et al. 2014, Appendix A."""

import numpy as np
import pytest
import tensorflow as tf

from helpers import numpy_reference
from helpers.model_test_utils import pad, padded_batch, randomize_weights, small_config
from rnnsearch_tf import ModelConfig, RNNSearch


@pytest.mark.parametrize("readout_state", ["current", "previous"])
def test_log_probs_match_numpy_transcription(readout_state):
    model = RNNSearch(small_config(readout_state=readout_state))
    randomize_weights(model, seed=1)
    sources, targets, source_ids, target_ids = padded_batch()
    log_probs = model.token_log_probs(source_ids, target_ids).numpy()
    _, alignment = model.teacher_forcing(source_ids, target_ids)
    weights = model.paper_weights()
    for index, (source, target) in enumerate(zip(sources, targets)):
        expected, expected_alignment = numpy_reference.rnnsearch_log_probs(
            weights, source, target, readout_state
        )
        np.testing.assert_allclose(log_probs[index, : len(target)], expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(log_probs[index, len(target) :], 0.0)
        np.testing.assert_allclose(
            alignment.numpy()[index, : len(target), : len(source)], np.stack(expected_alignment), atol=1e-5
        )


def test_readout_state_changes_the_model():
    sources, targets, source_ids, target_ids = padded_batch()
    results = []
    for readout_state in ("current", "previous"):
        model = RNNSearch(small_config(readout_state=readout_state))
        randomize_weights(model, seed=2)
        results.append(model.token_log_probs(source_ids, target_ids).numpy())
    assert not np.allclose(results[0], results[1])


def test_padding_changes_nothing_and_alignment_is_a_distribution():
    model = RNNSearch(small_config())
    randomize_weights(model, seed=3)
    _, _, source_ids, target_ids = padded_batch()
    log_probs = model.token_log_probs(source_ids, target_ids).numpy()
    more_source = pad(source_ids.tolist(), source_ids.shape[1] + 4)
    more_target = pad(target_ids.tolist(), target_ids.shape[1] + 3)
    padded_log_probs = model.token_log_probs(more_source, more_target).numpy()
    np.testing.assert_allclose(padded_log_probs[:, : target_ids.shape[1]], log_probs, atol=1e-6)
    np.testing.assert_array_equal(padded_log_probs[:, target_ids.shape[1] :], 0.0)

    _, alignment = model.teacher_forcing(more_source, more_target)  # [batch, tgt_len, src_len]
    alignment = alignment.numpy()
    np.testing.assert_allclose(alignment.sum(axis=-1), 1.0, atol=1e-6)
    source_is_pad = (more_source == 0)[:, np.newaxis, :]
    assert np.all(alignment[np.broadcast_to(source_is_pad, alignment.shape)] == 0.0)


def test_annotations_ignore_padding():
    model = RNNSearch(small_config())
    randomize_weights(model, seed=4)
    short = model.encoder(tf.constant([[5, 9, 2]])).numpy()
    padded = model.encoder(tf.constant([[5, 9, 2, 0, 0]])).numpy()
    np.testing.assert_allclose(padded[:, :3], short, atol=1e-6)
    np.testing.assert_array_equal(padded[:, 3:], 0.0)


@pytest.mark.parametrize("readout_state", ["current", "previous"])
def test_call_equals_stepping_by_hand(readout_state):
    model = RNNSearch(small_config(readout_state=readout_state))
    randomize_weights(model, seed=5)
    _, _, source_ids, target_ids = padded_batch()
    logits, alignment = model.teacher_forcing(source_ids, target_ids)
    state = model.encode(tf.constant(source_ids))
    previous_ids = tf.fill([source_ids.shape[0]], 1)  # BOS_ID
    for position in range(target_ids.shape[1]):
        step_logits, new_state, step_alignment = model.step(previous_ids, state)
        assert list(new_state) == ["s"]  # the rest of the state is read only
        state = dict(state, **new_state)
        np.testing.assert_allclose(step_logits.numpy(), logits.numpy()[:, position], atol=1e-5)
        np.testing.assert_allclose(step_alignment.numpy(), alignment.numpy()[:, position], atol=1e-6)
        previous_ids = tf.constant(target_ids[:, position])


def test_paper_weights_cover_every_variable_with_paper_shapes():
    config = small_config()
    model = RNNSearch(config)
    weights = model.paper_weights()
    assert sum(v.size for v in weights.values()) == sum(int(np.prod(v.shape)) for v in model.weights)
    n, m, l, n_a = config.hidden_dim, config.embedding_dim, config.maxout_dim, config.alignment_dim
    expected = {
        "E_src": (config.source_vocab_size, m), "W_fwd": (m, n), "U_z_bwd": (n, n), "b_W_r_fwd": (n,),
        "W_a": (n, n_a), "b_W_a": (n_a,), "U_a": (2 * n, n_a), "v_a": (n_a,), "W_s": (n, n),
        "E": (config.target_vocab_size, m), "W": (m, n), "U": (n, n), "C": (2 * n, n), "C_z": (2 * n, n),
        "C_r": (2 * n, n), "U_o": (n, 2 * l), "V_o": (m, 2 * l), "C_o": (2 * n, 2 * l),
        "W_o": (l, config.target_vocab_size), "b_W_o": (config.target_vocab_size,), "b_U_o": (2 * l,),
    }
    for name, shape in expected.items():
        assert weights[name].shape == shape, name


def test_paper_initialisation():
    model = RNNSearch(ModelConfig(source_vocab_size=300, target_vocab_size=300, embedding_dim=62,
                                  hidden_dim=100, maxout_dim=50, alignment_dim=100))
    weights = model.paper_weights()
    for name in ("U_fwd", "U_z_fwd", "U_r_bwd", "U", "U_z", "U_r"):
        np.testing.assert_allclose(weights[name].T @ weights[name], np.eye(100), atol=1e-4, err_msg=name)
    for name in ("W_a", "U_a"):
        assert 0.0007 < weights[name].std() < 0.0013, name
    for name in ("v_a", "b_W_a", "b_W_fwd", "b_W_z", "b_U_o", "b_W_o", "b_W_s"):
        np.testing.assert_array_equal(weights[name], 0.0, err_msg=name)
    for name in ("E_src", "E", "W_fwd", "W_z", "C", "W_s", "U_o", "V_o", "C_o", "W_o"):
        assert 0.008 < weights[name].std() < 0.012, name


def test_config_round_trip_and_weights_reload(tmp_path):
    model = RNNSearch(small_config(readout_state="previous"))
    randomize_weights(model, seed=6)
    revived = RNNSearch.from_config(model.get_config())
    assert revived.config == model.config
    path = str(tmp_path / "model.weights.h5")
    model.save_weights(path)
    revived.load_weights(path)
    _, _, source_ids, target_ids = padded_batch()
    np.testing.assert_array_equal(
        revived.token_log_probs(source_ids, target_ids).numpy(),
        model.token_log_probs(source_ids, target_ids).numpy(),
    )


def test_misuse_raises_clear_errors():
    model = RNNSearch(small_config())
    with pytest.raises(ValueError, match=r"source_ids must be a rank-2 .*add a batch dimension"):
        model.token_log_probs([5, 6, 2], [[4, 2]])
    with pytest.raises(ValueError, match=r"target_ids holds id 19 .* vocabulary has 19 entries"):
        model.token_log_probs([[5, 6, 2]], [[19, 2]])
    with pytest.raises(ValueError, match=r"^source_ids holds id -1: token ids are from 0 \(padding\) up$"):
        model.token_log_probs([[-1, 5, 2]], [[3, 2]])
    with pytest.raises(ValueError, match="integer token ids"):
        model.token_log_probs(tf.constant([[5.0, 2.0]]), [[4, 2]])
    with pytest.raises(TypeError, match="needs a ModelConfig"):
        RNNSearch("big")
