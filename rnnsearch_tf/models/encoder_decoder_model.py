"""What RNNsearch and RNNencdec share: teacher forcing, scoring, one decoding step, paper weights."""

import keras
import numpy as np
import tensorflow as tf

from data_pipeline.constants import BOS_ID, PAD_ID
from rnnsearch_tf.layers.decoder import Decoder
from rnnsearch_tf.layers.initializers import initialized_dense
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.utils.precision import dtype_policy


class EncoderDecoderModel(keras.Model):
    """Base class of `RNNSearch` and `RNNEncDec`.

    Subclasses name their encoder layer class (`encoder_class`), whether the decoder attends
    (`uses_attention`) and the projection that gives the decoder's s_0 (`initial_state_name`), and
    define `encoder_outputs` and `encoder_outputs_shape`.

    Ids are int32, right-padded with `PAD_ID` (0); every sentence ends with `EOS_ID`.

    Call arguments:
        inputs: `(source_ids, target_ids)` or `{"source_ids": ..., "target_ids": ...}`,
            int `(batch_size, src_len)` and `(batch_size, tgt_len)`.

    Returns:
        logits `(batch_size, tgt_len, target_vocab_size)` of p(y_i | y_<i, x) under teacher forcing.
    """

    def __init__(self, config, **kwargs):
        if isinstance(config, dict):
            config = ModelConfig.from_dict(config)
        if not isinstance(config, ModelConfig):
            raise TypeError(f"{type(self).__name__} needs a ModelConfig, got {type(config).__name__}")
        kwargs.setdefault("dtype", dtype_policy(config.precision))  # every sublayer takes self.dtype_policy
        super().__init__(**kwargs)
        self.config = config
        self.decoder = Decoder(
            vocab_size=config.target_vocab_size,
            embedding_dim=config.embedding_dim,
            units=config.hidden_dim,
            maxout_dim=config.maxout_dim,
            alignment_dim=config.alignment_dim if self.uses_attention else None,
            readout_state=config.readout_state,
            initializer=config.initializer,
            embedding_dropout=config.embedding_dropout,
            hidden_dropout=config.hidden_dropout,
            readout_dropout=config.readout_dropout,
            dtype=self.dtype_policy,
            name="decoder",
        )
        self.encoder = self.encoder_class(
            config.source_vocab_size,
            config.embedding_dim,
            config.hidden_dim,
            initializer=config.initializer,
            embedding_dropout=config.embedding_dropout,
            dtype=self.dtype_policy,
            name="encoder",
        )
        self.initial_state_projection = initialized_dense(
            config.hidden_dim, config.initializer, activation="tanh", dtype=self.dtype_policy,
            name=self.initial_state_name,
        )
        self.build()

    encoder_class = None
    uses_attention = None
    initial_state_name = None

    def encoder_outputs_shape(self):
        """Shapes of `encoder_outputs` by name, for building the decoder."""
        raise NotImplementedError

    def build(self, input_shape=None):
        self.encoder.build((None, None))
        self.initial_state_projection.build((None, self.config.hidden_dim))
        self.decoder.build((None, None), self.encoder_outputs_shape())

    def encoder_outputs(self, source_ids, training=None):
        """Source ids `(batch, src_len)` -> the dict the decoder is conditioned on (see `Decoder`)."""
        raise NotImplementedError

    def encode(self, source_ids):
        """Source ids `(batch, src_len)` -> the decoder state before the first target word (for `step`)."""
        return self.decoder.initial_state(self.encoder_outputs(source_ids))

    def _check_ids(self, name, ids, vocab_size):
        if ids.shape.rank != 2:
            raise ValueError(
                f"{name} must be a rank-2 int tensor [batch, length] (right-padded with 0), got shape "
                f"{ids.shape}; add a batch dimension for a single sentence"
            )
        if not ids.dtype.is_integer:
            raise ValueError(f"{name} must hold integer token ids, got dtype {ids.dtype.name}")
        if tf.executing_eagerly() and tf.size(ids) > 0:
            largest, smallest = int(tf.reduce_max(ids)), int(tf.reduce_min(ids))
            if smallest < 0:
                raise ValueError(f"{name} holds id {smallest}: token ids are from 0 (padding) up")
            if largest >= vocab_size:
                raise ValueError(
                    f"{name} holds id {largest} but the model's vocabulary has {vocab_size} entries: "
                    "the vocabulary files and ModelConfig disagree (rebuild the data or fix "
                    f"{'source' if name == 'source_ids' else 'target'}_vocab_size)"
                )

    def teacher_forcing(self, source_ids, target_ids, training=False):
        """-> `(logits, alignment_weights)`: `(batch, tgt_len, K_y)`, `(batch, tgt_len, src_len)`.

        `training=True` applies the model's dropout (`ModelConfig`); search and scoring never do.
        """
        source_ids = tf.convert_to_tensor(source_ids)
        target_ids = tf.convert_to_tensor(target_ids)
        self._check_ids("source_ids", source_ids, self.config.source_vocab_size)
        self._check_ids("target_ids", target_ids, self.config.target_vocab_size)
        source_ids = tf.cast(source_ids, tf.int32)
        target_ids = tf.cast(target_ids, tf.int32)
        previous_ids = tf.concat(
            [tf.fill([tf.shape(target_ids)[0], 1], BOS_ID), target_ids[:, :-1]], axis=1
        )  # y_{i-1}: [batch, tgt_len]
        return self.decoder(previous_ids, self.encoder_outputs(source_ids, training), training=training)

    def call(self, inputs, training=False):
        """`(source_ids, target_ids)` or a dict of them -> the logits of `teacher_forcing`, with the model's dropout
        where Keras calls it in training (`model(x, training=True)`, `fit`)."""
        if isinstance(inputs, dict):
            inputs = (inputs["source_ids"], inputs["target_ids"])
        source_ids, target_ids = inputs
        return self.teacher_forcing(source_ids, target_ids, training=training)[0]

    def token_log_probs(self, source_ids, target_ids):
        """log p(y_i | y_<i, x): float32 `(batch, tgt_len)`, 0.0 at padded target positions."""
        logits, _ = self.teacher_forcing(source_ids, target_ids)
        target_ids = tf.cast(target_ids, tf.int32)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)  # [batch, tgt_len, K_y]
        token_log_probs = tf.gather(log_probs, target_ids, axis=-1, batch_dims=2)  # [batch, tgt_len]
        return token_log_probs * tf.cast(tf.not_equal(target_ids, PAD_ID), tf.float32)

    def step(self, previous_ids, state, restriction=None):
        """One decoding step: y_{i-1} `(batch,)` -> `(logits (batch, K_y), new_state, α_i)`, logits and α in
        float32 whatever the precision; new_state holds s_i only (`Decoder.step`); with a `restriction`
        (`restricted_symbols_to_logits_fn`) ids and logits are those of its candidate words."""
        logits, state, alignment = self.decoder.step(previous_ids, state, restriction)
        return tf.cast(logits, tf.float32), state, tf.cast(alignment, tf.float32)

    def symbols_to_logits_fn(self, ids, step, state):
        """`step` in the signature the search strategies take: `(ids, step, state) -> (logits, state, α)`.

        Use with `encode`: `BeamSearch(model.symbols_to_logits_fn)(model.encode(source_ids), lengths)`; the
        search keeps the state entries the step leaves out of its new state (all but s: annotations, U_a h,
        C h and the source mask, or c and C c) at one row per sentence for all of its hypotheses.
        """
        del step  # the recurrent state carries the position
        return self.step(ids, state)

    def restricted_symbols_to_logits_fn(self, candidate_ids):
        """`symbols_to_logits_fn` over the words `candidate_ids` only (a vocabulary shortlist).

        The search runs in the reduced id space: its ids are positions in `candidate_ids` (int32 `[V']`,
        sorted, unique, starting with the reserved ids 0-3 so that they keep their positions); the logits
        are `(batch, V')`. What depends on the words alone (W_o's columns and b_W_o's entries, and each
        candidate's W x + b and V_o E y) is computed once here (`Decoder.restrict`), not at every step for
        every hypothesis. Map the search's ids back with `tf.gather(candidate_ids, ids)`.
        """
        restriction = self.decoder.restrict(candidate_ids)  # W_o's columns, the words' projections

        def restricted_symbols_to_logits_fn(ids, step, state):
            del step
            return self.step(ids, state, restriction)  # logits [batch, V']

        return restricted_symbols_to_logits_fn

    def dropout_random_states(self):
        """The random-number states of the dropout layers (variables outside `weights`, which Keras leaves
        out of the model's checkpoint): the trainer checkpoints them, so that a resumed run draws the masks
        an uninterrupted one would have drawn."""
        weights = {id(variable) for variable in self.weights}
        return [variable.value for variable in self.variables if id(variable) not in weights]

    def paper_weights(self):
        """Every weight under its paper name, as a NumPy array in `x @ W` orientation `[in, out]`.

        A bias is "b_" + the name of the matrix it is added to. Embeddings are `[vocab, m]`.
        """
        weights = self.encoder.paper_weights()
        weights.update(self._bridge_weights())
        weights.update(self.decoder.paper_weights())
        return {name: np.asarray(value) for name, value in weights.items()}

    def _bridge_weights(self):
        """The s_0 projection: W_s (RNNsearch) or V' (RNNencdec) and its bias."""
        name = self.initial_state_name
        return {
            name: keras.ops.convert_to_numpy(self.initial_state_projection.kernel),
            "b_" + name: keras.ops.convert_to_numpy(self.initial_state_projection.bias),
        }

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(ModelConfig.from_dict(config["config"]), name=config.get("name"))
