"""The output formats of `python -m rnnsearch_tf.translate` and the Moses n-best format `score` rescores.

- `text`: one detokenized translation per input line (after `<unk>` replacement when asked).
- `nbest`: the Moses n-best format, `num_hypotheses` lines per input line, best first:
  `INDEX ||| TRANSLATION ||| beam_score= SCORE ||| SCORE`, INDEX the 0-based input line (Moses' own lists, which
  `score --nbest` rescores, may give a feature several values, `TranslationModel0= -1.5 -2.5`, and add a fifth
  field, the word alignment, `||| 0-0 1-1`: `parse_nbest_line` keeps both). Each
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
  `</s>`'s): the `json` format and alignments. A record (a sentence's, of a split line) searched over a vocabulary
  shortlist ends with `shortlist: true` (in the `json` format too): its score and probabilities are then the
  model's renormalised over the shortlist's words (`--noshortlist`, or `rnnsearch score`, give the model's own).
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
import re

import numpy as np

from data_pipeline import constants

FORMATS = ("text", "nbest", "alignment", "json")
NBEST_SEPARATOR = " ||| "


def format_translation(index, result, output_format):
    """The output lines (each ending in "\\n") of one `BatchTranslator.translate` result."""
    if output_format == "text":
        return result["translation"] + "\n"
    if output_format == "nbest":
        return "".join(nbest_line(index, text, {"beam_score": [score]}, score) for text, score in result["nbest"])
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
        **_over_shortlist(result),
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
    record.update(_token_confidence(result), truncated=result["truncated"], unks_replaced=result["unks_replaced"],
                  **_over_shortlist(result))
    if "word_probabilities" in result:
        words = result["words"] + [constants.EOS_TOKEN] * (len(result["word_probabilities"]) - len(result["words"]))
        record.update(words=words, word_probabilities=_rounded(result["word_probabilities"]))
    if len(result.get("hypotheses", [])) > 1:
        record["nbest"] = [dict(translation=hypothesis["translation"], score=hypothesis["score"],
                                **_token_confidence(hypothesis)) for hypothesis in result["hypotheses"]]
    return record


def _over_shortlist(result):
    """`{"shortlist": True}` where the result was searched over a vocabulary shortlist (its scores and
    probabilities renormalised over it), else nothing."""
    return {"shortlist": True} if result.get("shortlist") else {}


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


def nbest_line(index, translation, features, total, alignment=None):
    """One Moses n-best line; `features` maps a feature name to its list of float values, in order;
    `alignment`, the fifth field of a Moses list (its word alignment), is written as given when not None."""
    feature_text = " ".join(f"{name}= " + " ".join(f"{value:.6f}" for value in values)
                            for name, values in features.items())
    fields = [str(index), translation, feature_text, f"{total:.6f}"]
    return NBEST_SEPARATOR.join(fields + ([] if alignment is None else [alignment])) + "\n"


def parse_nbest_line(line):
    """A Moses n-best line `INDEX ||| TRANSLATION ||| FEATURES ||| TOTAL [||| ALIGNMENT]` -> `(index, translation,
    features, total, alignment)`.

    `features` maps each feature name (`LM0=` without its "=") to the list of its float values, in order (a
    Moses feature may have several: `TranslationModel0= -1.5 -2.5 -3.5 -4.5`). The total is a number, so the
    last field of a line of five fields or more that is not a number is the word alignment Moses adds
    (`0-0 1-1`), returned as written (None where absent); a translation may itself hold " ||| ". Raises
    `ValueError` saying what is wrong (too few fields, an index that is not a whole number, a total or feature
    value that is not a number, a value before any feature name, a feature without values).
    """
    text = line.rstrip("\n")
    fields, alignment = text.split(NBEST_SEPARATOR), None
    if len(fields) >= 5 and not _is_number(fields[-1]):
        alignment, fields = fields[-1], fields[:-1]
    if len(fields) < 4:
        raise ValueError(f"not a Moses n-best line 'INDEX ||| TRANSLATION ||| FEATURES ||| TOTAL [||| ALIGNMENT]': "
                         f"{text!r}")
    index, translation, feature_text, total = fields[0], NBEST_SEPARATOR.join(fields[1:-2]), fields[-2], fields[-1]
    if not re.fullmatch(r"[0-9]+", index.strip()):
        raise ValueError(f"the index {index!r} is not a whole number (the 0-based input line)")
    if not _is_number(total):
        raise ValueError(f"the total {total!r} is not a number")
    return int(index), translation, _features(feature_text), float(total), alignment


def parse_nbest_lines(lines, name):
    """`{line number (from 1): parse_nbest_line entry}` of the lines (str, without their line ends) of the n-best
    list `name` (a file's name, for messages), in order, blank lines left out; a malformed line raises
    `ValueError` naming `name` and the line's number, as a bad phrase-table line is named."""
    entries = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entries[number] = parse_nbest_line(line)
        except ValueError as error:
            raise ValueError(f"{name}:{number}: {error}") from None
    return entries


def _features(feature_text):
    """`{name: [float values]}` of the features field of a Moses n-best line (`name= value value ...`)."""
    features, name = {}, None
    for item in feature_text.split():
        if item.endswith("="):
            name = item[:-1]
            features.setdefault(name, [])
        elif name is None:
            raise ValueError(f"the feature value {item!r} has no name before it ('NAME= VALUE ...')")
        elif not _is_number(item):
            raise ValueError(f"the value {item!r} of feature {name}= is not a number")
        else:
            features[name].append(float(item))
    empty = [name for name, values in features.items() if not values]
    if empty:
        raise ValueError(f"the feature {empty[0]}= has no value")
    return features


def _is_number(text):
    """Whether `text` is a float as Moses writes one (spaces around it allowed)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
