"""The output formats of `python -m rnnsearch_tf.translate` and the Moses n-best format `score` rescores.

- `text`: one detokenized translation per input line (after `<unk>` replacement when asked).
- `nbest`: the Moses n-best format, `num_hypotheses` lines per input line, best first:
  `INDEX ||| TRANSLATION ||| beam_score= SCORE ||| SCORE`, INDEX the 0-based input line. Each
  translation after `<unk>` replacement when asked (by its own alignment). An input line whose
  translation is empty still has its lines (with an empty translation).
- `alignment`: one JSON object per input line: `index`, `translation`, `score`, `source_tokens`,
  `target_tokens` (neither with `</s>`), `alignment` (α_ij rounded to 6 decimals, `len(target_tokens) + 1`
  rows by `len(source_tokens) + 1` columns: the `</s>` of both sides included; `[]` for an empty
  line; the last row is missing when the search stopped at its length bound), `hard_alignment` (the
  Pharaoh format `j-i ...`: for each target word i its most-attended source word j, both 0-based,
  `</s>` excluded), `truncated`, `unks_replaced`; with a subword codec also `source_words`, `target_words`
  and `word_alignment`, the same over the words the pieces make (a word's source pieces summed, its target
  pieces averaged: `Translator.translate`), and `hard_alignment` is over these words; with
  `num_hypotheses > 1` also `nbest`: a list of one
  object per hypothesis, best first, each with its `translation`, `score`, `target_tokens`, `alignment`,
  `hard_alignment` and `unks_replaced` as above (the first repeats the best's).
  A line translated sentence by sentence (`translate --split_sentences`, `ParagraphTranslator`) has
  `index`, `translation`, `score`, `source_tokens`, `target_tokens`, `truncated`, `unks_replaced` of the
  whole line and `sentences`: one object per sentence, in order, with the fields above (`index` is its
  0-based place in the line), so each sentence keeps its own alignment matrix.
  Where the translator gives them (`Translator.translate`'s confidence outputs; not an export older than
  them), each record and each `nbest` item also has `token_probabilities` (one per target token, then
  `</s>`'s) and `mean_log_prob`, and with a subword codec `word_probabilities` (one per target word, then
  `</s>`'s): the `json` format and alignments.
- `json`: one JSON object per input line, the word-level confidence without alignments: `index`,
  `translation`, `score`, `mean_log_prob` (the mean of the token log-probabilities, `</s>` included),
  `tokens` (the target tokens, `</s>` included, as `score --output_format=json`), `token_probabilities`
  (p(y_i | y_<i, x) of each of `tokens` under the model, 6 significant digits), `truncated`,
  `unks_replaced`; with a subword codec also `words` and `word_probabilities` (the product of a word's
  pieces' probabilities, `</s>` included); with `num_hypotheses > 1` also `nbest`: one object per
  hypothesis, best first, with its `translation`, `score`, `mean_log_prob`, `tokens` and
  `token_probabilities`. A line translated sentence by sentence has `index`, `translation`, `score`,
  `truncated`, `unks_replaced` and `sentences`, one such object per sentence. Alignments as well: the
  `alignment` format, whose records hold the same values.
"""

import json

import numpy as np

from data_pipeline import constants

FORMATS = ("text", "nbest", "alignment", "json")
NBEST_SEPARATOR = " ||| "


def format_translation(index, result, output_format):
    """The output lines (each ending in "\\n") of one `BatchTranslator.translate` result."""
    if output_format == "text":
        return result["translation"] + "\n"
    if output_format == "nbest":
        return "".join(nbest_line(index, text, {"beam_score": score}, score) for text, score in result["nbest"])
    if output_format == "alignment":
        return json.dumps(alignment_record(index, result), ensure_ascii=False) + "\n"
    if output_format == "json":
        return json.dumps(confidence_record(index, result), ensure_ascii=False) + "\n"
    raise ValueError(f"output_format must be one of {FORMATS}, got {output_format!r}")


def alignment_record(index, result):
    """The JSON object of the `alignment` format (see the module docstring)."""
    split = "sentences" in result  # a line translated sentence by sentence: one record per sentence inside
    words = len(result["source_tokens"])
    aligned = dict(target_tokens=result["tokens"]) if split else _aligned_translation(result, words)
    if not split and "word_alignment" in result:  # a subword codec: also the words its pieces make
        source_words, target_words, word_alignment = word_view(result)
        by_word = _aligned_translation(dict(tokens=target_words, alignment=word_alignment), len(source_words))
        aligned.update(source_words=source_words, target_words=target_words, word_alignment=by_word["alignment"],
                       hard_alignment=by_word["hard_alignment"])
    record = dict(
        index=index,
        translation=result["translation"],
        score=result["score"],
        source_tokens=result["source_tokens"],
        **aligned,
        **_confidence(result),
        truncated=result["truncated"],
        unks_replaced=result["unks_replaced"],
    )
    if split:
        sentences = result["sentences"]
        record["sentences"] = [alignment_record(number, sentence) for number, sentence in enumerate(sentences)]
        return record
    if len(result.get("hypotheses", [])) > 1:
        record["nbest"] = [
            dict(translation=hypothesis["translation"], score=hypothesis["score"],
                 **_aligned_translation(hypothesis, words), **_confidence(hypothesis),
                 unks_replaced=hypothesis["unks_replaced"])
            for hypothesis in result["hypotheses"]
        ]
    return record


