"""The scores of bench/language_pairs.py, apart from its flags so that tests import them: sacreBLEU with the
target's tokenizer, and the published Multi30k anchors' conventions."""

import sacrebleu

from data_pipeline import languages
from rnnsearch_tf.evaluation.corpus_scores import corpus_scores


def moses_lowercased(lines, language, normalize):
    """Lower-cased Moses tokens of `lines` joined by spaces (punctuation normalised first when `normalize`)."""
    import sacremoses

    tokenizer, normalizer = sacremoses.MosesTokenizer(lang=language), sacremoses.MosesPunctNormalizer(lang=language)
    return [" ".join(tokenizer.tokenize(normalizer.normalize(line) if normalize else line, escape=False)).lower()
            for line in lines]


def scores(hypotheses, references, language, lowercase=False):
    """sacreBLEU's BLEU (the language's tokenizer; case-insensitive for a lower-casing model, `lowercase`) and
    chrF with its signature, and the anchors' BLEU on lower-cased Moses tokens (none for a language without
    spaces, which has no Moses tokens)."""
    values, signatures = corpus_scores(hypotheses, references, ("bleu", "chrf"), target_language=language,
                                       lowercase=lowercase)
    anchors = {}
    if languages.writes_words_apart(language):
        for name, normalize in (("nmtpy", True), ("lowercased_moses", False)):
            tokens = [moses_lowercased(lines, language, normalize) for lines in (hypotheses, references)]
            anchors[name] = round(sacrebleu.BLEU(tokenize="none").corpus_score(tokens[0], [tokens[1]]).score, 2)
    return {"bleu": round(values["bleu"], 2), "chrf": round(values["chrf"], 2), "signature": signatures["bleu"],
            **anchors}
