"""The conditional gated-unit decoder shared by RNNsearch and RNNencdec (Bahdanau et al. 2014, A.2.2)."""

import keras
import tensorflow as tf

from data_pipeline.constants import BOS_ID, PAD_ID
from rnnsearch_tf.layers.alignment_model import AlignmentModel
from rnnsearch_tf.layers.deep_output import DeepOutput
from rnnsearch_tf.layers.gated_recurrent_unit import GatedRecurrentUnit
from rnnsearch_tf.layers.initializers import initialized_dense, initializer


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class Decoder(keras.layers.Layer):
    """Gated-unit decoder conditioned on a context vector c_i at every gate, with a deep output.

        s_i  = (1 - z_i) ∘ s_{i-1} + z_i ∘ s̃_i
        s̃_i = tanh(W E y_{i-1} + b_W + U [r_i ∘ s_{i-1}] + C c_i)
        z_i  = σ(W_z E y_{i-1} + b_W_z + U_z s_{i-1} + C_z c_i)
        r_i  = σ(W_r E y_{i-1} + b_W_r + U_r s_{i-1} + C_r c_i)
        p(y_i | y_<i, x) = softmax(DeepOutput(s, E y_{i-1}, c_i))   with s = s_i or s_{i-1}

    With `alignment_dim` set (RNNsearch), c_i comes from the `AlignmentModel` on s_{i-1}; with
    `alignment_dim=None` (RNNencdec, Cho et al. 2014 A.1.1) c_i = c, the encoder's summary, at every step.
    E y_0 is the zero vector: the ids `BOS_ID` (and `PAD_ID`) embed to zeros.

    `transition` is the recurrence of one position; `step` (search, sampling, scoring one token at a
    time) and `call` (teacher forcing) both run it. `call` embeds and projects all target positions
    before its loop and applies the deep output to all positions after it, so the loop carries only s.

    c_i itself is never computed: C and C_o are linear, so C c_i = Σ_j α_ij (C h_j) and likewise for C_o,
    and `initial_state` projects the annotations (RNNencdec: c) with both once per sentence. The loop
    averages C h with α_i (a `(batch, src_len)` weighted sum instead of a `[2n, 3n]` matmul at every
    position), and the deep output reads C_o c_i = Σ_j α_ij C_o h_j, for all positions at once after the
    loop in teacher forcing.

    The encoder outputs are a dict: `s` (s_0, `(batch, n)`); for RNNsearch also `annotations`
    `(batch, src_len, 2n)` and `source_mask` `(batch, src_len)`; for RNNencdec `context` `(batch, n)`.
    `initial_state` turns them into the decoder state of `step`, adding once per sentence `keys` (U_a h,
    `(batch, src_len, n')`), `projected_annotations` (C h, `(batch, src_len, 3n)`) and
    `readout_annotations` (C_o h, `(batch, src_len, 2l)`), or for RNNencdec `projected_context` (C c,
    `(batch, 3n)`) and `readout_context` (C_o c, `(batch, 2l)`); `call` does the same itself. In `step`,
    s may hold `copies` adjacent rows per sentence (a search's hypotheses, `(batch * copies, n)`) while
    everything else keeps one row per sentence: the hypotheses of a sentence then read its annotations
    once, not once each.

    Args:
        vocab_size: K_y.
        embedding_dim: m.
        units: n.
        maxout_dim: l.
        alignment_dim: n', or None for a fixed context (RNNencdec).
        readout_state: "current" (s_i) or "previous" (s_{i-1}) feeds the deep output.
        initializer: "paper", "uniform" or "xavier" (`initializers.INITIALIZERS`).
        embedding_dropout: dropout rate on E y_{i-1} during training (0: none, the paper).
        hidden_dropout: dropout rate on the annotations (or c) and on the states read by the deep output.
        readout_dropout: dropout rate on the maxout t_i before W_o (`DeepOutput`).
        Dropout acts in teacher forcing with `training=True` only, outside the recurrence: `step` has none.

    Call arguments:
        previous_ids: int `(batch_size, tgt_len)`: y_{i-1} for every position, starting with `BOS_ID`.
        encoder_outputs: the dict described above.
        training: whether dropout is applied.

    Returns:
        `(logits, alignment_weights)`: `(batch_size, tgt_len, K_y)` and `(batch_size, tgt_len, src_len)`
        (`(batch_size, tgt_len, 0)` without attention).
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        maxout_dim,
        alignment_dim=None,
        readout_state="current",
        initializer="paper",
        embedding_dropout=0.0,
        hidden_dropout=0.0,
        readout_dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.units = units
        self.maxout_dim = maxout_dim
        self.alignment_dim = alignment_dim
        self.readout_state = readout_state
        self.initializer = initializer
        self.embedding_dropout = embedding_dropout
        self.hidden_dropout = hidden_dropout
        self.readout_dropout = readout_dropout

    @property
    def uses_attention(self):
        return self.alignment_dim is not None

    def build(self, previous_ids_shape, encoder_outputs_shape):
        batch = encoder_outputs_shape["s"][0]
        context_dim = encoder_outputs_shape["annotations" if self.uses_attention else "context"][-1]
        self.target_embedding = keras.layers.Embedding(
            self.vocab_size,
            self.embedding_dim,
            embeddings_initializer=initializer(self.initializer, "embedding"),
            dtype=self.dtype_policy,
            name="E",
        )
        self.target_embedding.build((batch,))
        self.target_embedding_dropout = keras.layers.Dropout(
            self.embedding_dropout, dtype=self.dtype_policy, name="target_embedding_dropout"
        )
        self.hidden_state_dropout = keras.layers.Dropout(
            self.hidden_dropout, dtype=self.dtype_policy, name="hidden_dropout"
        )
        self.gated_unit = GatedRecurrentUnit(
            self.units, self.initializer, dtype=self.dtype_policy, name="gated_unit"
        )
        self.gated_unit.build((batch, self.embedding_dim))
        self.context_projection = initialized_dense(
            3 * self.units, self.initializer, "input", blocks=3, use_bias=False, dtype=self.dtype_policy, name="C"
        )  # columns [C_z | C_r | C], like the gated unit's kernel
        self.context_projection.build((batch, context_dim))
        if self.uses_attention:
            self.alignment_model = AlignmentModel(
                self.alignment_dim, self.initializer, dtype=self.dtype_policy, name="alignment_model"
            )
            self.alignment_model.build((batch, self.units), encoder_outputs_shape["annotations"])
        self.deep_output = DeepOutput(
            self.maxout_dim,
            self.vocab_size,
            self.initializer,
            self.readout_dropout,
            dtype=self.dtype_policy,
            name="deep_output",
        )
        self.deep_output.build((batch, self.units), (batch, self.embedding_dim), (batch, context_dim))

    def initial_state(self, encoder_outputs):
        """The state dict before the first target word; computes U_a h, C h and C_o h (or C c and C_o c)
        once per sentence."""
        if not self.uses_attention:
            context = encoder_outputs["context"]  # [batch, n]
            return dict(
                encoder_outputs,
                projected_context=self.context_projection(context),  # C c: [batch, 3n]
                readout_context=self.deep_output.project_context(context),  # C_o c: [batch, 2l]
            )
        annotations = encoder_outputs["annotations"]  # [batch, src_len, 2n]
        return dict(
            encoder_outputs,
            keys=self.alignment_model.precompute_keys(annotations),  # U_a h: [batch, src_len, n']
            projected_annotations=self.context_projection(annotations),  # C h: [batch, src_len, 3n]
            readout_annotations=self.deep_output.project_context(annotations),  # C_o h: [batch, src_len, 2l]
        )

    def embed_previous(self, previous_ids):
        """E y_{i-1}, with the zero vector for `BOS_ID` and `PAD_ID`: `(...)` -> `(..., m)`."""
        is_word = tf.logical_and(tf.not_equal(previous_ids, BOS_ID), tf.not_equal(previous_ids, PAD_ID))
        embedded = self.target_embedding(previous_ids)  # [..., m]
        return embedded * tf.cast(is_word, embedded.dtype)[..., tf.newaxis]

    def transition(self, projected_embedding, state):
        """The recurrence at one position.

        Args:
            projected_embedding: `gated_unit.project_inputs(E y_{i-1})`, `(rows, 3n)`.
            state: the state dict holding s_{i-1} `(rows, n)` (and what `initial_state` added, one row per
                sentence); rows = batch, or batch * copies in `step`.

        Returns:
            `(s_i, α_i)`: `(rows, n)` and `(rows, src_len)` (`(rows, 0)` without attention).
        """
        previous_state = state["s"]
        if self.uses_attention:
            projected_context, alignment_weights = self.attend(previous_state, state)
            gate_inputs = projected_embedding + projected_context
        else:
            gate_inputs = _add_per_sentence(projected_embedding, state["projected_context"])  # + C c
            alignment_weights = tf.zeros([tf.shape(previous_state)[0], 0], dtype=previous_state.dtype)
        new_state = self.gated_unit.transition(gate_inputs, previous_state)
        return new_state, alignment_weights

    def attend(self, previous_state, state):
        """C c_i = Σ_j α_ij C h_j `(rows, 3n)` and α_i `(rows, src_len)` for s_{i-1} `(rows, n)`, rows =
        batch * copies: a sentence's copies (a search's hypotheses, adjacent rows) are the alignment
        model's queries of that sentence, which reads the sentence's annotations once for all of them."""
        rows, batch = tf.shape(previous_state)[0], tf.shape(state["keys"])[0]
        queries = tf.reshape(previous_state, [batch, -1, self.units])  # [batch, copies, n]
        projected_context, alignment_weights = self.alignment_model(
            queries, state["annotations"], state["source_mask"], keys=state["keys"],
            values=state["projected_annotations"],
        )  # [batch, copies, 3n], [batch, copies, src_len]
        return (
            tf.reshape(projected_context, [rows, 3 * self.units]),  # [rows, 3n]
            tf.reshape(alignment_weights, [rows, tf.shape(state["keys"])[1]]),  # [rows, src_len]
        )

    def readout_contexts(self, alignment_weights, state):
        """C_o c_i = Σ_j α_ij C_o h_j for α `(batch, tgt_len, src_len)` -> `(batch, tgt_len, 2l)`;
        RNNencdec: C_o c at every position."""
        if self.uses_attention:
            return tf.matmul(alignment_weights, state["readout_annotations"])  # [batch, tgt_len, 2l]
        readout_context = state["readout_context"][:, tf.newaxis, :]  # [batch, 1, 2l]
        shape = tf.concat([tf.shape(alignment_weights)[:2], tf.shape(readout_context)[2:]], axis=0)
        return tf.broadcast_to(readout_context, shape)  # [batch, tgt_len, 2l] (tf.repeat's gradient defeats XLA)

    def word_projections(self, ids):
        """What a step computes from y_{i-1} alone, `(...)` -> `(W x + b (..., 3n), V_o E y (..., 2l))`: the
        gated unit's input projection and the deep output's, with E y = 0 for `BOS_ID` and `PAD_ID`."""
        embedded = self.embed_previous(ids)  # [..., m]
        return self.gated_unit.project_inputs(embedded), self.deep_output.embedding_projection(embedded)

    def restrict(self, candidate_ids):
        """`step`'s `restriction` to the words `candidate_ids` (int32 `[V']`, a vocabulary shortlist): W_o's
        columns and b_W_o's entries of those words (`DeepOutput.output_columns`) and their
        `word_projections` (`[V', 3n]`, `[V', 2l]`), computed once for a search instead of at every step
        for every hypothesis."""
        return dict(
            output_columns=self.deep_output.output_columns(candidate_ids),
            word_projections=self.word_projections(candidate_ids),
        )

    def step(self, previous_ids, state, restriction=None):
        """One target position: y_{i-1} `(rows,)` and the state -> `(logits, new_state, α_i)`.

        logits `(rows, K_y)`, new_state `{"s": s_i}` (what changes; the rest of the state is read only, and
        a search keeps it one row per sentence), α_i `(rows, src_len)`, where rows = batch * copies (s
        `(rows, n)`; the rest of the state one row per sentence). This is the `symbols_to_logits_fn` of
        the search strategies; stepping by hand: `state = dict(state, **new_state)`. With a `restriction`
        (`restrict(candidate_ids)`) the words are positions in `candidate_ids`: `previous_ids` index it,
        and the logits are `(rows, V')`, those words' only.
        """
        if restriction is None:
            projected_inputs, projected_embedding = self.word_projections(previous_ids)  # [rows, 3n], [rows, 2l]
            output_columns = None
        else:
            projected_inputs, projected_embedding = (
                tf.gather(table, previous_ids) for table in restriction["word_projections"]
            )  # [rows, 3n], [rows, 2l]
            output_columns = restriction["output_columns"]
        new_decoder_state, alignment_weights = self.transition(projected_inputs, state)
        rows = tf.shape(previous_ids)[0]  # batch * copies
        batch = tf.shape(state["readout_annotations" if self.uses_attention else "readout_context"])[0]
        per_sentence = tf.reshape(
            alignment_weights, [batch, rows // batch, tf.shape(alignment_weights)[1]]
        )  # [batch, copies, src_len] (src_len 0 for RNNencdec)
        readout_context = tf.reshape(
            self.readout_contexts(per_sentence, state), [rows, 2 * self.maxout_dim]
        )  # C_o c_i: [rows, 2l]
        readout_state = new_decoder_state if self.readout_state == "current" else state["s"]
        logits = self.deep_output(
            readout_state, projected_embedding=projected_embedding, projected_context=readout_context,
            output_columns=output_columns,
        )  # [rows, K_y]
        return logits, {"s": new_decoder_state}, alignment_weights

    def call(self, previous_ids, encoder_outputs, training=None):
        conditioning = "annotations" if self.uses_attention else "context"
        state = self.initial_state(
            dict(encoder_outputs, **{
                conditioning: self.hidden_state_dropout(encoder_outputs[conditioning], training=training)
            })
        )
        previous_embeddings = self.target_embedding_dropout(
            self.embed_previous(previous_ids), training=training
        )  # [batch, tgt_len, m]
        projected = tf.transpose(
            self.gated_unit.project_inputs(previous_embeddings), [1, 0, 2]
        )  # [tgt_len, batch, 3n]
        initial_state = state["s"]
        alignment_width = tf.shape(state["annotations"])[1] if self.uses_attention else 0

        def scan_step(carried, projected_embedding):
            previous_state, _ = carried
            return self.transition(projected_embedding, dict(state, s=previous_state))

        states, alignment_weights = tf.scan(
            scan_step,
            projected,
            initializer=(
                initial_state,
                tf.zeros([tf.shape(initial_state)[0], alignment_width], dtype=initial_state.dtype),
            ),
        )  # [tgt_len, batch, n], [tgt_len, batch, src_len]
        states = tf.transpose(states, [1, 0, 2])  # [batch, tgt_len, n]
        alignment_weights = tf.transpose(alignment_weights, [1, 0, 2])  # [batch, tgt_len, src_len]
        if self.readout_state == "previous":
            states = tf.concat([initial_state[:, tf.newaxis, :], states[:, :-1, :]], axis=1)  # s_{i-1}
        logits = self.deep_output(
            self.hidden_state_dropout(states, training=training),
            previous_embeddings,
            projected_context=self.readout_contexts(alignment_weights, state),
            training=training,
        )  # [batch, tgt_len, K_y]
        return logits, alignment_weights

    def paper_weights(self):
        """E `[K_y, m]`, the gated unit (W, W_z, W_r, U, U_z, U_r, biases), C, C_z, C_r `[context_dim, n]`,
        the alignment model (RNNsearch) and the deep output, all `[in, out]`."""
        n = self.units
        weights = {"E": keras.ops.convert_to_numpy(self.target_embedding.embeddings)}
        weights.update(self.gated_unit.paper_weights())
        context_kernel = keras.ops.convert_to_numpy(self.context_projection.kernel)
        for index, name in enumerate(("C_z", "C_r", "C")):
            weights[name] = context_kernel[:, index * n : (index + 1) * n]
        if self.uses_attention:
            weights.update(self.alignment_model.paper_weights())
        weights.update(self.deep_output.paper_weights())
        return weights

    def get_config(self):
        config = super().get_config()
        arguments = ("vocab_size", "embedding_dim", "units", "maxout_dim", "alignment_dim", "readout_state",
                     "initializer", "embedding_dropout", "hidden_dropout", "readout_dropout")
        config.update({name: getattr(self, name) for name in arguments})
        return config


def _add_per_sentence(rows, per_sentence):
    """`rows` `(batch * copies, d)` plus `per_sentence` `(batch, d)`, each sentence's row added to its
    `copies` adjacent rows (a broadcast: tf.repeat's gradient defeats XLA inside a loop)."""
    grouped = tf.reshape(rows, [tf.shape(per_sentence)[0], -1, rows.shape[-1]])  # [batch, copies, d]
    return tf.reshape(grouped + per_sentence[:, tf.newaxis, :], tf.shape(rows))  # [batch * copies, d]