def confidence_record(index, result):
    """The JSON object of the `json` format (see the module docstring)."""
    record = dict(index=index, translation=result["translation"], score=result["score"])
    if "sentences" in result:  # a line translated sentence by sentence: one record per sentence inside
        sentences = [confidence_record(number, sentence) for number, sentence in enumerate(result["sentences"])]
        return dict(record, truncated=result["truncated"], unks_replaced=result["unks_replaced"], sentences=sentences)
    record.update(_token_confidence(result), truncated=result["truncated"], unks_replaced=result["unks_replaced"])
    if "word_probabilities" in result:
        words = result["words"] + [constants.EOS_TOKEN] * (len(result["word_probabilities"]) - len(result["words"]))
        record.update(words=words, word_probabilities=_rounded(result["word_probabilities"]))
    if len(result.get("hypotheses", [])) > 1:
        record["nbest"] = [dict(translation=hypothesis["translation"], score=hypothesis["score"],
                                **_token_confidence(hypothesis)) for hypothesis in result["hypotheses"]]
    return record


def _token_confidence(hypothesis):
    """`mean_log_prob`, `tokens` (`</s>` included where it has a probability) and `token_probabilities` of a
    hypothesis; its `tokens` alone where the translator gave no probabilities (an older export)."""
    if "token_probabilities" not in hypothesis:
        return dict(tokens=hypothesis["tokens"])
    probabilities = hypothesis["token_probabilities"]
    tokens = hypothesis["tokens"] + [constants.EOS_TOKEN] * (len(probabilities) - len(hypothesis["tokens"]))
    return dict(mean_log_prob=hypothesis["mean_log_prob"], tokens=tokens, token_probabilities=_rounded(probabilities))


def _confidence(hypothesis):
    """The confidence values of a hypothesis that has them, rounded, for the `alignment` format."""
    names = ("token_probabilities", "mean_log_prob", "word_probabilities")
    return {name: _rounded(hypothesis[name]) if name != "mean_log_prob" else hypothesis[name]
            for name in names if name in hypothesis}


def _rounded(values):
    """A list of floats to 6 significant digits (a small probability keeps its digits)."""
    return [float(f"{value:.6g}") for value in values]


def word_view(result):
    """(source words, target words, alignment `[target + 1, source + 1]`, `</s>` included) of a
    `BatchTranslator.translate` result: the words a subword codec's pieces make, else its tokens (a token is
    a word)."""
    if "word_alignment" in result:
        return result["source_words"], result["words"], result["word_alignment"]
    return result["source_tokens"], result["tokens"], result["alignment"]


def _aligned_translation(hypothesis, words):
    """`target_tokens`, `alignment` and `hard_alignment` of one hypothesis of a source of `words` words."""
    alignment = np.asarray(hypothesis["alignment"], dtype=np.float64)  # [target + 1, source + 1]
    hard_alignment = []
    if words:
        for target_position in range(min(len(hypothesis["tokens"]), alignment.shape[0])):
            hard_alignment.append(f"{int(np.argmax(alignment[target_position, :words]))}-{target_position}")
    return dict(
        target_tokens=hypothesis["tokens"],
        alignment=np.round(alignment, 6).tolist(),
        hard_alignment=" ".join(hard_alignment),
    )


def nbest_line(index, translation, features, total):
    """One Moses n-best line; `features` maps a feature name to its float value, in order."""
    feature_text = " ".join(f"{name}= {value:.6f}" for name, value in features.items())
    return NBEST_SEPARATOR.join([str(index), translation, feature_text, f"{total:.6f}"]) + "\n"


def parse_nbest_line(line):
    """A Moses n-best line -> `(index, translation, features dict name -> float, total)`."""
    fields = line.rstrip("\n").split(NBEST_SEPARATOR)
    if len(fields) < 4:
        raise ValueError(f"not a Moses n-best line 'INDEX ||| TRANSLATION ||| FEATURES ||| TOTAL': {line!r}")
    index, translation, feature_text, total = fields[0], NBEST_SEPARATOR.join(fields[1:-2]), fields[-2], fields[-1]
    features, name = {}, None
    for item in feature_text.split():
        if item.endswith("="):
            name = item[:-1]
        elif name is not None:
            features[name] = float(item)
    return int(index), translation, features, float(total)
