"""The REST row ("instances") format's answer: one prediction per instance, each trimmed to its own length.

A batch's outputs are padded to its longest sentence: `tokens` with "" after `</s>`, `alignment` with rows and
columns of zeros, `target_ids` with 0 (the `<pad>` id). The columnar ("inputs") format keeps those tensors as
TF Serving gives them; the row format, which answers each sentence on its own, cuts each padded output to
the sentence's own lengths, so an instance's answer does not depend on the others of its request (or batch):

- a token output (`tokens`, `source_tokens`, `words`, `source_words`, `nbest_tokens`): up to its first "";
- an id output (`target_ids`, `nbest_target_ids`): without its trailing 0s;
- `token_log_probs`, `token_probabilities`: as long as `tokens`; `nbest_token_probabilities` as each
  hypothesis's `nbest_tokens`; `word_probabilities` as `words`;
- `alignment` `[tgt_len, src_len]`: as many rows as the target tokens (or ids) and columns as
  `source_tokens` (without `source_tokens`, as `translate_ids` answers: up to the last column any row
  attends to); `nbest_alignment` likewise per hypothesis; `word_alignment` as `words` by `source_words`.
Other outputs are unchanged.
"""

import numpy as np

_TOKEN_OUTPUTS = ("tokens", "source_tokens", "words", "source_words", "nbest_tokens")
_ID_OUTPUTS = ("target_ids", "nbest_target_ids")


def to_json(array):
    """An output as JSON values: an array as nested lists (bytes as str), a scalar bytes (e.g. of
    `settings`) as str."""
    if isinstance(array, bytes):
        return array.decode("utf-8", errors="replace")
    if array.dtype == object:
        return np.vectorize(lambda item: item.decode("utf-8", errors="replace"), otypes=[object])(array).tolist()
    return array.tolist()


def _token_length(tokens):
    """Tokens before the first "" (padding) of one sentence's row."""
    tokens = list(tokens)
    return tokens.index(b"") if b"" in tokens else len(tokens)


def _id_length(ids):
    """Ids before the trailing 0s (`<pad>`) of one sentence's row."""
    nonzero = np.flatnonzero(np.asarray(ids))
    return int(nonzero[-1]) + 1 if nonzero.size else 0


def _attended_columns(alignment):
    """Columns up to the last one any row gives weight to."""
    attended = np.flatnonzero(np.asarray(alignment).any(axis=tuple(range(np.ndim(alignment) - 1))))
    return int(attended[-1]) + 1 if attended.size else 0


def trim_instance(outputs):
    """{output name: one instance's array} -> the same, each padded output cut to the instance's lengths."""
    trimmed = dict(outputs)
    for names, length in ((_TOKEN_OUTPUTS, _token_length), (_ID_OUTPUTS, _id_length)):
        for name in names:
            if name in outputs and np.ndim(outputs[name]) == 1:
                trimmed[name] = outputs[name][: length(outputs[name])]
            elif name in outputs:  # [hypotheses, length]: each hypothesis its own length
                trimmed[name] = [row[: length(row)] for row in outputs[name]]
    target = trimmed.get("tokens", trimmed.get("target_ids"))
    for name, tokens in (("token_log_probs", "tokens"), ("token_probabilities", "tokens"), ("word_probabilities", "words")):
        if name in outputs and tokens in trimmed:
            trimmed[name] = outputs[name][: len(trimmed[tokens])]
    if "nbest_token_probabilities" in outputs and "nbest_tokens" in trimmed:
        trimmed["nbest_token_probabilities"] = [row[: len(tokens)] for row, tokens in
                                                zip(outputs["nbest_token_probabilities"], trimmed["nbest_tokens"])]
    if "alignment" in outputs and target is not None:
        alignment = outputs["alignment"]
        columns = len(trimmed["source_tokens"]) if "source_tokens" in trimmed else _attended_columns(alignment)
        trimmed["alignment"] = alignment[: len(target), :columns]
    nbest_target = trimmed.get("nbest_tokens", trimmed.get("nbest_target_ids"))
    if "nbest_alignment" in outputs and nbest_target is not None:
        alignments = outputs["nbest_alignment"]
        columns = len(trimmed["source_tokens"]) if "source_tokens" in trimmed else _attended_columns(alignments)
        trimmed["nbest_alignment"] = [alignment[: len(tokens), :columns]
                                      for alignment, tokens in zip(alignments, nbest_target)]
    if "word_alignment" in outputs and "words" in trimmed and "source_words" in trimmed:
        trimmed["word_alignment"] = outputs["word_alignment"][: len(trimmed["words"]), : len(trimmed["source_words"])]
    return trimmed


def _json(value):
    """An output of one instance (array, list of arrays, bytes, number) as JSON values."""
    if isinstance(value, list):
        return [_json(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return to_json(value) if isinstance(value, (bytes, np.ndarray)) else value


def rows_of_outputs(outputs):
    """{output name: array of rows} -> TF Serving's `predictions`: a list of rows, each trimmed
    (`trim_instance`); a row is a dict of outputs, or the value itself when there is one output. ValueError
    for a scalar output (`settings`), which has no rows: TF Serving refuses it in this format too."""
    for name, value in outputs.items():
        if np.ndim(value) == 0:
            raise ValueError(f"Tensor name: {name} has no shape information; ask in the columnar format "
                             '("inputs")')
    rows = len(next(iter(outputs.values()))) if outputs else 0
    predictions = []
    for row in range(rows):
        instance = trim_instance({name: value[row] for name, value in outputs.items()})
        values = {name: _json(value) for name, value in instance.items()}
        predictions.append(next(iter(values.values())) if len(values) == 1 else values)
    return predictions
