"""corpus_scores: BLEU, chrF, chrF++ and TER as sacreBLEU defines them for the target language, with their
signatures."""

import pytest
import sacrebleu

from rnnsearch_tf.evaluation.corpus_scores import METRICS, bleu, corpus_scores

REFERENCES = ["the cat sat on the mat", "a dog runs in the park"]
# Chinese is written without spaces: 13a sees one "word" per sentence (and its full stop).
CHINESE_REFERENCES = ["猫坐在毯子上。", "今天天气不错。"]
CHINESE_TRANSLATIONS = ["猫坐在垫子上。", "今天天气很好。"]


def test_a_perfect_translation_scores_100_and_no_edits():
    scores, signatures = corpus_scores(REFERENCES, REFERENCES, target_language="en")
    assert scores == pytest.approx({"bleu": 100.0, "chrf": 100.0, "chrf_plus_plus": 100.0, "ter": 0.0})
    assert sorted(signatures) == sorted(METRICS)
    assert "nw:0" in signatures["chrf"] and "nw:2" in signatures["chrf_plus_plus"]  # chrF++: word bigrams
    assert "tok:13a" in signatures["bleu"]


def test_ter_counts_a_block_shift_as_one_edit_and_chrf_plus_plus_counts_words_too():
    scores, _ = corpus_scores(["c d a b"], ["a b c d"], ["ter", "chrf", "chrf_plus_plus"], target_language="en")
    assert scores["ter"] == pytest.approx(25.0)  # one shift of "a b", over 4 reference words
    # Single-letter words: chrF sees only the characters' n-grams across the shift; chrF++ adds the four
    # matching words and one of three matching word bigrams.
    assert scores["chrf_plus_plus"] > scores["chrf"]


def test_only_the_metrics_asked_for():
    scores, signatures = corpus_scores(["the cat"], ["the cat"], ["bleu"], target_language="en")
    assert list(scores) == list(signatures) == ["bleu"]


def test_a_chinese_target_is_scored_with_sacrebleus_chinese_tokenizer():
    scores, signatures = corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language="zh")
    assert "tok:zh" in signatures["bleu"] and "asian:yes" in signatures["ter"] and "norm:yes" in signatures["ter"]
    assert scores["bleu"] == pytest.approx(
        sacrebleu.BLEU(tokenize="zh").corpus_score(CHINESE_TRANSLATIONS, [CHINESE_REFERENCES]).score)
    thirteen_a = corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language="en")[0]
    assert scores["bleu"] > 30 and thirteen_a["bleu"] == 0.0  # 13a: each sentence one unmatched word
    assert scores["ter"] < 30 and thirteen_a["ter"] == 100.0  # TER splits the characters apart too
    assert scores["chrf"] == thirteen_a["chrf"]  # chrF reads characters in any language


@pytest.mark.parametrize("language, tokenizer, asian", [
    ("ja", "tok:ja-mecab", "asian:yes"), ("ko", "tok:ko-mecab", "asian:yes"), ("de", "tok:13a", "asian:no"),
    ("cs", "tok:13a", "asian:no"), ("th", "tok:13a", "asian:no"),  # Thai: sacreBLEU has no tokenizer of its own
])
def test_every_signature_names_the_tokenizer_sacrebleu_gives_the_target_language(language, tokenizer, asian):
    _, signatures = corpus_scores(["Ein Hund läuft."], ["Der Hund läuft."], ["bleu", "ter"], target_language=language)
    assert tokenizer in signatures["bleu"] and asian in signatures["ter"]


def test_a_japanese_target_is_cut_into_words_by_mecab():
    translations, references = ["猫がマットの上に座った。"], ["猫がマットの上に座っていた。"]
    scores, signatures = corpus_scores(translations, references, ["bleu"], target_language="ja")
    assert "tok:ja-mecab" in signatures["bleu"]
    thirteen_a = corpus_scores(translations, references, ["bleu"], target_language="de")[0]
    assert scores["bleu"] > 30 and thirteen_a["bleu"] == 0.0  # 13a: the sentence is one word


@pytest.mark.parametrize("variety", ["cmn", "yue", "wuu", "nan", "hak", "gan"])
def test_a_chinese_variety_is_scored_as_chinese(variety):
    """An ISO 639-3 code of a Chinese variety: sacreBLEU knows only "zh", and gave 13a and TER without Asian
    support (each sentence one word)."""
    scores, signatures = corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language=variety)
    assert (scores, signatures) == corpus_scores(CHINESE_TRANSLATIONS, CHINESE_REFERENCES, target_language="zh")
    assert "tok:zh" in signatures["bleu"] and "asian:yes" in signatures["ter"]
    assert bleu(variety, sentence=True).sentence_score(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]]).score == (
        sacrebleu.sentence_bleu(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]], tokenize="zh").score)


def test_a_german_target_keeps_13a():
    translations, references = ["Der Hund läuft im Park."], ["Der Hund rennt im Park."]
    scores, signatures = corpus_scores(translations, references, target_language="de")
    assert "tok:13a" in signatures["bleu"] and "asian:no" in signatures["ter"] and "norm:no" in signatures["ter"]
    assert scores["bleu"] == pytest.approx(sacrebleu.corpus_bleu(translations, [references]).score)
    assert scores["ter"] == pytest.approx(sacrebleu.corpus_ter(translations, [references]).score)


def test_a_sentence_bleu_is_sacrebleus_with_the_targets_tokenizer():
    assert bleu("en", sentence=True).sentence_score("the cat", ["the cat sat"]).score == pytest.approx(
        sacrebleu.sentence_bleu("the cat", ["the cat sat"]).score)
    chinese = bleu("zh", sentence=True).sentence_score(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]])
    assert chinese.score == pytest.approx(
        sacrebleu.sentence_bleu(CHINESE_TRANSLATIONS[0], [CHINESE_REFERENCES[0]], tokenize="zh").score)


def test_a_target_language_that_is_not_a_code_is_refused():
    with pytest.raises(ValueError, match="target_language='french' is not a language code"):
        corpus_scores(["le chat"], ["le chat"], target_language="french")


def test_a_lowercasing_model_is_scored_case_insensitively_and_its_signatures_say_so():
    translations, references = ["the cat sat on the mat"], ["The Cat sat on the mat"]
    cased, _ = corpus_scores(translations, references, target_language="en")
    scores, signatures = corpus_scores(translations, references, target_language="en", lowercase=True)
    assert scores == pytest.approx({"bleu": 100.0, "chrf": 100.0, "chrf_plus_plus": 100.0, "ter": 0.0})
    assert cased["bleu"] < 70 and cased["chrf"] < 100 and cased["ter"] == 0.0  # sacreBLEU's TER ignores case anyway
    assert "case:lc" in signatures["bleu"] and "case:lc" in signatures["chrf"] and "case:lc" in signatures["ter"]
    assert bleu("en", sentence=True, lowercase=True).sentence_score(translations[0], references).score == pytest.approx(
        100.0)
