"""Several trained models decoding as one: the average of their log-probabilities at every step."""

import tensorflow as tf

from data_pipeline.constants import PAD_ID


class Ensemble(tf.Module):
    """Models with the same vocabularies, searched with one beam.

    At every step each model scores the next word from its own state, and the ensemble's distribution
    is the normalised geometric mean of theirs, `softmax(mean_m log p_m(y_i | y_<i, x))` (OpenNMT-py,
    Nematus and Marian average log-probabilities the same way). `token_log_probs` scores a given
    translation with the same distribution, so search scores and `score` agree. The attention of the
    ensemble (`α`, for `<unk>` replacement and alignments) is the mean of its attention models' α.

    The ensemble has the interface the search strategies and `Translator` use: `config` (the
    vocabulary sizes, shared by every model), `uses_attention`, `encode`, `symbols_to_logits_fn`
    and `token_log_probs`. Each model's state entries are kept under
    "<index>/<name>".

    Args:
        models: list of `EncoderDecoderModel`s (`RNNSearch` or `RNNEncDec`, mixed or not).

    Example:
    >>> ensemble = Ensemble([model_a, model_b])
    >>> BeamSearch(ensemble.symbols_to_logits_fn, beam_size=12).search(ensemble.encode(source_ids), maximum_lengths)
    """

    def __init__(self, models, name=None):
        super().__init__(name=name)
        if not models:
            raise ValueError("an ensemble needs at least one model")
        sizes = {(model.config.source_vocab_size, model.config.target_vocab_size) for model in models}
        if len(sizes) > 1:
            raise ValueError(
                f"the models of an ensemble must share their vocabularies; their sizes are {sorted(sizes)}"
            )
        self.models = list(models)
        self.config = models[0].config

    @property
    def uses_attention(self):
        return any(model.uses_attention for model in self.models)

    def encode(self, source_ids):
        """The initial state of every model (`encode`), keys prefixed by the model's index."""
        state = {}
        for index, model in enumerate(self.models):
            state.update(_prefixed(index, model.encode(source_ids)))
        return state

    def symbols_to_logits_fn(self, ids, step, state):
        """`(ids, step, state) -> (mean log-probabilities (batch, K_y), new state, mean α)`."""
        log_probs, new_state, alignments = [], {}, []
        for index, model in enumerate(self.models):
            logits, model_state, alignment_weights = model.symbols_to_logits_fn(ids, step, _member(index, state))
            log_probs.append(tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1))  # [batch, K_y]
            new_state.update(_prefixed(index, model_state))
            if model.uses_attention:
                alignments.append(tf.cast(alignment_weights, tf.float32))
        if alignments:
            alignment_weights = tf.add_n(alignments) / len(alignments)  # [batch, src_len]
        else:
            alignment_weights = tf.zeros([tf.shape(ids)[0], 0])
        return tf.add_n(log_probs) / len(log_probs), new_state, alignment_weights

    def token_log_probs(self, source_ids, target_ids):
        """log p(y_i | y_<i, x) under the ensemble's distribution: float32 `(batch, tgt_len)`, 0 at padding."""
        target_ids = tf.cast(target_ids, tf.int32)
        mean_log_probs = tf.add_n(
            [
                tf.nn.log_softmax(tf.cast(model.teacher_forcing(source_ids, target_ids)[0], tf.float32), axis=-1)
                for model in self.models
            ]
        ) / len(self.models)  # [batch, tgt_len, K_y]
        log_probs = tf.nn.log_softmax(mean_log_probs, axis=-1)
        token_log_probs = tf.gather(log_probs, target_ids, axis=-1, batch_dims=2)  # [batch, tgt_len]
        return token_log_probs * tf.cast(tf.not_equal(target_ids, PAD_ID), tf.float32)


def _prefixed(index, state):
    return {f"{index}/{name}": value for name, value in state.items()}


def _member(index, state):
    """The entries of model `index` in an ensemble state, under their own names."""
    prefix = f"{index}/"
    return {name[len(prefix) :]: value for name, value in state.items() if name.startswith(prefix)}
