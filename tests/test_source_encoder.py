"""rnnsearch_tf/layers/source_encoder.py, what both encoders share, through each of them: the source
embedding Ē x with its dropout in training only, the config with every argument, the dtype policy
reaching every sublayer. Each encoder's own equations are in test_{bi,uni}directional_encoder.py."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf.layers import BidirectionalEncoder, UnidirectionalEncoder

ENCODERS = [BidirectionalEncoder, UnidirectionalEncoder]
SOURCE_IDS = tf.constant([[5, 6, 7, 2], [8, 2, 0, 0]])


@pytest.mark.parametrize("encoder_class", ENCODERS)
def test_embedding_dropout_applies_in_training_only(encoder_class):
    encoder = encoder_class(vocab_size=12, embedding_dim=5, units=3, embedding_dropout=0.5)
    encoder(SOURCE_IDS)
    embeddings = encoder.source_embedding.embeddings.numpy()[SOURCE_IDS.numpy()]  # [batch, src_len, m]
    np.testing.assert_array_equal(encoder.embed(SOURCE_IDS).numpy(), embeddings)
    np.testing.assert_array_equal(encoder.embed(SOURCE_IDS, training=False).numpy(), embeddings)
    tf.random.set_seed(1)
    dropped = encoder.embed(SOURCE_IDS, training=True).numpy()
    kept = dropped != 0
    assert 0 < kept.sum() < kept.size  # 40 entries, each kept with probability 0.5
    np.testing.assert_allclose(dropped[kept], 2 * embeddings[kept], rtol=1e-6)  # kept entries scaled by 1 / 0.5
    assert not np.allclose(encoder(SOURCE_IDS, training=True).numpy(), encoder(SOURCE_IDS).numpy())


@pytest.mark.parametrize("encoder_class", ENCODERS)
def test_config_holds_every_argument(encoder_class):
    arguments = dict(vocab_size=12, embedding_dim=5, units=3, initializer="xavier", embedding_dropout=0.25)
    encoder = encoder_class(**arguments, name="encoder")
    config = encoder.get_config()
    assert {name: config[name] for name in arguments} == arguments
    rebuilt = encoder_class.from_config(config)
    assert {name: getattr(rebuilt, name) for name in arguments} == arguments and rebuilt.name == "encoder"


@pytest.mark.parametrize("encoder_class", ENCODERS)
def test_the_dtype_policy_reaches_the_embedding_and_the_gated_units(encoder_class):
    encoder = encoder_class(vocab_size=12, embedding_dim=5, units=3, dtype="mixed_bfloat16")
    outputs = encoder(SOURCE_IDS)
    sublayers = {value.name: value for value in vars(encoder).values() if isinstance(value, keras.layers.Layer)}
    rnns = ["forward_rnn", "backward_rnn"] if encoder_class is BidirectionalEncoder else ["rnn"]
    assert {"E_src", "source_embedding_dropout", *rnns} <= set(sublayers), sorted(sublayers)
    assert {layer.dtype_policy.name for layer in sublayers.values()} == {"mixed_bfloat16"}
    assert encoder.embed(SOURCE_IDS).dtype == tf.bfloat16 and outputs.dtype == tf.bfloat16
    assert {variable.dtype for variable in encoder.weights} == {"float32"}
