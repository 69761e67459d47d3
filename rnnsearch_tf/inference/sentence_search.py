"""The search of a batch of source ids: the strategy, the shortlist's reduced id space, sentences without tokens."""

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.inference.decoding_model import reading_stored_weights


def truncate(ragged, maximum_length):
    """`[batch, None]` -> its first `maximum_length` entries per row, and bool `[batch]` "was cut"."""
    return ragged[:, :maximum_length], ragged.row_lengths() > maximum_length


def with_eos(rows, eos=constants.EOS_ID, padding=constants.PAD_ID):
    """Ragged `[batch, None]` -> dense `[batch, len + 1]`: each row, then `eos`, then `padding` (ids by
    default; tokens with `EOS_TOKEN` and "")."""
    end = tf.fill([rows.nrows(), 1], eos)  # [batch, 1]
    with_end = tf.concat([rows, tf.RaggedTensor.from_tensor(end)], axis=1)  # [batch, None]
    return with_end.to_tensor(default_value=padding)


def sentence_keys(token_ids):
    """Ragged source ids `[batch, None]` -> int64 `[batch]`, a hash of each sentence's ids: the key of its draws
    (`Sampler`), so that a sentence gets the same samples whatever batch, worker or request it comes in."""
    text = tf.strings.reduce_join(tf.strings.as_string(token_ids), axis=1, separator=" ")  # [batch]
    return tf.strings.to_hash_bucket_fast(text, 2**63 - 1)


