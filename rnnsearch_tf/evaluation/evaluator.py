"""One model on one test set: the paper's Table 1, Figure 2, Figure 3 and Table 2 numbers."""

import dataclasses
import json
import os
import re
import sys

import tensorflow as tf

from data_pipeline import constants, languages
from data_pipeline.text_codec import counting_tokens
from rnnsearch_tf.inference.batch_translator import DECODE_WORKERS, BatchTranslator
from rnnsearch_tf.inference.model_loader import check_model_dir
from rnnsearch_tf.inference.output_formats import word_view
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.evaluation.corpus_scores import bleu, corpus_scores
from rnnsearch_tf.evaluation.plots import plot_alignment
from rnnsearch_tf.inference.source_coverage import oov_warning
from rnnsearch_tf.models.model_dir import ModelDir
from data_pipeline.progress_line import ProgressLine
from rnnsearch_tf.utils.text_files import open_output
from rnnsearch_tf.inference.unk_replacer import UnkReplacer

LENGTH_BINS = (10, 20, 30, 40, 50, 60)
_TOKENIZE_BATCH = 1000
# The files `Evaluator.evaluate` writes in a model's folder, removed there before it writes them again: a folder
# holds one run's files, not an older run's heatmaps or No-UNK files beside them.
METRICS_FILE = "metrics.json"
TRANSLATIONS_FILE = "translations.txt"
UNK_REPLACED_FILE = "translations_unk_replaced.txt"
NO_UNK_FILE = "translations_no_unk.txt"
NO_UNK_LINES_FILE = "no_unk_lines.txt"
WRITTEN_FILES = (METRICS_FILE, TRANSLATIONS_FILE, UNK_REPLACED_FILE, NO_UNK_FILE, NO_UNK_LINES_FILE)
HEATMAP_FILE = re.compile(r"alignment_[1-9][0-9]*\.png")  # alignment_LINE.png


