"""data_pipeline/languages.py: codes checked against ISO 639 in one line, names, scripts without spaces, and
sacreBLEU's tokenizer for a target; what pycountry says of a code kept in the user's cache and read back the same."""

import json

import pytest

from conftest import fresh_python
from data_pipeline import languages


@pytest.mark.parametrize("code, name", [("en", "English"), ("de", "German"), ("cs", "Czech"), ("zh", "Chinese"),
                                        ("sw", "Swahili"), ("yue", "Yue Chinese"), ("cmn", "Mandarin Chinese")])
def test_codes_and_their_names(code, name):
    assert languages.check(code) == code
    assert languages.name(code) == name


@pytest.mark.parametrize("code", ["xx", "english", "", "e", "zzz", None])
def test_a_code_that_names_no_language_is_refused_in_one_line_naming_the_field(code):
    with pytest.raises(ValueError, match=rf"^--source_language={code!r} is not a language code: .*e\.g\. en, de") as error:
        languages.check(code, "--source_language")
    assert "\n" not in str(error.value)


def test_a_three_letter_code_of_a_language_with_a_two_letter_one_says_which():
    with pytest.raises(ValueError, match=r"'deu' is not a language code \(write 'de'\)"):
        languages.check("deu")


@pytest.mark.parametrize("tag, code", [
    ("zh-CN", "zh"), ("zh_Hans", "zh"), ("pt-BR", "pt"), ("sr-Latn", "sr"), ("DE", "de"), ("EN", "en"),
    ("de-DE", "de"), ("en_GB", "en"), ("cmn-Hans-CN", "cmn"),  # a tag's language subtag, lower-cased
    ("ger", "de"), ("fre", "fr"), ("cze", "cs"), ("chi", "zh"), ("GER", "de"), ("deu-DE", "de"),  # ISO 639-2/B, /T
])
def test_a_tag_people_type_is_refused_with_the_code_to_write(tag, code):
    """Tags as locales and other tools write them name no code here (a region or script is recorded nowhere), but
    the one error line says what to write instead; that code is itself accepted."""
    with pytest.raises(ValueError, match=rf"^--target_language={tag!r} is not a language code \(write {code!r}\): "
                                         r"give an ISO 639-1 code, .*e\.g\. en, de") as error:
        languages.check(tag, "--target_language")
    assert "\n" not in str(error.value) and languages.check(code) == code


@pytest.mark.parametrize("first, second, same", [
    ("zh", "cmn", True), ("cmn", "zh", True), ("yue", "zh", True), ("ekk", "et", True), ("de", "de", True),
    ("de", "en", False), ("zh", "ja", False), (None, None, True), (None, "zh", False), ("xx", "zh", False),
])
def test_codes_agree_by_their_base_language(first, second, same):
    """Where two codes must agree (a corpus and a flag, a copied vocabulary and a corpus), a variety is its
    language, as it is for its rules: the docs' "cmn follows zh"."""
    assert languages.same_language(first, second) is same


def test_a_pair_agrees_side_by_side():
    assert languages.same_pair(("cmn", "en"), ("zh", "en"))
    assert not languages.same_pair(("zh", "en"), ("en", "zh")) and not languages.same_pair(("zh", "en"), ("ja", "en"))
    assert not languages.same_pair(("zh", "en"), ("zh",))


@pytest.mark.parametrize("code, apart", [("en", True), ("de", True), ("cs", True), ("ru", True), ("zh", False),
                                         ("ja", False), ("ko", False), ("th", False), ("yue", False), ("cmn", False),
                                         ("gan", False), ("arz", True), ("gsw", True)])
def test_which_languages_have_moses_words(code, apart):
    assert languages.writes_words_apart(code) is apart
    if apart:
        assert languages.check_words_apart(code) == code
    else:
        with pytest.raises(ValueError, match=r"^--target_language='\w+': .* is written without spaces between words, "
                                             r"so it has no Moses words: build its data with --subwords=sentencepiece$"):
            languages.check_words_apart(code, "--target_language")


@pytest.mark.parametrize("code, tokenizer", [("zh", "zh"), ("ja", "ja-mecab"), ("ko", "ko-mecab"), ("de", "13a"),
                                             ("en", "13a"), ("cs", "13a"), ("cmn", "zh"), ("yue", "zh"),
                                             ("wuu", "zh"), ("nan", "zh"), ("hak", "zh"), ("arz", "13a"),
                                             ("th", "char"), ("lo", "char"), ("km", "char"), ("my", "char"),
                                             ("bo", "char"), ("dz", "char")])
