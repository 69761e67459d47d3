"""Paragraphs in, paragraphs out: each line split into sentences, all sentences translated as one batch."""

from data_pipeline import languages
from data_pipeline.sentence_splitter import SentenceSplitter


class ParagraphTranslator:
    """Translates lines of several sentences through a `BatchTranslator`, sentence by sentence.

    Each line is split into sentences by Moses' sentence splitter's rules (`SentenceSplitter`, with the
    source language's non-breaking prefixes); the sentences of all lines are translated together (one
    `BatchTranslator.translate` call: length-sorted batches across lines) and each line's translations are
    joined in order as the target language writes sentences (`languages.join_sentences`: a space, nothing after
    a Chinese or Japanese sentence's full stop). A model trained on single sentences translates a paragraph as well as
    it translates its sentences; given the whole line it often stops after one sentence's worth.

    Args:
        batch_translator: the `BatchTranslator` translating the sentences.
        source_language: the source's language code, whose non-breaking prefixes (sacremoses' data) the
            splitter uses; default the translator's.

    Example:
    >>> paragraphs = ParagraphTranslator(BatchTranslator.from_model_dir("models/rnnsearch50"))
    >>> [result["translation"] for result in paragraphs.translate(paragraphs.split(["Hello. Thank you."]))]
    ['Bonjour. Merci.']
    """

    def __init__(self, batch_translator, source_language=None):
        source_language = source_language or batch_translator.source_language
        if source_language is None:
            raise ValueError(f"the settings of {batch_translator.loaded_from or 'the translator'} name no "
                             "source_language: give it to ParagraphTranslator")
        self.batch_translator = batch_translator
        self.splitter = SentenceSplitter(source_language)
        self.target_language = batch_translator.target_language  # None where settings lack it: a space

    def split(self, lines):
        """Each line's sentences: a list of lists of str (an empty list for a blank line)."""
        return [self.splitter.split(line) for line in lines]

    def lines_of_several_sentences(self, lines):
        """The numbers (from 1) of the lines that hold more than one sentence by the splitter's rules."""
        return [number for number, sentences in enumerate(self.split(lines), 1) if len(sentences) > 1]

    def translate(self, split_lines, progress=None):
        """Translates the sentences of `split(lines)` and joins each line's translations.

        Args:
            split_lines: list of lists of str, the sentences of each line (`split`).
            progress: optional callable, called with the number of sentences done after each batch.

        Returns:
            list of dicts, one per line in order, with the keys of `BatchTranslator.translate`'s results
            for the whole line: `translation` and `searched_translation` (the sentences' joined,
            `languages.join_sentences`), `score` (their sum: log-probabilities add across sentences),
            `source_tokens` and `tokens` (concatenated), `truncated` (any sentence cut), `unks_replaced`
            (summed), `nbest` (the joined best only); no `alignment`, but `sentences`: the result of each
            sentence, with its own `alignment` matrix (the `alignment` output format writes one per sentence).
        """
        flat = [sentence for sentences in split_lines for sentence in sentences]
        results = self.batch_translator.translate(flat, progress)
        joined, start = [], 0
        for sentences in split_lines:
            joined.append(_joined(results[start : start + len(sentences)], self.target_language))
            start += len(sentences)
        return joined


def _joined(results, target_language):
    """One line's result made of its sentences' results (see `ParagraphTranslator.translate`)."""
    translation = languages.join_sentences([result["translation"] for result in results], target_language)
    score = float(sum(result["score"] for result in results))
    return dict(
        translation=translation,
        searched_translation=languages.join_sentences([result["searched_translation"] for result in results],
                                                      target_language),
        score=score,
        source_tokens=[token for result in results for token in result["source_tokens"]],
        tokens=[token for result in results for token in result["tokens"]],
        truncated=any(result["truncated"] for result in results),
        unks_replaced=sum(result["unks_replaced"] for result in results),
        nbest=[(translation, score)],
        sentences=results,
    )

