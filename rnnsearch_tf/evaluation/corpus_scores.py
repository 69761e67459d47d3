"""Corpus scores of detokenized translations against raw references: sacreBLEU's BLEU, chrF, chrF++ and TER,
each as sacreBLEU scores text in the target language."""

import sacrebleu

from data_pipeline import languages


def bleu(target_language, sentence=False, lowercase=False):
    """sacreBLEU's BLEU of translations into `target_language`: the one place a BLEU is made.

    The tokenizer is `languages.bleu_tokenizer`'s: sacreBLEU's own for Chinese and its varieties ("zh"), Japanese
    ("ja-mecab") and Korean ("ko-mecab"), its character tokenizer ("char") for the other languages written
    without spaces (Thai, Lao, Khmer, Burmese ...), 13a for the rest; mixed case, or case-insensitive for a model
    that translates into lower-cased text (`TextCodec.lowercase`). Its signature names the tokenizer and the case
    ("case:lc"). A tokenizer whose packages are missing (MeCab) is a ValueError in one line (`scorers`).

    Args:
        target_language: the language code of the translations and references (`languages.check`).
        sentence: a BLEU of one sentence (effective order, as `sacrebleu.sentence_bleu`).
        lowercase: compare lower-cased text (the model's target codec lower-cases).
    """
    tokenizer = languages.bleu_tokenizer(languages.check(target_language, "target_language"))
    try:
        return sacrebleu.BLEU(tokenize=tokenizer, effective_order=sentence, lowercase=lowercase)
    except RuntimeError as error:  # sacreBLEU's ja-mecab / ko-mecab without MeCab, raised when it is made
        extra = languages.base_language(target_language)
        raise ValueError(f"target language {target_language!r}: BLEU's tokenizer {tokenizer} needs packages that "
                         f"are not installed: pip install 'rnnsearch-tf[{extra}]' (in a clone: pip install -e "
                         f"'.[{extra}]'; docs/data.md)") from error


def chrf(target_language, lowercase=False, word_order=0):
    """sacreBLEU's chrF (chrF++ with `word_order=2`): characters, the same for every language; lower-cased
    text as `bleu`."""
    return sacrebleu.CHRF(word_order=word_order, lowercase=lowercase)


def ter(target_language, lowercase=False):
    """sacreBLEU's TER of translations into `target_language`.

    Where sacreBLEU's BLEU has a tokenizer of its own for the language (Chinese, Japanese, Korean), TER
    normalizes with its Asian support, which splits CJK text into characters (it acts only on normalized text);
    where BLEU cuts characters ("char": Thai, Lao ...), which Asian support leaves whole, TER's words are the
    characters too ("tok:char" in its signature); without either a sentence written without spaces is one word.
    Else sacreBLEU's defaults, which compare lower-cased text whatever `lowercase` says (case:lc in every TER
    signature).
    """
    tokenizer = languages.bleu_tokenizer(target_language)
    asian = tokenizer not in (sacrebleu.BLEU.TOKENIZER_DEFAULT, "char")
    metric = sacrebleu.TER(normalized=asian, asian_support=asian)
    if tokenizer == "char":  # TER's words (lower-cased) cut into BLEU's characters
        words, characters = metric.tokenizer, sacrebleu.BLEU(tokenize="char").tokenizer
        metric.tokenizer = lambda text: characters(words(text))
        metric.tokenizer_signature = "char"
    return metric


# Name in metrics.json -> the sacreBLEU metric for a target language and case (chrF++ is chrF with word bigrams).
METRICS = {
    "bleu": lambda target_language, lowercase: bleu(target_language, lowercase=lowercase),
    "chrf": chrf,
    "chrf_plus_plus": lambda target_language, lowercase: chrf(target_language, lowercase, word_order=2),
    "ter": ter,
}


def scorers(target_language, lowercase=False, names=tuple(METRICS)):
    """{name: sacreBLEU metric} of `names` for translations into `target_language`; a ValueError in one line where
    one cannot be made (a language code it refuses, MeCab missing for a Japanese target: `bleu`). `train` and
    `evaluate` call it before any work, so that such a target stops them before a model folder is written or a
    test set decoded."""
    return {name: METRICS[name](target_language, lowercase) for name in names}


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
    for name, metric in scorers(target_language, lowercase, names).items():
        scores[name] = metric.corpus_score(hypotheses, [references]).score
        signatures[name] = str(metric.get_signature())
    return scores, signatures