class SentenceSearch:
    """Searches translations of source ids with `search_config`'s strategy, in TensorFlow ops.

    What every caller of the search needs around the strategy (`SearchStrategy.search`): EOS appended,
    each sentence's length bound (`SearchConfig.maximum_target_length`), an empty batch and sentences
    without tokens answered without searching (length 0, score 0, no alternatives), RNNencdec's missing
    alignment as zeros, and with a `Shortlist` the search run in the batch's reduced id space (position in
    `Shortlist.candidate_ids`, a forced prefix's words added) and its ids mapped back to vocabulary ids. A
    `DecodingModel`'s stored weights (bf16, int8) are read once per call, before the search's loop
    (`reading_stored_weights`).

    Args:
        model: an `EncoderDecoderModel`, a `DecodingModel` or an `Ensemble` of them.
        search_config: `SearchConfig`.
        num_alternatives: next words offered after a forced prefix.
        shortlist: the `Shortlist` searched over when `search_config.shortlist` (a single model only).
        word_continuations: optional bool `[target vocab]`, the subword pieces that continue the word before
            them: a constraint phrase must end a word (`ConstrainedBeamSearch`).
    """

    def __init__(self, model, search_config, num_alternatives, shortlist=None, word_continuations=None):
        if search_config.shortlist:
            if shortlist is None:
                raise ValueError("SearchConfig.shortlist needs a Shortlist: build one with `rnnsearch shortlist`")
            if not hasattr(model, "restricted_symbols_to_logits_fn"):
                raise ValueError("a vocabulary shortlist decodes a single model, not an ensemble")
            if shortlist.source_vocab_size != model.config.source_vocab_size:
                raise ValueError(
                    f"the shortlist has {shortlist.source_vocab_size} source words but the model "
                    f"{model.config.source_vocab_size}: rebuild it with `rnnsearch shortlist`"
                )
        self.model = model
        self.search_config = search_config
        self.num_alternatives = num_alternatives
        self.shortlist = shortlist if search_config.shortlist else None
        self.strategy = search_config.strategy(model.symbols_to_logits_fn)
        self.word_continuations = word_continuations

    def __call__(self, token_ids, prefix_ids=None, constraint_ids=None):
        """Beam search from ragged source ids `[batch, None]` (no EOS), through `prefix_ids` (int32
        `[batch, prefix_len]`, right-padded with `PAD_ID`) if given, or under `constraint_ids` (int32
        `[batch, phrases, phrase_len]`, target phrases right-padded with `PAD_ID`, each to appear in the
        translation: `ConstrainedBeamSearch`) if given.

        Returns:
            dict: `ids` int32 `[batch, n, steps]`, `lengths` int32 `[batch, n]`, `scores` float32
            `[batch, n]`, `token_log_probs` float32 `[batch, n, steps]` (log p(y_i | y_<i, x) of each
            token as the search found it, EOS included, then 0), `alignment` float32
            `[batch, n, steps, src_len]`; with `prefix_ids`
            `alternative_ids` int32 and `alternative_log_probs` float32 `[batch, num_alternatives]`; with
            `constraint_ids` `constraints_met` bool `[batch, n, phrases]`, whether the hypothesis holds the
            phrase (an empty phrase is met; a sentence without tokens meets no other).
        """
        source_ids = with_eos(token_ids)  # [batch, src_len]
        source_lengths = tf.cast(token_ids.row_lengths(), tf.int32)  # [batch], EOS excluded
        names = ["ids", "lengths", "scores", "token_log_probs", "alignments"]
        options = {}
        if prefix_ids is not None:
            names += ["alternative_ids", "alternative_log_probs"]
            options = dict(prefix_ids=prefix_ids, num_alternatives=self.num_alternatives)
        if constraint_ids is not None:
            names += ["constraints_met"]
            options = dict(constraint_ids=tf.cast(constraint_ids, tf.int32))
        if self.search_config.sampling:
            options["sentence_keys"] = sentence_keys(token_ids)

        def search():
            maximum_lengths = self.search_config.maximum_target_length(source_lengths)  # [batch]
            with reading_stored_weights(self.model):  # a DecodingModel's weights, widened here: outside the loop
                state = self.model.encode(source_ids)
                if self.shortlist is None:
                    result = self._strategy(options).search(state, maximum_lengths, **options)
                    return {name: result[name] for name in names}
                return self._search_shortlist(source_ids, state, maximum_lengths, options, names)

        result = tf.cond(tf.shape(source_ids)[0] > 0, search, lambda: self._nothing(source_ids, names, constraint_ids))
        searched = self._without_empty_sentences(result, source_ids, source_lengths, prefix_ids is not None)
        if constraint_ids is not None:
            no_phrase = tf.reduce_all(tf.equal(options["constraint_ids"], constants.PAD_ID), axis=2)  # [batch, phrases]
            is_empty = tf.equal(source_lengths, 0)[:, None, None]  # [batch, 1, 1]
            searched["constraints_met"] = tf.where(is_empty, no_phrase[:, None, :], result["constraints_met"])
        return searched

    def _strategy(self, options, symbols_to_logits_fn=None, candidate_ids=None):
        """The strategy of `search_config` over `symbols_to_logits_fn` (the model's when None; over a
        shortlist's `candidate_ids`), constrained when `options` has `constraint_ids`."""
        if "constraint_ids" in options:
            continuations = self.word_continuations
            if continuations is not None and candidate_ids is not None:
                continuations = tf.gather(continuations, candidate_ids)  # [V']
            return self.search_config.constrained_strategy(
                symbols_to_logits_fn or self.model.symbols_to_logits_fn, continuations)
        if symbols_to_logits_fn is None:
            return self.strategy
        return self.search_config.strategy(symbols_to_logits_fn)

    def _nothing(self, source_ids, names, constraint_ids=None):
        """`search`'s result for a batch of no sentences."""
        n, src_len, k = self.search_config.hypotheses, tf.shape(source_ids)[1], self.num_alternatives
        empty = dict(
            ids=tf.zeros([0, n, 0], tf.int32),
            lengths=tf.zeros([0, n], tf.int32),
            scores=tf.zeros([0, n]),
            token_log_probs=tf.zeros([0, n, 0]),
            alignments=tf.zeros([0, n, 0, src_len]),
            alternative_ids=tf.zeros([0, k], tf.int32),
            alternative_log_probs=tf.zeros([0, k]),
        )
        if constraint_ids is not None:
            empty["constraints_met"] = tf.zeros([0, n, tf.shape(constraint_ids)[1]], tf.bool)
        return {name: empty[name] for name in names}

    def _without_empty_sentences(self, result, source_ids, source_lengths, has_prefix):
        """The result with sentences without tokens at length 0, score 0 (token log-probabilities 0) and no
        alternatives, and RNNencdec's alignment (it aligns nothing) as zeros of the same shape."""
        ids, alignment = result["ids"], result["alignments"]
        if not self.model.uses_attention:
            alignment = tf.zeros(tf.concat([tf.shape(ids), tf.shape(source_ids)[1:]], axis=0))
        is_empty = tf.equal(source_lengths, 0)  # [batch]
        searched = dict(
            ids=tf.where(is_empty[:, None, None], constants.PAD_ID, ids),
            lengths=tf.where(is_empty[:, None], 0, result["lengths"]),
            scores=tf.where(is_empty[:, None], 0.0, result["scores"]),
            token_log_probs=tf.where(is_empty[:, None, None], 0.0, result["token_log_probs"]),
            alignment=tf.where(is_empty[:, None, None, None], 0.0, alignment),
        )
        if has_prefix:
            searched.update(
                alternative_ids=tf.where(is_empty[:, None], constants.PAD_ID, result["alternative_ids"]),
                alternative_log_probs=tf.where(is_empty[:, None], float("-inf"), result["alternative_log_probs"]),
            )
        return searched

    def _search_shortlist(self, source_ids, state, maximum_lengths, options, names):
        """The search over the batch's shortlist (`Shortlist.candidate_ids`, with the words of the prefix or
        the constraints): in the reduced id space (position in the candidate ids), its ids mapped back to vocabulary ids."""
        forced = "prefix_ids" if "prefix_ids" in options else "constraint_ids" if "constraint_ids" in options else None
        candidate_ids = self.shortlist.candidate_ids(source_ids, options.get(forced))  # [V']
        strategy = self._strategy(options, self.model.restricted_symbols_to_logits_fn(candidate_ids), candidate_ids)
        if forced:  # PAD_ID stays PAD_ID: the reserved ids keep their positions
            forced_ids = options[forced]  # [batch, prefix_len] or [batch, phrases, phrase_len]
            reduced = tf.searchsorted(candidate_ids, tf.reshape(forced_ids, [-1]))  # [batch * ...]
            options = dict(options, **{forced: tf.reshape(reduced, tf.shape(forced_ids))})
        result = strategy.search(state, maximum_lengths, **options)
        reduced_ids = ("ids", "alternative_ids")
        return {name: tf.gather(candidate_ids, result[name]) if name in reduced_ids else result[name] for name in names}
