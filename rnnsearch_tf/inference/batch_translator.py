"""Many sentences through a Translator or an exported SavedModel: length-sorted batches, original order."""

import collections
import concurrent.futures
import itertools
import os

import tensorflow as tf

from data_pipeline import constants
from data_pipeline.export_dir import ExportDir, ExportSettings, ExportVersion
from data_pipeline.text_codec import TextCodec
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.models.model_dir import ModelDir

DECODE_WORKERS = 2  # batches in flight at once (`--decode_workers`)
# Without a function cache, a Translator given at most this many sentences runs its search op by op instead
# of tracing it: tracing and optimizing the graph cost more than a small search (docs/performance.md,
# "Start-up"); a graph loaded from the cache costs less than either.
EAGER_SENTENCES = 8


class BatchTranslator:
    """Translates or scores a list of sentences in batches of similar length, results in input order.

    Sentences are sorted by their number of whitespace-separated words, longest first (a batch that does
    not fit in memory fails at once, and padding is small), cut into batches of `batch_size`, sent
    through `Translator.translate` (or `score`), `workers` batches at a time, and the results are put
    back in input order. The Translator's rules hold for every sentence: an empty line (or one of
    whitespace or control characters only) gets the empty translation with score 0 and no tokens; a
    line of more than `maximum_source_length` Moses tokens is translated from its first
    `maximum_source_length` tokens and marked `truncated`.

    Args:
        module: a `Translator`, or a SavedModel written by `serving/export.py` and loaded with
            `tf.saved_model.load` (its `translate` and `score` signatures are used, `translate_prefix`
            for prefixes and `translate_constrained` for constraints).
        settings: the translator's options by name (`Translator.settings()`; the `settings` signature of
            an export, `ExportSettings.read`): its `target_language`, `maximum_batch_size`, its
            `SearchConfig` (`SearchConfig.from_settings`) and, where given, `source_language` are used (and an
            export's `uses_attention`).
        batch_size: sentences per batch, at most the translator's `maximum_batch_size`.
        workers: batches translated at once, each in its own thread (TensorFlow runs a graph without
            holding the GIL). A beam search step is many small ops that leave cores idle; a second batch
            in flight fills them. Give each worker its share of the cores (`utils.threads.share_cores`,
            done by the command-line tools) for the most of it. The results do not depend on it.
        unk_replacer: optional `UnkReplacer` applied to the best translation of each sentence and, where
            the translator returns every hypothesis' tokens and alignment (`num_hypotheses > 1`), to each
            hypothesis of the n-best list. Unused with a subword codec, which has no `<unk>`, and with a model
            without attention (`uses_attention` False: RNNencdec's alignment is all zeros, so every `<unk>` would
            copy the first source word); the attribute `unk_replacer` is then None.
        loaded_from: the checkpoint or SavedModel translating (set by `from_model_dir`, `from_saved_model`).
        eager_sentences: a `Translator` given at most this many sentences (or pairs to score) in one call
            runs the Python function of `translate`, `translate_prefix` or `score` eagerly instead of
            tracing it (the same ops, the same results): for a few sentences the trace and the graph's
            optimization cost several times the search. 0 always traces (a Translator that will be
            called again and again, as in validation). A SavedModel is traced already. Not used with a
            `function_cache`.
        function_cache: a `utils.function_cache.FunctionCache` that keeps a Translator's traced functions
            between processes (a command then loads the graph instead of tracing it); None: traced in
            every process.
        cache_hint: what `function_cache` remembers the graphs used under, for its `warm_up` in the next
            process (`from_model_dir`: the model directories and the options); None: nothing remembered.

    Example:
    >>> batch_translator = BatchTranslator.from_model_dir("models/rnnsearch50", beam_size=12)
    >>> [result["translation"] for result in batch_translator.translate(["Hello .", "", "Thank you ."])]
    ['Bonjour .', '', 'Merci .']
    """

    def __init__(self, module, settings, batch_size=64, unk_replacer=None, loaded_from="", workers=DECODE_WORKERS,
                 eager_sentences=EAGER_SENTENCES, function_cache=None, cache_hint=None):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.module = module
        self.search_config = module.search_config if isinstance(module, Translator) else SearchConfig.from_settings(
            settings)
        self.batch_size = min(batch_size, int(settings["maximum_batch_size"]))
        self.workers = workers
        self.loaded_from = loaded_from
        self.eager_sentences = eager_sentences if isinstance(module, Translator) else 0
        self.function_cache = function_cache if isinstance(module, Translator) else None
        self.cache_hint = cache_hint
        self._graph_functions = {}  # name -> the function cache's `GraphFunction`, looked up once
        self.source_language = settings.get("source_language")  # None where settings lack it
        self.target_language = settings.get("target_language")
        # The model's source `TextCodec`, vocabulary included: a Translator's own; None for a SavedModel.
        self.source_codec = module.source_codec if isinstance(module, Translator) else None
        self.target_codec = self._target_codec(module, settings, loaded_from)
        # Whether the alignment says which source word made a target word: a model's (an ensemble's if one member
        # attends), as an export records it (`ExportSettings`: one older than the record is taken to attend).
        self.uses_attention = (module.model.uses_attention if isinstance(module, Translator)
                               else bool(ExportSettings(settings)["uses_attention"]))
        self.unk_replacer = unk_replacer if self.target_codec is not None and self.uses_attention else None

    @staticmethod
    def _target_codec(module, settings, loaded_from):
        """The target `TextCodec` where it has `<unk>`, whose detokenization `<unk>` replacement needs (a
        Translator's own; for a SavedModel, a word-level one when its settings say so, as every export
        older than codecs, with the vocabulary of its assets where the version folder `loaded_from` has one,
        so that a glossary tells the words outside it as with the model directory: `Glossary.searched_as`);
        None for a subword codec (its export tokenizes and detokenizes by itself)."""
        if isinstance(module, Translator):
            codec = module.target_codec
        elif ExportSettings(settings).codec_is_moses("target"):
            codec = ExportSettings(settings).moses_codec("target")
            vocabulary_file = ExportVersion(loaded_from).asset(constants.TARGET_VOCABULARY_FILE) if loaded_from else ""
            if vocabulary_file and tf.io.gfile.exists(vocabulary_file):
                codec = TextCodec(codec.language, vocabulary_file, lowercase=codec.lowercase)
        else:
            codec = None
        return codec if codec is not None and codec.has_unknown else None

    def _function(self, name, count):
        """The module's `name` function (None if an older export lacks it) for a call on `count` sentences:
        a Translator's traced function through the function cache where there is one (loading a graph
        costs less than an untraced search of one sentence; loaded once per name), else its untraced Python function for
        `count <= eager_sentences` and its traced one for more."""
        if not isinstance(self.module, Translator):
            return self.module.signatures.get(name)
        if self.function_cache is not None:
            if name not in self._graph_functions:
                self._graph_functions[name] = self.function_cache.function(self.module, name, self.module.fingerprint(),
                                                                           self.cache_hint)
            return self._graph_functions[name]
        function = getattr(self.module, name)
        return function.python_function if count <= self.eager_sentences else function

    @classmethod
    def from_model_dir(cls, model_dir, checkpoint="best", batch_size=64, unk_replacer=None, workers=DECODE_WORKERS,
                       eager_sentences=EAGER_SENTENCES, function_cache=None, **options):
        """From a model directory (or an ensemble, "a+b") and checkpoint; `options` go to
        `Translator.from_model_dir`. `loaded_from` is the checkpoint path. With a `function_cache`, the graph
        that the same directories and options used last is instantiated while the model loads
        (`FunctionCache.warm_up`)."""
        cache_hint = None
        if function_cache is not None:
            cache_hint = [[os.path.realpath(path) for path in ModelDir.split(model_dir)], checkpoint,
                          repr(sorted(options.items()))]
            function_cache.warm_up(cache_hint)
        translator = Translator.from_model_dir(model_dir, checkpoint, **options)
        return cls(translator, translator.settings(), batch_size, unk_replacer, translator.checkpoint_path, workers,
                   eager_sentences, function_cache, cache_hint)

    @classmethod
    def from_saved_model(cls, path, batch_size=64, unk_replacer=None, workers=DECODE_WORKERS):
        """From an export of `serving/export.py`: a version folder, or the base path (newest version).
        `loaded_from` is the version folder loaded."""
        version = ExportVersion(path)
        if not version.is_complete():
            version = ExportDir(path).newest_version()
        module = version.load()
        return cls(module, ExportSettings.read(module), batch_size, unk_replacer, version.path, workers)

    @property
    def maximum_target_length(self):
        """Most target tokens, EOS included, the translator scores (`Translator.maximum_target_length`)."""
        return self.search_config.maximum_target_length(self.search_config.maximum_source_length)

    def translate(self, sentences, progress=None, prefixes=None, constraints=None):
        """Translates sentences.

        Args:
            sentences: list of str, raw source sentences.
            progress: optional callable, called with the number of sentences done after each batch.
            prefixes: optional list of str, as many as `sentences`: raw target-language text each
                translation must start with ("" for none), through `Translator.translate_prefix` (words
                outside the target vocabulary are forced, and output, as `<unk>`).
            constraints: optional list, as many as `sentences`, of lists of str: the target-language
                phrases (raw text) each translation must contain (`[]` for none), through
                `Translator.translate_constrained` (lexically constrained decoding); not with `prefixes`.

        Returns:
            list of dicts, one per sentence in input order:
            - `translation`: str, the best translation, detokenized (after `<unk>` replacement).
            - `searched_translation`: str, the best translation as searched (before `<unk>` replacement).
            - `score`: float, its beam-search score.
            - `source_tokens`: list of str, the source tokens searched (after truncation), no `</s>`.
            - `tokens`: list of str, the translation's tokens (after `<unk>` replacement), no `</s>`.
            - `searched_tokens`: list of str, the same as searched (`<unk>`s kept), the rows of `alignment`.
            - `token_probabilities`: list of float, p(y_i | y_<i, x) of each searched token, then of `</s>`
              (`len(tokens) + 1` values, as the alignment's rows), and `mean_log_prob`: float, the mean of
              their logs (`Translator.translate`; not from an export older than them).
            - `alignment`: float32 array `[len(tokens) + 1, len(source_tokens) + 1]`: α_ij, `</s>`
              included on both sides (shape `[0, 1]` for an empty source; the last row is missing when the
              search stopped at its length bound before `</s>`).
            - `truncated`: bool, whether the source was cut to `maximum_source_length`.
            - with a subword codec, `source_words`, `words`, `word_alignment`: the same of the words its pieces
              make (`Translator.translate`'s word view; `output_formats.word_view` gives the words of any result),
              and `word_probabilities` (each word's pieces' probabilities multiplied, then `</s>`'s).
            - `unks_replaced`: int, `<unk>`s replaced (0 without an `unk_replacer`).
            - `shortlist`: True where the search ran over a vocabulary shortlist (`SearchConfig.shortlist`): the
              scores and probabilities are then the model's renormalised over the shortlist's words, not over
              the whole vocabulary (`score` gives those); absent otherwise.
            - `nbest`: list of `(translation, score)`, best first, `num_hypotheses` items: the beam's
              translations, each after `<unk>` replacement (`nbest[0]` is `(translation, score)`); from
              an export older than `nbest_tokens`, as searched.
            - with `num_hypotheses > 1`, `hypotheses`: list of dicts, one per item of `nbest`, each with
              the `translation`, `score`, `tokens`, `searched_tokens`, `alignment`, `unks_replaced`,
              `token_probabilities` and `mean_log_prob` of that hypothesis
              (as above; not from an export older than `nbest_tokens`).
            - with `prefixes`, `alternatives`: list of `(word, log_prob)`, the most probable next words
              after the prefix, best first (`Translator.translate_prefix`), and `prefix_truncated`: bool, whether
              the prefix was cut to `maximum_target_length - 1` tokens (False from an export older than it).
            - with `constraints`, `constraints_met` and `constraints_skipped`: lists of bool, one per
              constraint of the sentence, whether the best translation contains it, and whether it was not
              searched for (made of target words outside the vocabulary only: `<unk>`s).
        """
        translate_batch = self._batch_function(sentences, prefixes, constraints)
        prefix_tokens = self._prefix_tokens(prefixes)
        results, done = [None] * len(sentences), 0
        for batch, outputs in self._in_flight(self._batches(sentences), translate_batch):
            batch_results = [self._translation(outputs, row, prefix_tokens[index]) for row, index in enumerate(batch)]
            if self.unk_replacer is not None:
                self._detokenize_replaced(batch_results)
            for row, (index, result) in enumerate(zip(batch, batch_results)):
                if self.search_config.shortlist:
                    result["shortlist"] = True
                if constraints is not None:
                    count = len(constraints[index])
                    result["constraints_met"] = outputs["constraints_met"][row, :count].tolist()
                    result["constraints_skipped"] = outputs["constraints_skipped"][row, :count].tolist()
                results[index] = result
            done += len(batch)
            if progress is not None:
                progress(done)
        return results

    def _prefix_tokens(self, prefixes):
        """Each prefix's tokens as the search forced them (`TextCodec.tokenize_prefix`; lists of str), where `<unk>`
        replacement must keep them; else none for any sentence."""
        if not prefixes or self.unk_replacer is None:
            return collections.defaultdict(tuple)
        tokens = self.target_codec.tokenize_prefix(tf.constant(prefixes, tf.string)).to_list()
        return [[token.decode("utf-8") for token in row] for row in tokens]

    def _batch_function(self, sentences, prefixes, constraints):
        """`batch -> outputs` (NumPy) of `translate`, of `translate_prefix` with `prefixes`, of
        `translate_constrained` with `constraints` (each sentence's phrases padded with "" to the batch's
        most, at least one column), for a list of indices into `sentences`."""
        if prefixes is not None and constraints is not None:
            raise ValueError("give prefixes or constraints, not both")
        name, extra, what = "translate", None, ""
        if prefixes is not None:
            name, extra, what = "translate_prefix", prefixes, "prefixes"
        if constraints is not None:
            name, extra, what = "translate_constrained", constraints, "constraint lists"
        if extra is not None and len(extra) != len(sentences):
            raise ValueError(f"got {len(sentences)} sentences but {len(extra)} {what}")
        function = self._function(name, len(sentences))
        if function is None:
            raise ValueError(f"{self.loaded_from} has no {name} signature: export the model again")

        def translate_batch(batch):
            inputs = dict(text=tf.constant([sentences[i] for i in batch]))
            if prefixes is not None:
                inputs["prefix"] = tf.constant([prefixes[i] for i in batch])
            if constraints is not None:
                width = max([1] + [len(constraints[i]) for i in batch])
                padded = [list(constraints[i]) + [""] * (width - len(constraints[i])) for i in batch]
                inputs["constraints"] = tf.constant(padded, tf.string)  # [batch, width]
            return {key: value.numpy() for key, value in function(**inputs).items()}

        return translate_batch

    def score(self, sources, targets, progress=None):
        """log p(y | x) of sentence pairs (`Translator.score`), with the target tokens scored.

        Args:
            sources: list of str, raw source sentences.
            targets: list of str, raw target sentences, as many.
            progress: optional callable, called with the number of pairs done after each batch.

        Returns:
            list of dicts, one per pair in input order:
            - `log_prob`: float, log p(y | x), the sum of `token_log_probs`.
            - `tokens`: list of str, the target's tokens scored, then `</s>`.
            - `token_log_probs`: list of float, log p(y_i | y_<i, x) of each of `tokens`.
            - `source_truncated`, `target_truncated`: bool, whether a side was cut to its maximum
              (`maximum_source_length`, `maximum_target_length - 1` tokens).
        """
        if len(sources) != len(targets):
            raise ValueError(f"got {len(sources)} source sentences but {len(targets)} target sentences")
        score = self._function("score", len(sources))

        def score_batch(batch):
            outputs = score(
                source=tf.constant([sources[i] for i in batch]), target=tf.constant([targets[i] for i in batch])
            )
            return {name: value.numpy() for name, value in outputs.items()}

        results, done = [None] * len(sources), 0
        lengths = [len(source.split()) + len(target.split()) for source, target in zip(sources, targets)]
        for batch, outputs in self._in_flight(self._batches(sources, lengths), score_batch):
            for row, (index, row_tokens) in enumerate(zip(batch, self._scored_tokens(outputs, batch, targets))):
                results[index] = dict(
                    log_prob=float(outputs["log_prob"][row]),
                    tokens=row_tokens,
                    token_log_probs=outputs["token_log_probs"][row, : len(row_tokens)].tolist(),
                    source_truncated=bool(outputs["source_truncated"][row]),
                    target_truncated=bool(outputs["target_truncated"][row]),
                )
            done += len(batch)
            if progress is not None:
                progress(done)
        return results

    def _scored_tokens(self, outputs, batch, targets):
        """Each scored target's tokens, then `</s>` (str lists): `score`'s own `tokens`, or, from an export
        older than that output (word-level), the target codec's tokens cut as `score` cuts them."""
        if "tokens" in outputs:
            return [_until_padding(row) for row in outputs["tokens"]]
        tokens = self.target_codec.tokenize(tf.constant([targets[i] for i in batch]))[:, : self.maximum_target_length - 1]
        return [[token.decode("utf-8") for token in row] + [constants.EOS_TOKEN] for row in tokens.to_list()]

    def _in_flight(self, batches, run):
        """`(batch, run(batch))` for every batch, in order, with `workers` batches running at once (also
        while the caller handles a result): a worker whose batch ends takes the next one at once, even
        while an earlier batch still runs. Once a batch fails no other starts and its error is raised."""
        if self.workers == 1:
            yield from ((batch, run(batch)) for batch in batches)
            return
        upcoming, pending = iter(batches), collections.deque()  # (batch, future), in input order
        with concurrent.futures.ThreadPoolExecutor(self.workers, thread_name_prefix="decode") as pool:
            try:
                while True:
                    running = [future for _, future in pending if not future.done()]
                    if not any(future.done() and future.exception() for _, future in pending):
                        for batch in itertools.islice(upcoming, self.workers - len(running)):
                            started = pool.submit(run, batch)
                            pending.append((batch, started))
                            running.append(started)
                    if not pending:
                        return
                    batch, future = pending[0]
                    if future.done():
                        pending.popleft()
                        yield batch, future.result()
                    else:  # until a batch ends (one that ended since `running` was taken returns at once)
                        concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            finally:
                for _, future in pending:
                    future.cancel()

    def _batches(self, sentences, lengths=None):
        """Lists of indices into `sentences`, longest first, `batch_size` at most each."""
        if lengths is None:
            lengths = [len(sentence.split()) for sentence in sentences]
        order = sorted(range(len(sentences)), key=lambda index: -lengths[index])
        return [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]

    def _translation(self, outputs, row, prefix_tokens=()):
        """One sentence's result (see `translate`) from the batch outputs of `Translator.translate`; the tokens of
        its forced prefix (`_prefix_tokens`) are kept by `<unk>` replacement."""
        source_tokens = _until_padding(outputs["source_tokens"][row])  # words, then </s>
        translation = outputs["translation"][row].decode("utf-8")
        best = self._hypothesis(
            translation, outputs["score"][row], outputs["tokens"][row], outputs["alignment"][row], source_tokens,
            *_confidence(outputs, row, "token_probabilities", "mean_log_prob"), prefix_tokens=prefix_tokens,
        )
        hypotheses = None
        if "nbest_tokens" in outputs:
            hypotheses = [
                self._hypothesis(text.decode("utf-8"), score, tokens, alignment, source_tokens, *confidence,
                                 prefix_tokens=prefix_tokens)
                for text, score, tokens, alignment, confidence in zip(
                    outputs["nbest_translations"][row], outputs["nbest_scores"][row],
                    outputs["nbest_tokens"][row], outputs["nbest_alignment"][row],
                    zip(*_confidence(outputs, row, "nbest_token_probabilities", "nbest_mean_log_probs",
                                     len(outputs["nbest_tokens"][row]))),
                )
            ]
            nbest = [(hypothesis["translation"], hypothesis["score"]) for hypothesis in hypotheses]
        elif "nbest_translations" in outputs:
            nbest = [
                (text.decode("utf-8"), float(score))
                for text, score in zip(outputs["nbest_translations"][row], outputs["nbest_scores"][row])
            ]
        else:
            nbest = [(translation, best["score"])]
        result = dict(
            best,
            searched_translation=translation,
            source_tokens=source_tokens[:-1],
            truncated=bool(outputs["truncated"][row]),
            nbest=nbest,
        )
        if hypotheses is not None:
            result["hypotheses"] = hypotheses
        if "words" in outputs:  # a subword codec: the words its pieces make
            source_words, words = _until_padding(outputs["source_words"][row]), _until_padding(outputs["words"][row])
            result.update(
                source_words=source_words[:-1],
                words=words[:-1] if words[-1:] == [constants.EOS_TOKEN] else words,
                word_alignment=outputs["word_alignment"][row][: len(words), : len(source_words)],
            )
            if "word_probabilities" in outputs:
                result["word_probabilities"] = outputs["word_probabilities"][row][: len(words)].tolist()
        if "alternatives" in outputs:
            result["prefix_truncated"] = "prefix_truncated" in outputs and bool(outputs["prefix_truncated"][row])
            result["alternatives"] = [
                (word.decode("utf-8"), float(log_prob))
                for word, log_prob in zip(outputs["alternatives"][row], outputs["alternative_scores"][row])
                if word
            ]
        return result

    def _hypothesis(self, translation, score, tokens, alignment, source_tokens, token_probabilities=None,
                    mean_log_prob=None, prefix_tokens=()):
        """`translation`, `score`, `tokens`, `searched_tokens`, `alignment`, `unks_replaced`, and where given
        `token_probabilities` and `mean_log_prob`, of one hypothesis (see `translate`; the translation is
        detokenized again by `_detokenize_replaced`) from its row of the outputs. The user's `prefix_tokens` (the
        forced start of the hypothesis, as the codec tokenized them: lower-cased by a lowercasing codec) are kept: a
        word of them searched as `<unk>` is written back, as a glossary's term is (`Glossary.unk_replacer`), and
        `<unk>` replacement reads the rest."""
        target_tokens = _until_padding(tokens)  # words, then </s> (unless cut)
        alignment = alignment[: len(target_tokens), : len(source_tokens)]
        words = searched = target_tokens[:-1] if target_tokens[-1:] == [constants.EOS_TOKEN] else target_tokens
        unks_replaced = 0
        if self.unk_replacer is not None:
            forced = min(len(prefix_tokens), len(words))
            rest, unks_replaced = self.unk_replacer.replace(words[forced:], source_tokens, alignment[forced:])
            kept = [given if word == constants.UNK_TOKEN else word for word, given in zip(words, prefix_tokens)]
            unks_replaced += sum(word != given for word, given in zip(words, kept))
            words = kept + rest
        hypothesis = dict(translation=translation, score=float(score), tokens=words, searched_tokens=searched,
                          alignment=alignment, unks_replaced=unks_replaced)
        if token_probabilities is not None:
            hypothesis.update(token_probabilities=token_probabilities[: len(target_tokens)].tolist(),
                              mean_log_prob=float(mean_log_prob))
        return hypothesis

    def _detokenize_replaced(self, results):
        """Detokenizes again the translations (best and n-best) whose `<unk>`s were replaced."""
        replaced = [
            item for result in results for item in [result, *result.get("hypotheses", [])] if item["unks_replaced"]
        ]
        if replaced:
            tokens = tf.ragged.constant([item["tokens"] for item in replaced], dtype=tf.string)
            for item, text in zip(replaced, self.target_codec.detokenize(tokens).numpy()):
                item["translation"] = text.decode("utf-8")
        for result in results:
            if "hypotheses" in result:
                result["nbest"] = [(item["translation"], item["score"]) for item in result["hypotheses"]]
            elif len(result["nbest"]) == 1:  # num_hypotheses 1: the best is the list
                result["nbest"] = [(result["translation"], result["score"])]


def _until_padding(tokens):
    """A row of string tokens `[length]` -> list of str without the "" padding."""
    return [token.decode("utf-8") for token in tokens if token]


def _confidence(outputs, row, probabilities, mean, count=None):
    """(token probabilities, mean log-probability) of `row` from the outputs named `probabilities` and
    `mean` (one hypothesis's, or with `count` each of the `count` hypotheses'); Nones (`count` of each)
    from an export older than them."""
    if probabilities not in outputs:
        return (None, None) if count is None else ([None] * count, [None] * count)
    return outputs[probabilities][row], outputs[mean][row]
