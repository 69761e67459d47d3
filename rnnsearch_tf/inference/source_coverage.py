"""Warns when the input looks like another language than the one a model was trained on."""

from data_pipeline import languages
from data_pipeline.constants import RESERVED_TOKENS, UNK_TOKEN
from data_pipeline.vocabulary import Vocabulary

# The input's share of unknown source tokens may exceed the training data's by this much before a warning.
OOV_MARGIN = 0.10
# ... and hold at least this many unknown tokens: a short sentence with a name or two is no sign of a language.
MIN_UNKNOWN_TOKENS = 3


def training_oov_rate(vocabulary_file):
    """Share of the training data's running source tokens outside the vocabulary (its `<unk>` count)."""
    counts = dict(Vocabulary.read_entries(vocabulary_file))
    words = sum(count for token, count in counts.items() if token not in RESERVED_TOKENS)
    unknown = counts.get(UNK_TOKEN, 0)
    return unknown / (words + unknown) if words + unknown else 0.0, set(counts) - set(RESERVED_TOKENS)


def oov_warning(results, source_codec, target_language=None):
    """A warning line when the translated sources' unknown-token share is far above the training data's
    (by `OOV_MARGIN`, over at least `MIN_UNKNOWN_TOKENS` unknown tokens), naming the model's languages
    (`languages.name`): "is the input German, the model's source language, and not English?".

    Args:
        results: `BatchTranslator.translate` results (their `source_tokens`).
        source_codec: the model's source `TextCodec`: its vocabulary's `<unk>` counts the training tokens
            outside it, its `language` is named; a codec without `<unk>` (subwords) gets no warning.
        target_language: the model's target language code, named as what the input may be instead; None
            where it is not known (the warning says "the reference side").

    Returns:
        the warning (str), or None when the input looks like the training data.
    """
    if not source_codec.has_unknown:
        return None
    trained_rate, vocabulary = training_oov_rate(source_codec.vocabulary.vocabulary_file)
    tokens = [token for result in results for token in result["source_tokens"]]
    if not tokens:
        return None
    unknown = sum(token not in vocabulary for token in tokens)
    rate = unknown / len(tokens)
    if unknown < MIN_UNKNOWN_TOKENS or rate <= trained_rate + OOV_MARGIN:
        return None
    other_side = "the reference side" if target_language is None else languages.name(target_language)
    return (
        f"warning: {100 * rate:.1f}% of the source tokens are outside the model's vocabulary "
        f"({100 * trained_rate:.1f}% in its training data): is the input {languages.name(source_codec.language)}, "
        f"the model's source language, and not {other_side}?"
    )
