"""Corpus scores of detokenized translations against raw references: sacreBLEU's BLEU, chrF, chrF++ and TER."""

import sacrebleu

# Name in metrics.json -> the sacreBLEU metric with its defaults (chrF++ is chrF with word bigrams).
METRICS = {
    "bleu": sacrebleu.BLEU,
    "chrf": sacrebleu.CHRF,
    "chrf_plus_plus": lambda: sacrebleu.CHRF(word_order=2),
    "ter": sacrebleu.TER,
}


def corpus_scores(hypotheses, references, names=tuple(METRICS)):
    """{name: score} and {name: sacreBLEU signature} of `names` (keys of `METRICS`).

    BLEU, chrF and chrF++ are higher-is-better (0-100); TER is an edit rate, lower is better. Every
    metric keeps sacreBLEU's defaults (BLEU's 13a tokenization, mixed case), so the signatures are those
    other toolkits report.

    Args:
        hypotheses: list of translations.
        references: list of references, one per translation.
        names: the metrics to compute.

    Returns:
        (scores, signatures): two dicts keyed by name.
    """
    scores, signatures = {}, {}
    for name in names:
        metric = METRICS[name]()
        scores[name] = metric.corpus_score(hypotheses, [references]).score
        signatures[name] = str(metric.get_signature())
    return scores, signatures
