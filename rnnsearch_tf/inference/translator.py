"""Text in, text out: the one translation path of the command line, evaluation and the SavedModel."""

import dataclasses
import hashlib

import tensorflow as tf

from data_pipeline.pair_reader import sha256
from data_pipeline import constants
from rnnsearch_tf.inference.decoding_model import DecodingModel, precision_and_quantization, reading_stored_weights
from rnnsearch_tf.inference.model_loader import load_model_dir
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.inference.sentence_search import SentenceSearch, truncate, with_eos
from rnnsearch_tf.inference.word_alignment import word_alignment
from rnnsearch_tf.models.ensemble import Ensemble


def word_continuations(codec):
    """bool `[vocab]`: the tokens of a subword codec that continue the word of the token before them
    (`TextCodec.continues_word`); None for a word-level codec."""
    if not codec.is_subword:
        return None
    return codec.continues_word(codec.tokens(tf.range(codec.vocabulary.size)))  # [vocab]


class Translator(tf.Module):
    """Raw sentences -> beam search -> detokenized translations, entirely in TensorFlow ops.

    `translate`: the source `TextCodec` (Moses tokenization and vocabulary lookup, unknown words ->
    `<unk>`; or SentencePiece pieces), truncation to `maximum_source_length` tokens (flagged in
    `truncated`), EOS, `model.encode`, beam search (Bahdanau et al. 2014, Section 5.2.2) with at most
    `floor(maximum_length_a * source_length) + maximum_length_b` target tokens (EOS included,
    `source_length` without EOS; `SentenceSearch`), target tokens, the target codec's detokenization. Invalid UTF-8
    bytes become U+FFFD before tokenization; a sentence with no
    tokens (empty, whitespace or control characters only) gets the empty translation, score 0 and no
    tokens. `translate_ids` starts after the lookup; `score` gives log p(y | x) of given pairs;
    `translate_prefix` translates with the start of each translation given (interactive translation).

    `translate`, `translate_prefix`, `translate_ids` and `score` are `tf.function`s with named
    `TensorSpec`s: the same object answers the Python path and, saved under the names of
    `serving_signatures` (the one list of the SavedModel's signatures), TensorFlow Serving: save it with
    `serving.export.export(translator, export_dir)`, which passes the `tf.saved_model.SaveOptions` it needs
    (a plain `tf.saved_model.save` of it, or Keras's `model.export`, fails on the gated unit's custom gradient:
    `experimental_custom_gradients=False` saves the forward pass only). They are
    traced without AutoGraph: all control flow below them is written as `tf.cond` and `tf.while_loop`,
    and converting the search code's Python source would cost most of a command's start-up. Every search
    option is fixed at construction. Every output is a dense tensor; strings are padded with "" and
    ids with `PAD_ID`.

    Args:
        model: an `EncoderDecoderModel` (`RNNSearch` or `RNNEncDec`) with trained weights, a `DecodingModel` of
            one (its weights stored in bf16 or int8, `model_loader.decoding_model`), or an `Ensemble` of them.
        source_codec: `TextCodec` of the source language; its vocabulary's size must be the model's K_x.
        target_codec: `TextCodec` of the target language; its vocabulary's size must be the model's K_y.
        search_config: `SearchConfig`, the search options (default: the paper's beam search).
        maximum_batch_size: larger batches are refused with `InvalidArgumentError`.
        checkpoint_path: where the weights come from (recorded by `serving/export.py`); `from_model_dir`
            sets it.
        num_alternatives: next words `translate_prefix` offers after each prefix.
        shortlist: the `Shortlist` decoded over with `search_config.shortlist` True or None (`from_model_dir`
            gives the model directory's, `load_model_dir`; `SentenceSearch`). The translator's
            `search_config` says which it does: its `shortlist` None becomes whether one is given.

    Example:
    >>> translator = Translator.from_model_dir("models/rnnsearch50", beam_size=12)
    >>> translator.translate(tf.constant(["The agreement was signed in August 1992."]))["translation"]
    <tf.Tensor: shape=(1,), dtype=string, numpy=array([b"L'accord a été signé en août 1992."])>
    """

    def __init__(
        self,
        model,
        source_codec,
        target_codec,
        search_config=None,
        maximum_batch_size=1000,
        checkpoint_path="",
        num_alternatives=10,
        shortlist=None,
        name=None,
    ):
        super().__init__(name=name)
        for side, vocabulary, size in (
            ("source", source_codec.vocabulary, model.config.source_vocab_size),
            ("target", target_codec.vocabulary, model.config.target_vocab_size),
        ):
            if vocabulary.size != size:
                raise ValueError(
                    f"the {side} vocabulary {vocabulary.vocabulary_file} has {vocabulary.size} entries but the "
                    f"model expects {size}: use the vocabularies of the model directory"
                )
        if maximum_batch_size < 1:
            raise ValueError(f"maximum_batch_size must be at least 1, got {maximum_batch_size}")
        if num_alternatives < 1:
            raise ValueError(f"num_alternatives must be at least 1, got {num_alternatives}")
        self.model = model
        self.source_codec = source_codec
        self.target_codec = target_codec
        self.source_vocabulary = source_codec.vocabulary
        self.target_vocabulary = target_codec.vocabulary
        self.source_language = source_codec.language
        self.target_language = target_codec.language
        search_config = search_config or SearchConfig()
        if search_config.shortlist is None:
            search_config = dataclasses.replace(search_config, shortlist=shortlist is not None)
        self.search_config = search_config
        self.maximum_batch_size = maximum_batch_size
        self.checkpoint_path = checkpoint_path
        self.num_alternatives = num_alternatives
        self.maximum_source_length = search_config.maximum_source_length
        self.search = SentenceSearch(model, search_config, num_alternatives, shortlist,
                                     word_continuations(target_codec))

    @classmethod
    def from_model_dir(cls, model_dir, checkpoint="best", maximum_batch_size=1000, precision=None, quantize="none",
                       num_alternatives=10, search_config=None, **search_options):
        """The translator of a model directory, or of an ensemble of several joined by "+" (`load_model_dir`).

        Args:
            model_dir, checkpoint, precision, quantize: as `load_model_dir` (its `shortlist` is `search_config`'s).
            maximum_batch_size, num_alternatives: as `Translator`.
            search_config: the `SearchConfig` (a command passes the one its flags made, whole).
            **search_options: instead of `search_config`, its fields.

        Returns:
            the `Translator`; its `checkpoint_path` joins an ensemble's checkpoint paths with "+".
        """
        if search_config is not None and search_options:
            raise ValueError(f"give search_config or its fields, not both: {sorted(search_options)}")
        search_config = search_config or SearchConfig(**search_options)
        loaded = load_model_dir(model_dir, checkpoint, precision, search_config.shortlist, quantize)
        return cls(loaded.model, loaded.source_codec, loaded.target_codec, search_config, maximum_batch_size,
                   loaded.checkpoint_path, num_alternatives, loaded.shortlist)

    @property
    def shortlist(self):
        """The `Shortlist` searched over, or None (`SentenceSearch.shortlist`)."""
        return self.search.shortlist

    @property
    def maximum_target_length(self):
        """Most target tokens, EOS included, of any translation (and of a scored target)."""
        return self.search_config.maximum_target_length(self.maximum_source_length)

    def settings(self):
        """The options fixed at construction, by name (`SearchConfig.from_settings` reads them back)."""
        return dict(
            source_language=self.source_language,
            target_language=self.target_language,
            source_codec=self.source_codec.kind,
            target_codec=self.target_codec.kind,
            source_lowercase=self.source_codec.lowercase,
            target_lowercase=self.target_codec.lowercase,
            maximum_batch_size=self.maximum_batch_size,
            num_alternatives=self.num_alternatives,
            **self.search_config.to_dict(),
        )

    def fingerprint(self):
        """Everything the graphs of its functions depend on besides the code and the weights' values: the
        settings, each model's class, configuration, dtype policy ("auto" precision resolved on this
        machine) and quantization, the text codecs' files' contents, and the shortlist's contents
        (`utils.function_cache.FunctionCache` keys its traced graphs on it)."""
        shortlist = None
        if self.shortlist is not None:
            arrays = self.shortlist.candidates.tobytes() + self.shortlist.frequent.tobytes()
            shortlist = hashlib.sha256(arrays).hexdigest()
        return dict(
            settings=self.settings(),
            models=[[type(model.model if isinstance(model, DecodingModel) else model).__name__,
                     model.config.to_dict(), *precision_and_quantization(model)] for model in self._members()],
            vocabularies=[sha256(path) for codec in (self.source_codec, self.target_codec) for path in codec.files],
            shortlist=shortlist,
        )

    def recorded_settings(self, version):
        """What an export of version `version` records: `settings()`, the checkpoint, the dtype policy the
        weights are read and computed in (`precision`: "float32", or "bfloat16" for `--precision=mixed_bfloat16`),
        how its matrices are stored (`quantize`: "none", or "int8" for `--quantize=int8`; both
        `decoding_model.precision_and_quantization`, an ensemble's joined with "+"), whether the model attends
        (`uses_attention`: False for RNNencdec, whose zero alignments name no source word to copy for `<unk>`)
        and the version."""
        forms = [precision_and_quantization(model) for model in self._members()]
        return dict(self.settings(), checkpoint=self.checkpoint_path, precision="+".join(form[0] for form in forms),
                    quantize="+".join(form[1] for form in forms), uses_attention=self.model.uses_attention,
                    version=version)

    def _members(self):
        """The models decoding: the ensemble's, or the one model."""
        return self.model.models if isinstance(self.model, Ensemble) else [self.model]

    def serving_signatures(self, version):
        """The signatures of this translator's SavedModel by name, as `serving/export.py` saves them.

        `serving_default` and `translate` (both the method `translate`), `translate_prefix`,
        `translate_constrained`, `translate_ids` and `score` (the methods of those names), and `settings`,
        which takes no input and returns `recorded_settings(version)` as tensors (`export_settings`). A new signature is added here.
        With sampling there is no `translate_constrained`: sampling draws, it does not search, so it takes no
        constraints (`SearchConfig.constrained_strategy`, as `rnnsearch translate --sampling` refuses them); a
        constrained beam search instead would answer with another decoder than the `settings` record (and
        another number of hypotheses), and the page hides its glossary for an export without the signature.

        Args:
            version: the version number of the export.

        Returns:
            dict of signature name -> `tf.function` with an input signature, or concrete function
            (`settings`). The functions are left untraced: `tf.saved_model.save` traces them in its save
            context, and would trace again one traced before it.
        """
        settings = self.recorded_settings(version)
        description = ", ".join(f"{name}={value}" for name, value in settings.items())
        signatures = {
            "serving_default": self.translate,
            "translate": self.translate,
            "translate_prefix": self.translate_prefix,
            "translate_constrained": self.translate_constrained,
            "translate_ids": self.translate_ids,
            "score": self.score,
            "settings": self.export_settings.get_concrete_function(description, version),
        }
        if self.search_config.sampling:
            del signatures["translate_constrained"]
        return signatures

    @tf.function(autograph=False)
    def export_settings(self, description, version):
        """`recorded_settings(version)` as constant tensors (the `settings` signature).

        `description` ("name=value, ...") is not used: `saved_model_cli show --all` prints the Python
        arguments of a SavedModel's functions, so the settings are listed there under "Concrete Functions".
        """
        del description
        return {name: tf.constant(value) for name, value in self.recorded_settings(version).items()}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")], autograph=False)
    def translate(self, text):
        """Translates raw sentences.

        Args:
            text: tf.string `[batch]`, untokenized sentences in the source language.

        Returns:
            dict of dense tensors (`tgt_len` and `src_len` count EOS; `n` is `num_hypotheses`):
            - `translation`: string `[batch]`, the best translation, detokenized.
            - `score`: float32 `[batch]`, its beam-search score (log p(y|x) / length penalty).
            - `tokens`: string `[batch, tgt_len]`, its target tokens, then `</s>`, then "".
            - `token_probabilities`: float32 `[batch, tgt_len]`, each token's p(y_i | y_<i, x) under the model
              (an ensemble's: the exp of its mean log-probability), `</s>` included, then 0: recorded by the
              search (`SearchStrategy`), the word-level confidence.
            - `mean_log_prob`: float32 `[batch]`, the mean of its tokens' log-probabilities (`</s>`
              included; 0 for an empty translation).
            - `alignment`: float32 `[batch, tgt_len, src_len]`, α_ij of token i on source token j.
            - `source_tokens`: string `[batch, src_len]`, the source tokens searched, then `</s>`, then "".
            - `truncated`: bool `[batch]`, whether the source was cut to `maximum_source_length`.
            - with a subword codec (`TextCodec.is_subword`) also the words a person sees: `words` string
              `[batch, tgt_words]` and `source_words` string `[batch, src_words]` (each then `</s>`, then
              ""), `word_alignment` float32 `[batch, tgt_words, src_words]`: a word's source pieces summed, its
              target pieces averaged (`word_alignment`); `word_probabilities` float32
              `[batch, tgt_words]`: the product of a word's pieces' probabilities (the probability of the
              whole word, by the chain rule), then 0.
            - with `num_hypotheses > 1` also `nbest_translations` string `[batch, n]`,
              `nbest_scores` float32 `[batch, n]`, `nbest_tokens` string `[batch, n, tgt_len]` and
              `nbest_alignment` float32 `[batch, n, tgt_len, src_len]`, `nbest_token_probabilities` float32
              `[batch, n, tgt_len]` and `nbest_mean_log_probs` float32 `[batch, n]`, best first (index 0 is
              the best's `translation`, `score`, `tokens`, `alignment`, ...).
        """
        self._check_batch_size(text)
        return self._translate_text(text)[0]

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="text"),
            tf.TensorSpec([None], tf.string, name="prefix"),
        ],
        autograph=False,
    )
    def translate_prefix(self, text, prefix):
        """Translates raw sentences whose translations must start with given words (interactive translation).

        Each prefix is tokenized by the target codec (`TextCodec.tokenize_prefix`: typed words become
        their pieces with a subword codec), looked up in the target vocabulary and cut to
        `maximum_target_length - 1` tokens; the search is forced through its tokens (their
        log-probabilities count in the score as those of any word), then free (`TargetPrefix`).
        A prefix word outside a word-level vocabulary becomes `<unk>`: it is forced as `<unk>` (also with
        `forbid_unk`) and appears as `<unk>` in `tokens` and in the translation; the text `<unk>` in a
        prefix is that word too, so a translation's tokens can be sent back as a prefix. An empty prefix
        gives `translate`'s result. A sentence's length bound is raised to its prefix and `</s>` where it is
        smaller.

        Args:
            text: tf.string `[batch]`, untokenized sentences in the source language.
            prefix: tf.string `[batch]`, the start of each translation, untokenized target-language text
                ("" for none).

        Returns:
            `translate`'s dict, and (`k` is `num_alternatives`):
            - `alternatives`: string `[batch, k]`, the k most probable next tokens after the prefix (at
              the first free position), best first, as the text each adds to the prefix
              (`TextCodec.token_text`: a word-level token as it is, a piece that starts a word with a
              space); `</s>` among them means "end here". "" where there is none (a sentence without
              source tokens gets none).
            - `alternative_scores`: float32 `[batch, k]`, their log p(word | prefix, x); `-inf` for "".
            - `prefix_truncated`: bool `[batch]`, whether the prefix was cut.
        """
        self._check_batch_size(text)
        checks = [
            tf.debugging.assert_equal(
                tf.shape(text)[0], tf.shape(prefix)[0], message="text and prefix must hold as many sentences"
            )
        ]
        with tf.control_dependencies(checks):
            prefix_tokens = self.target_codec.tokenize_prefix(prefix)  # [batch, None]
        prefix_tokens, prefix_truncated = truncate(prefix_tokens, self.maximum_target_length - 1)
        prefix_ids = self.target_codec.lookup(prefix_tokens).to_tensor(
            default_value=constants.PAD_ID
        )  # [batch, prefix_len]
        outputs, result = self._translate_text(text, prefix_ids)
        alternative_ids = result["alternative_ids"]  # [batch, k]
        alternatives = self.target_codec.token_text(self.target_codec.tokens(alternative_ids))  # [batch, k]
        outputs.update(
            alternatives=tf.where(tf.equal(alternative_ids, constants.PAD_ID), "", alternatives),
            alternative_scores=result["alternative_log_probs"],
            prefix_truncated=prefix_truncated,
        )
        return outputs

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="text"),
            tf.TensorSpec([None, None], tf.string, name="constraints"),
        ],
        autograph=False,
    )
    def translate_constrained(self, text, constraints):
        """Translates raw sentences whose translations must each hold given target phrases, anywhere
        (terminology: lexically constrained decoding by dynamic beam allocation, `ConstrainedBeamSearch`).

        Each phrase is tokenized by the target codec as a prefix is (`TextCodec.tokenize_prefix`), looked up
        and cut to `maximum_target_length - 1` tokens; its tokens are then forced somewhere in every
        hypothesis, contiguously and in order, a forbidden one (`<unk>`) too. A phrase that is empty, or made
        only of words outside a word-level vocabulary, is skipped (`constraints_skipped`); the text `<unk>` is
        that word, forced as in a prefix (a glossary's term of unknown words is searched so, and written over
        it: `Glossary.searched_as`). A sentence
        whose phrases cannot fit its length bound still gets its best translation, with the phrases it
        lacks reported (`constraints_met`). Rows of "" give `translate`'s result, bit for bit. With sampling
        (which draws, it does not search) every phrase must be skipped, else `InvalidArgumentError`.

        Args:
            text: tf.string `[batch]`, untokenized sentences in the source language.
            constraints: tf.string `[batch, c]`, untokenized target-language phrases ("" for none).

        Returns:
            `translate`'s dict, and `constraints_met` bool `[batch, c]` (the best translation holds the
            phrase's tokens; false for a skipped one) and `constraints_skipped` bool `[batch, c]`.
        """
        self._check_batch_size(text)
        checks = [tf.debugging.assert_equal(tf.shape(text)[0], tf.shape(constraints)[0],
                                            message="text and constraints must hold as many sentences")]
        with tf.control_dependencies(checks):
            phrases = self.target_codec.tokenize_prefix(tf.reshape(constraints, [-1]))  # [batch * c, None]
        phrases = truncate(phrases, self.maximum_target_length - 1)[0]  # [batch * c, None]
        phrase_ids = self.target_codec.lookup(phrases)  # [batch * c, None]
        written_unk = tf.equal(phrases, constants.UNK_TOKEN)  # [batch * c, None]
        known = tf.reduce_any(tf.not_equal(phrase_ids, constants.UNK_ID) | written_unk, axis=1)  # [batch * c]
        skipped = tf.reshape(tf.logical_not(known), tf.shape(constraints))  # [batch, c]
        dense = tf.where(known[:, None], phrase_ids.to_tensor(default_value=constants.PAD_ID), constants.PAD_ID)
        constraint_ids = tf.reshape(dense, tf.concat([tf.shape(constraints), [-1]], axis=0))  # [batch, c, len]
        if self.search_config.sampling:  # traced when the translator is saved, though no signature of it
            check = tf.debugging.assert_equal(tf.reduce_any(known), False,
                                              message="sampling draws, it does not search: it takes no constraints")
            with tf.control_dependencies([check]):
                outputs = self._translate_text(tf.identity(text))[0]
            outputs.update(constraints_met=tf.zeros_like(skipped), constraints_skipped=skipped)
            return outputs
        outputs, result = self._translate_text(text, constraint_ids=constraint_ids)
        outputs.update(constraints_met=result["constraints_met"][:, 0] & tf.logical_not(skipped),
                       constraints_skipped=skipped)
        return outputs

    def _translate_text(self, text, prefix_ids=None, constraint_ids=None):
        """`translate`'s outputs, and the search's result (`SentenceSearch`), with an optional forced prefix
        (int32 `[batch, prefix_len]`, right-padded with `PAD_ID`)."""
        tokens = self.source_codec.tokenize(text)  # [batch, None]
        tokens, truncated = truncate(tokens, self.maximum_source_length)
        result = self.search(self.source_codec.lookup(tokens), prefix_ids, constraint_ids)
        ids, lengths = result["ids"], result["lengths"]  # [batch, n, steps], [batch, n]
        target_tokens = self.target_codec.tokens(ids)  # [batch, n, steps]
        steps = tf.range(tf.shape(ids)[2])  # [steps]
        inside = steps[None, None, :] < lengths[:, :, None]  # [batch, n, steps]
        target_tokens = tf.where(inside, target_tokens, "")  # [batch, n, steps]
        token_probabilities = tf.where(inside, tf.exp(result["token_log_probs"]), 0.0)  # [batch, n, steps]
        mean_log_probs = tf.math.divide_no_nan(
            tf.reduce_sum(result["token_log_probs"], axis=2), tf.cast(lengths, tf.float32)
        )  # [batch, n]: 0 for an empty translation
        words = tf.RaggedTensor.from_tensor(
            tf.reshape(target_tokens, [-1, tf.shape(ids)[2]]),  # [batch * n, steps]
            lengths=tf.reshape(tf.maximum(lengths - 1, 0), [-1]),  # EOS dropped
        )
        translations = tf.reshape(
            self.target_codec.detokenize(words), tf.shape(lengths)
        )  # [batch, n]
        outputs = dict(
            translation=translations[:, 0],
            score=result["scores"][:, 0],
            tokens=target_tokens[:, 0],
            token_probabilities=token_probabilities[:, 0],
            mean_log_prob=mean_log_probs[:, 0],
            alignment=result["alignment"][:, 0],
            source_tokens=with_eos(tokens, constants.EOS_TOKEN, ""),  # [batch, src_len]
            truncated=truncated,
        )
        if self.source_codec.is_subword or self.target_codec.is_subword:
            outputs.update(self._word_view(outputs["tokens"], outputs["source_tokens"], outputs["alignment"],
                                           result["token_log_probs"][:, 0]))
        if self.search_config.hypotheses > 1:
            outputs.update(
                nbest_translations=translations,
                nbest_scores=result["scores"],
                nbest_tokens=target_tokens,  # [batch, n, steps]
                nbest_alignment=result["alignment"],  # [batch, n, steps, src_len]
                nbest_token_probabilities=token_probabilities,  # [batch, n, steps]
                nbest_mean_log_probs=mean_log_probs,  # [batch, n]
            )
        return outputs, result

    def _word_view(self, tokens, source_tokens, alignment, token_log_probs):
        """`words`, `source_words`, `word_alignment` and `word_probabilities` (see `translate`) of the best
        translations' tokens `[batch, tgt_len]`, source tokens `[batch, src_len]`, alignment
        `[batch, tgt_len, src_len]` and token log-probabilities `[batch, tgt_len]`."""
        words, target_word_index = self.target_codec.words(tokens)
        source_words, source_word_index = self.source_codec.words(source_tokens)
        pieces = tf.one_hot(target_word_index, tf.shape(words)[1])  # [batch, tgt_len, tgt_words]; none for padding
        word_log_probs = tf.einsum("bt,btw->bw", token_log_probs, pieces)  # [batch, tgt_words]: pieces' log p summed
        return dict(words=words, source_words=source_words,
                    word_alignment=word_alignment(alignment, target_word_index, source_word_index),
                    word_probabilities=tf.where(tf.not_equal(words, ""), tf.exp(word_log_probs), 0.0))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32, name="source_ids")], autograph=False)
    def translate_ids(self, source_ids):
        """Translates sentences already tokenized and looked up in the source vocabulary.

        Args:
            source_ids: int32 `[batch, src_len]`, source vocabulary ids, right-padded with `PAD_ID` (0),
                without EOS (it is appended here).

        Returns:
            dict of dense tensors (`n` is `num_hypotheses`):
            - `target_ids`: int32 `[batch, tgt_len]`, the best translation, EOS included, then `PAD_ID`.
            - `score`: float32 `[batch]`, its score.
            - `alignment`: float32 `[batch, tgt_len, src_len]` (`src_len` counts the EOS appended).
            - `truncated`: bool `[batch]`, whether the source was cut to `maximum_source_length`.
            - with `num_hypotheses > 1` also `nbest_target_ids` int32 `[batch, n, tgt_len]` and
              `nbest_scores` float32 `[batch, n]`.
        """
        self._check_batch_size(source_ids)
        size = self.model.config.source_vocab_size
        in_vocabulary = tf.logical_and(source_ids >= 0, source_ids < size)
        checks = [
            tf.debugging.Assert(
                tf.reduce_all(in_vocabulary),
                [
                    f"source_ids must be vocabulary ids in [0, {size}), got",
                    tf.reduce_min(source_ids),
                    tf.reduce_max(source_ids),
                ],
            )
        ]
        with tf.control_dependencies(checks):
            token_ids = tf.RaggedTensor.from_tensor(tf.identity(source_ids), padding=constants.PAD_ID)
        token_ids, truncated = truncate(token_ids, self.maximum_source_length)
        result = self.search(token_ids)
        outputs = dict(
            target_ids=result["ids"][:, 0],
            score=result["scores"][:, 0],
            alignment=result["alignment"][:, 0],
            truncated=truncated,
        )
        if self.search_config.hypotheses > 1:
            outputs.update(nbest_target_ids=result["ids"], nbest_scores=result["scores"])
        return outputs

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="source"),
            tf.TensorSpec([None], tf.string, name="target"),
        ],
        autograph=False,
    )
    def score(self, source, target):
        """log p(y | x) of sentence pairs under the model (teacher forcing, no search).

        Args:
            source: tf.string `[batch]`, raw source sentences.
            target: tf.string `[batch]`, raw target sentences, tokenized as a prefix is
                (`TextCodec.tokenize_prefix`): the `<unk>` a translation holds stays one token, so a
                translation's score is its search log-probability.

        Returns:
            dict of dense tensors:
            - `log_prob`: float32 `[batch]`, sum of the token log-probabilities, EOS included.
            - `token_log_probs`: float32 `[batch, tgt_len]`, log p(y_i | y_<i, x), EOS included, then 0.
            - `tokens`: string `[batch, tgt_len]`, the target tokens scored, then `</s>`, then "".
            - `source_truncated`, `target_truncated`: bool `[batch]`, whether a side was cut to its
              maximum (`maximum_source_length`, `maximum_target_length - 1` tokens).
        """
        self._check_batch_size(source)
        checks = [
            tf.debugging.assert_equal(
                tf.shape(source)[0], tf.shape(target)[0], message="source and target must hold as many sentences"
            )
        ]
        with tf.control_dependencies(checks):
            source_tokens = self.source_codec.tokenize(source)
        target_tokens = self.target_codec.tokenize_prefix(target)
        source_tokens, source_truncated = truncate(source_tokens, self.maximum_source_length)
        target_tokens, target_truncated = truncate(target_tokens, self.maximum_target_length - 1)
        source_ids = with_eos(self.source_codec.lookup(source_tokens))  # [batch, src_len]
        target_ids = with_eos(self.target_codec.lookup(target_tokens))  # [batch, tgt_len]

        def scored():
            with reading_stored_weights(self.model):  # a DecodingModel's weights, widened once
                return self.model.token_log_probs(source_ids, target_ids)

        token_log_probs = tf.cond(
            tf.size(source_ids) > 0, scored, lambda: tf.zeros(tf.shape(target_ids))
        )  # [batch, tgt_len]
        return dict(
            log_prob=tf.reduce_sum(token_log_probs, axis=1),
            token_log_probs=token_log_probs,
            tokens=with_eos(target_tokens, constants.EOS_TOKEN, ""),  # [batch, tgt_len]
            source_truncated=source_truncated,
            target_truncated=target_truncated,
        )

    def _check_batch_size(self, batch):
        tf.debugging.assert_less_equal(
            tf.shape(batch)[0],
            self.maximum_batch_size,
            message=f"a request holds at most {self.maximum_batch_size} sentences; split the batch",
        )