def test_bleu_tokenizer_is_sacrebleus_choice_for_the_target(code, tokenizer):
    assert languages.bleu_tokenizer(code) == tokenizer


def test_every_variety_iso_names_after_a_language_follows_its_rules():
    """ISO 639-3's inverted names ("Chinese, Mandarin") say whose variety a code is; sacreBLEU knows only "zh"."""
    import pycountry

    chinese = [entry.alpha_3 for entry in pycountry.languages
               if getattr(entry, "inverted_name", "").startswith("Chinese, ")]
    assert {"cmn", "yue", "wuu", "nan", "hak"} < set(chinese)
    assert {code: languages.base_language(code) for code in chinese} == dict.fromkeys(chinese, "zh")
    assert languages.base_language("arz") == "ar" and languages.base_language("de") == "de"
    assert languages.base_language("csl") == "csl"  # Chinese Sign Language: no variety of Chinese by its name


@pytest.mark.parametrize("code, sentences, text", [
    ("zh", ["为什么是我？", "我一无所知。"], "为什么是我？我一无所知。"),
    ("cmn", ["。", "。", "。"], "。。。"),
    ("ja", ["はい。", "", "いいえ。"], "はい。いいえ。"),
    ("zh", ["他说OK", "好。"], "他说OK 好。"),  # after a Latin letter, a space as in the text around it
    ("ko", ["고맙습니다.", "안녕히 가세요."], "고맙습니다. 안녕히 가세요."),  # Korean leaves a space between sentences
    ("th", ["สวัสดี", "ขอบคุณ"], "สวัสดี ขอบคุณ"),  # so does Thai, which ends a sentence with a space
    ("en", ["Yes.", "No 。"], "Yes. No 。"),
    (None, ["为什么是我？", "我一无所知。"], "为什么是我？ 我一无所知。"),
])
def test_sentences_are_joined_as_their_language_writes_them(code, sentences, text):
    assert languages.join_sentences(sentences, code) == text


def test_counting_unit():
    assert [languages.counting_unit(code) for code in ("en", "zh", "yue")] == ["Moses tokens", "characters",
                                                                             "characters"]


def test_a_value_that_names_no_language_is_shown_as_written():
    assert languages.name_or_code("de") == "German"
    assert languages.name_or_code("xx") == "xx" and languages.name_or_code(None) == "None"


@pytest.fixture
def cache_home(monkeypatch, tmp_path):
    """An empty user cache, and `languages`' answers forgotten before and after the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    languages._facts.cache_clear()
    yield tmp_path
    languages._facts.cache_clear()


def test_what_pycountry_says_is_kept_in_the_user_cache_and_read_back_the_same(cache_home):
    codes = ("de", "yue", "deu", "xx")
    asked = [(languages.why_not(code), languages.name_or_code(code)) for code in codes]
    files = sorted(cache_home.rglob("*.json"))
    assert [path.name for path in files] == sorted(f"{code}.json" for code in codes)
    assert json.loads((files[0].parent / "deu.json").read_text(encoding="utf-8")) == {
        "name": None, "written_as": "de", "variety_of": None}
    languages._facts.cache_clear()
    assert [(languages.why_not(code), languages.name_or_code(code)) for code in codes] == asked  # read back
    (files[0].parent / "de.json").write_text('{"name": "Deutsch"}', encoding="utf-8")  # a broken file is asked again
    languages._facts.cache_clear()
    assert languages.name("de") == "German"
    assert languages.why_not("EN") is not None and languages.why_not(None) is not None  # never a file name
    assert len(list(cache_home.rglob("*.json"))) == len(codes)


def test_a_new_process_that_finds_the_answers_imports_no_pycountry(tmp_path):
    script = (f"import os, sys; os.environ['XDG_CACHE_HOME'] = {str(tmp_path)!r}; "
              "from data_pipeline import languages; "
              "print(languages.name('de'), languages.check('yue'), 'pycountry' in sys.modules)")
    first, second = fresh_python(script), fresh_python(script)
    assert first == ["German", "yue", "True"] and second == ["German", "yue", "False"]
