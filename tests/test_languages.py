"""data_pipeline/languages.py: codes checked against ISO 639 in one line, names, scripts without spaces, and
sacreBLEU's tokenizer for a target."""

import pytest

from data_pipeline import languages


@pytest.mark.parametrize("code, name", [("en", "English"), ("de", "German"), ("cs", "Czech"), ("zh", "Chinese"),
                                        ("sw", "Swahili"), ("yue", "Yue Chinese"), ("cmn", "Mandarin Chinese")])
def test_codes_and_their_names(code, name):
    assert languages.check(code) == code
    assert languages.name(code) == name


@pytest.mark.parametrize("code", ["xx", "english", "EN", "", "e", "zzz", None, "de-DE"])
def test_a_code_that_names_no_language_is_refused_in_one_line_naming_the_field(code):
    with pytest.raises(ValueError, match=rf"^--source_language={code!r} is not a language code: .*e\.g\. en, de") as error:
        languages.check(code, "--source_language")
    assert "\n" not in str(error.value)


def test_a_three_letter_code_of_a_language_with_a_two_letter_one_says_which():
    with pytest.raises(ValueError, match=r"'deu' is not a language code \(write 'de'\)"):
        languages.check("deu")


@pytest.mark.parametrize("code, apart", [("en", True), ("de", True), ("cs", True), ("ru", True), ("zh", False),
                                         ("ja", False), ("ko", False), ("th", False), ("yue", False)])
def test_which_languages_have_moses_words(code, apart):
    assert languages.writes_words_apart(code) is apart
    if apart:
        assert languages.check_words_apart(code) == code
    else:
        with pytest.raises(ValueError, match=r"^--target_language='\w+': .* is written without spaces between words, "
                                             r"so it has no Moses words: build its data with --subwords=sentencepiece$"):
            languages.check_words_apart(code, "--target_language")


@pytest.mark.parametrize("code, tokenizer", [("zh", "zh"), ("ja", "ja-mecab"), ("ko", "ko-mecab"), ("de", "13a"),
                                             ("en", "13a"), ("cs", "13a")])
def test_bleu_tokenizer_is_sacrebleus_choice_for_the_target(code, tokenizer):
    assert languages.bleu_tokenizer(code) == tokenizer


def test_a_value_that_names_no_language_is_shown_as_written():
    assert languages.name_or_code("de") == "German"
    assert languages.name_or_code("xx") == "xx" and languages.name_or_code(None) == "None"
