"""Corpus scores of detokenized translations against raw references: sacreBLEU's BLEU, chrF, chrF++ and TER,
each as sacreBLEU scores text in the target language."""

import sacrebleu

from data_pipeline import languages


def bleu(target_language, sentence=False, lowercase=False):
    """sacreBLEU's BLEU of translations into `target_language`: the one place a BLEU is made.

    sacreBLEU picks the tokenizer for the language (`trg_lang`: `languages.base_language`, which sacreBLEU knows
    where `target_language` is a variety such as "cmn" or "yue"; `languages.bleu_tokenizer`): its own for
    Chinese ("zh"), Japanese ("ja-mecab") and Korean ("ko-mecab"), 13a for the rest; mixed case, or
    case-insensitive for a model that translates into lower-cased text (`TextCodec.lowercase`). Its
    signature names the tokenizer and the case ("case:lc").

    Args:
        target_language: the language code of the translations and references (`languages.check`).
        sentence: a BLEU of one sentence (effective order, as `sacrebleu.sentence_bleu`).
        lowercase: compare lower-cased text (the model's target codec lower-cases).
    """
    return sacrebleu.BLEU(trg_lang=languages.base_language(languages.check(target_language, "target_language")),
                          effective_order=sentence, lowercase=lowercase)


def chrf(target_language, lowercase=False, word_order=0):
    """sacreBLEU's chrF (chrF++ with `word_order=2`): characters, the same for every language; lower-cased
    text as `bleu`."""
    return sacrebleu.CHRF(word_order=word_order, lowercase=lowercase)


def ter(target_language, lowercase=False):
    """sacreBLEU's TER of translations into `target_language`.

    Where sacreBLEU's BLEU has a tokenizer of its own for the language (not 13a: Chinese, Japanese, Korean),
    TER normalizes with its Asian support, which splits CJK text into characters (it acts only on normalized
    text); without it a sentence written without spaces is one word. Else sacreBLEU's defaults, which compare
    lower-cased text whatever `lowercase` says (case:lc in every TER signature).
    """
    own_tokenizer = languages.bleu_tokenizer(target_language) != sacrebleu.BLEU.TOKENIZER_DEFAULT
    return sacrebleu.TER(normalized=own_tokenizer, asian_support=own_tokenizer)


# Name in metrics.json -> the sacreBLEU metric for a target language and case (chrF++ is chrF with word bigrams).
METRICS = {
    "bleu": lambda target_language, lowercase: bleu(target_language, lowercase=lowercase),
    "chrf": chrf,
    "chrf_plus_plus": lambda target_language, lowercase: chrf(target_language, lowercase, word_order=2),
    "ter": ter,
}


def corpus_scores(hypotheses, references, names=tuple(METRICS), *, target_language, lowercase=False):
    """{name: score} and {name: sacreBLEU signature} of `names` (keys of `METRICS`).

    BLEU, chrF and chrF++ are higher-is-better (0-100); TER is an edit rate, lower is better. Every
    metric keeps sacreBLEU's defaults for the target language (BLEU's tokenizer: `bleu`; TER: `ter`),
    so the signatures are those other toolkits report.

    Args:
        hypotheses: list of translations.
        references: list of references, one per translation.
        names: the metrics to compute.
        target_language: the language code of the translations (a model's target codec's `language`).
        lowercase: score lower-cased text (a model's target codec's `lowercase`; sacreBLEU's "case:lc").

    Returns:
        (scores, signatures): two dicts keyed by name.
    """
    scores, signatures = {}, {}
    for name in names:
        metric = METRICS[name](target_language, lowercase)
        scores[name] = metric.corpus_score(hypotheses, [references]).score
        signatures[name] = str(metric.get_signature())
    return scores, signatures