class Evaluator:
    """Translates a test set with a model directory and measures it as Bahdanau et al. 2014 do.

    - "All" (Table 1): sacreBLEU corpus BLEU of the detokenized translations against the raw references
      (`corpus_scores.bleu`: the tokenizer sacreBLEU gives the model's target language, 13a for most, "zh"
      for Chinese; mixed case, or case-insensitive for a lower-casing model (`TextCodec.lowercase`); its
      signature is reported), decoded with `<unk>` allowed; beside it chrF,
      chrF++ and TER of the same translations (`corpus_scores`). Also `bleu_unk_replaced`: the same
      translations after `UnkReplacer`; None for a model without attention (RNNencdec, `uses_attention`), whose
      alignment names no source word to copy. Every BLEU below is made the same way.
    - "No UNK" (Table 1): BLEU on the sentences whose source has no Moses token outside the model's
      source vocabulary and whose reference has none outside the target vocabulary, decoded again with
      `<unk>` forbidden. None with a subword codec, where no text is unknown.
    - By length (Figure 2): "All" BLEU of the sentences in each bin of source length: `[0, 10)`,
      `[10, 20)`, ..., `[60, ∞)` for the default `length_bins`. A length is counted in the source language's
      units whatever the model's codec (`text_codec.counting_tokens`: Moses tokens, characters for a language
      written without spaces; `source_length_unit`), so a word and a subword model put the same sentences in
      the same bins.
    - Alignments (Figure 3): heatmaps of the first `num_heatmaps` non-empty test sentences, rows labelled with
      the words searched (`<unk>` as `<unk>`, as in the translations); none for a model without attention.
    - Long sentences (Appendix C, Table 3): the `num_longest` test sentences of greatest source length
      (as the bins count it; the first line wins a tie), each with its "All" translation and sentence BLEU
      (`corpus_scores.bleu` of one sentence: effective order, as `sacrebleu.sentence_bleu`).
    - Training (Table 2): `training_state.json` of the model directory (its `history` is the learning
      curve), or None when it is missing or the model is an ensemble.

    Every translation is searched as `translate` searches with the same flags: over the model directory's
    vocabulary shortlist where it has one, unless `search_config.shortlist` is False (`SearchConfig.shortlist`),
    so that sacreBLEU on `translate`'s output gives "All"; the metrics name the choice (`shortlist`), the search
    settings (`search`) and the form of the weights (`precision`, `quantize`).

    Args:
        sources: list of str, raw source sentences.
        references: list of str, raw references, line-aligned with `sources`.
        batch_size: sentences per batch.
        workers: batches translated at once (`BatchTranslator`).
        search_config: `SearchConfig` of the translations ("No UNK" sets its `forbid_unk`).
        unk_replacer: the `UnkReplacer` of `bleu_unk_replaced` (default: copy the source word).
        length_bins: increasing upper bounds of the length bins; one more bin holds the longer ones.
        num_heatmaps: alignment figures written per model.
        num_longest: longest test sentences listed with their translations.
        progress: whether to draw progress bars on stderr.
        precision: `ModelConfig.precision` to decode with; None: each model's own.
        quantize: how the weights are held while decoding ("none", "int8"; `model_loader.load_model_dir`).
        function_cache: `BatchTranslator`'s, where the traced searches are kept between processes.
    """

    def __init__(
        self,
        sources,
        references,
        batch_size=64,
        workers=DECODE_WORKERS,
        search_config=None,
        unk_replacer=None,
        length_bins=LENGTH_BINS,
        num_heatmaps=3,
        num_longest=5,
        progress=False,
        precision=None,
        quantize="none",
        function_cache=None,
    ):
        if len(sources) != len(references):
            raise ValueError(f"got {len(sources)} source sentences but {len(references)} references")
        if not sources:
            raise ValueError("no source sentences: nothing to evaluate (corpus scores need at least one)")
        self.sources = sources
        self.references = references
        self.batch_size = batch_size
        self.workers = workers
        self.search_config = search_config or SearchConfig()
        self.unk_replacer = unk_replacer or UnkReplacer()
        self.length_bins = tuple(length_bins)
        self.num_heatmaps = num_heatmaps
        self.num_longest = num_longest
        self.progress = progress
        self.precision = precision
        self.quantize = quantize
        self.function_cache = function_cache
        self._source_lengths = {}  # language -> the sources' lengths: alike for every model, counted once

    def check(self, model_dir, checkpoint="best"):
        """Raises ValueError or FileNotFoundError in one line where `evaluate(model_dir, ..., checkpoint)` would fail
        before decoding (`model_loader.check_model_dir`, with this evaluator's `quantize`). Reads no weights, so
        that a command checks every model of a run before it decodes any."""
        check_model_dir(model_dir, checkpoint, self.quantize)

    def evaluate(self, model_dir, output_dir, checkpoint="best", averaged=None):
        """Writes translations, heatmaps and `metrics.json` to `output_dir`; returns the metrics dict.

        `model_dir` may join several model directories with "+": their ensemble is evaluated. The files an
        earlier evaluation wrote in `output_dir` (`WRITTEN_FILES`, `HEATMAP_FILE`) are removed first; other
        files are left. `averaged`: what `rnnsearch average` recorded of an averaged `checkpoint`
        (`checkpoint_averaging.read_averaging`; an ensemble's, a list), kept in the metrics as it is given.

        Returns:
            dict with `model_dir`, `checkpoint`, `sentences`, `bleu`, `signature` (BLEU's), `chrf`,
            `chrf_plus_plus`, `ter` and `signatures` (each metric's; `corpus_scores`), `uses_attention` (the
            model's: without it no `bleu_unk_replaced`, None, and no heatmaps), `bleu_unk_replaced`, `bleu_no_unk`,
            `no_unk_sentences`, `truncated_sentences`, `shortlist` (the words searched:
            "model's (K per source word, N frequent)" or "full vocabulary"), `search` (the `SearchConfig` of
            "All" as the translator resolved it, `shortlist` True or False, as a dict), `precision` and
            `quantize` (of the weights decoding: "float32" or "bfloat16", "none" or "int8"; an ensemble's
            members' joined by "+"), `source_length_unit` ("Moses tokens" or "characters":
            `languages.counting_unit`), `bleu_by_length` (list of
            `{"bin", "minimum", "maximum", "sentences", "bleu"}`, `maximum` None for the last bin and
            `bleu` None for an empty bin), `heatmaps` (file names in `output_dir`), `longest_sentences`
            (list of `{"line", "source_length", "source", "reference", "translation", "sentence_bleu"}`,
            `line` 1-based, longest first), `training` (the training state dict or None), `averaged` (as given).
        """
        translator = BatchTranslator.from_model_dir(
            model_dir, checkpoint, self.batch_size, self.unk_replacer, self.workers, function_cache=self.function_cache,
            precision=self.precision, quantize=self.quantize, search_config=self.search_config,
        )
        results = translator.translate(self.sources, self._progress_line("translated", len(self.sources)))
        _remove_written_files(output_dir)
        hypotheses = [result["searched_translation"] for result in results]  # <unk>s kept
        members = ModelDir.split(model_dir)
        codecs = dict(source=translator.source_codec, target=translator.module.target_codec)
        target_codec = codecs["target"]
        scores, signatures = corpus_scores(hypotheses, self.references, target_language=target_codec.language,
                                           lowercase=target_codec.lowercase)
        warning = oov_warning(results, codecs["source"], target_codec.language)
        if warning:
            print(warning, file=sys.stderr)
        source_unknown = _unknown_words(self.sources, codecs["source"])
        language = codecs["source"].language
        if language not in self._source_lengths:
            self._source_lengths[language] = _source_lengths(self.sources, language)
        source_lengths = self._source_lengths[language]
        _write_lines(os.path.join(output_dir, TRANSLATIONS_FILE), hypotheses)
        unk_replaced_score = None
        if translator.uses_attention:
            replaced = [result["translation"] for result in results]
            _write_lines(os.path.join(output_dir, UNK_REPLACED_FILE), replaced)
            unk_replaced_score = _corpus_bleu(replaced, self.references, target_codec)
        no_unk_score, known = None, None
        if codecs["source"].has_unknown or codecs["target"].has_unknown:
            no_unk_score, known = self._no_unk_bleu(model_dir, checkpoint, source_unknown, target_codec, output_dir)
        recorded = translator.module.recorded_settings(version=None)
        metrics = dict(
            model_dir=os.fspath(model_dir),
            checkpoint=translator.loaded_from,
            sentences=len(self.sources),
            bleu=scores["bleu"],
            signature=signatures["bleu"],
            chrf=scores["chrf"],
            chrf_plus_plus=scores["chrf_plus_plus"],
            ter=scores["ter"],
            signatures=signatures,
            uses_attention=translator.uses_attention,
            bleu_unk_replaced=unk_replaced_score,
            bleu_no_unk=no_unk_score,
            no_unk_sentences=None if known is None else len(known),
            truncated_sentences=sum(result["truncated"] for result in results),
            shortlist=_vocabulary_searched(translator.module.shortlist),
            search=translator.search_config.to_dict(),
            **{name: recorded[name] for name in ("precision", "quantize")},
            source_length_unit=languages.counting_unit(codecs["source"].language),
            bleu_by_length=self._bleu_by_length(hypotheses, source_lengths, target_codec),
            heatmaps=self._heatmaps(results, output_dir) if translator.uses_attention else [],
            longest_sentences=self._longest_sentences(hypotheses, source_lengths, target_codec),
            training=ModelDir(members[0]).read_training_state() if len(members) == 1 else None,
            averaged=averaged,
        )
        with open(os.path.join(output_dir, METRICS_FILE), "w", encoding="utf-8") as stream:
            json.dump(metrics, stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        return metrics

    def _progress_line(self, label, total):
        return ProgressLine(label, total) if self.progress and total else None

    def _no_unk_bleu(self, model_dir, checkpoint, source_unknown, target_codec, output_dir):
        """(BLEU, lines) of "No UNK": the sentences without an unknown word on either side, translated again
        with `<unk>` forbidden; writes their translations and 1-based line numbers."""
        reference_unknown = _unknown_words(self.references, target_codec)
        known = [i for i in range(len(self.sources)) if not source_unknown[i] and not reference_unknown[i]]
        no_unk_translator = BatchTranslator.from_model_dir(
            model_dir, checkpoint, self.batch_size, workers=self.workers, function_cache=self.function_cache,
            precision=self.precision, quantize=self.quantize,
            search_config=dataclasses.replace(self.search_config, forbid_unk=True),
        )
        no_unk_results = no_unk_translator.translate(
            [self.sources[i] for i in known], self._progress_line("No UNK", len(known))
        )
        no_unk_hypotheses = [result["translation"] for result in no_unk_results]
        _write_lines(os.path.join(output_dir, NO_UNK_FILE), no_unk_hypotheses)
        _write_lines(os.path.join(output_dir, NO_UNK_LINES_FILE), [str(i + 1) for i in known])
        if not known:
            return None, known
        references = [self.references[i] for i in known]
        return _corpus_bleu(no_unk_hypotheses, references, target_codec), known

    def _bleu_by_length(self, hypotheses, source_lengths, target_codec):
        bins = []
        for minimum, maximum in zip((0,) + self.length_bins, self.length_bins + (None,)):
            members = [
                i for i, length in enumerate(source_lengths) if length >= minimum and (maximum is None or length < maximum)
            ]
            score = None
            if members:
                score = _corpus_bleu([hypotheses[i] for i in members], [self.references[i] for i in members],
                                     target_codec)
            label = f"{minimum}-{maximum}" if maximum is not None else f"{minimum}+"
            bins.append(dict(bin=label, minimum=minimum, maximum=maximum, sentences=len(members), bleu=score))
        return bins

    def _longest_sentences(self, hypotheses, source_lengths, target_codec):
        sentence_bleu = bleu(target_codec.language, sentence=True, lowercase=target_codec.lowercase)
        longest = sorted(range(len(source_lengths)), key=lambda i: -source_lengths[i])[: self.num_longest]
        return [
            dict(
                line=i + 1,
                source_length=source_lengths[i],
                source=self.sources[i],
                reference=self.references[i],
                translation=hypotheses[i],
                sentence_bleu=sentence_bleu.sentence_score(hypotheses[i], [self.references[i]]).score,
            )
            for i in longest
        ]

    def _heatmaps(self, results, output_dir):
        names = []
        for index, result in enumerate(results):
            if len(names) >= self.num_heatmaps:
                break
            if not result["source_tokens"]:
                continue
            name = f"alignment_{index + 1}.png"
            # rows: the words searched, `<unk>` kept (translations.txt's), not those `<unk>` replacement wrote
            source_words, target_words, alignment = word_view(dict(result, tokens=result["searched_tokens"]))
            plot_alignment(
                source_words + [constants.EOS_TOKEN],
                (target_words + [constants.EOS_TOKEN])[: alignment.shape[0]],
                alignment,
                os.path.join(output_dir, name),
                title=f"line {index + 1}",
            )
            names.append(name)
        return names


def _unknown_words(sentences, codec):
    """Bool per sentence: one of its tokens (cut by the model's `codec`) is `<unk>`."""
    unknown = []
    for start in range(0, len(sentences), _TOKENIZE_BATCH):
        ids = codec.lookup(codec.tokenize(tf.constant(sentences[start : start + _TOKENIZE_BATCH])))
        unknown.extend(tf.reduce_any(tf.equal(ids, constants.UNK_ID), axis=1).numpy().tolist())
    return unknown


def _source_lengths(sentences, language):
    """The length of each sentence of `language` as the bins count it, whatever a model's codec cuts it into
    (`counting_tokens`: Moses tokens, characters for a language written without spaces)."""
    lengths = []
    for start in range(0, len(sentences), _TOKENIZE_BATCH):
        tokens = counting_tokens(tf.constant(sentences[start : start + _TOKENIZE_BATCH]), language)
        lengths.extend(tokens.row_lengths().numpy().tolist())
    return lengths


def _remove_written_files(output_dir):
    """Creates `output_dir`, or removes from it the files an earlier `Evaluator.evaluate` wrote (`WRITTEN_FILES`,
    `HEATMAP_FILE`), so that it holds this run's files only; a file of another name is the user's and stays."""
    os.makedirs(output_dir, exist_ok=True)
    for name in os.listdir(output_dir):
        if (name in WRITTEN_FILES or HEATMAP_FILE.fullmatch(name)) and os.path.isfile(os.path.join(output_dir, name)):
            os.remove(os.path.join(output_dir, name))


def _vocabulary_searched(shortlist):
    """The `shortlist` metric: "model's (K per source word, N frequent)" (`Shortlist.description`), or "full
    vocabulary" where the translator searched without one (`SearchConfig.shortlist`)."""
    return "full vocabulary" if shortlist is None else f"model's ({shortlist.description})"


def _corpus_bleu(hypotheses, references, target_codec):
    """The corpus BLEU of `corpus_scores` (the same metric for every subset of the test set), for the language
    and case of the model's target codec."""
    return corpus_scores(hypotheses, references, ["bleu"], target_language=target_codec.language,
                         lowercase=target_codec.lowercase)[0]["bleu"]


def _write_lines(path, lines):
    with open_output(path) as stream:
        stream.writelines(line + "\n" for line in lines)

