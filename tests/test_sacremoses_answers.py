"""data_pipeline.sacremoses_answers: what sacremoses says of a language, kept in the user's cache and read back the
same, a broken file asked again, and a new process that finds them imports no sacremoses."""

import importlib.metadata
import json
import os
import pathlib

import pytest

from conftest import fresh_python
from data_pipeline import nonbreaking_prefixes, sacremoses_answers
from data_pipeline.moses_tokenizer import MosesRules

LANGUAGES = ("en", "fr", "de", "sw")  # sacremoses has no prefix file for Swahili: the English one


def _clear():
    for cached in (sacremoses_answers.answers, nonbreaking_prefixes.prefixes, MosesRules.of):
        cached.cache_clear()


@pytest.fixture
def fresh(monkeypatch):
    """A function giving {language: (answers, prefixes)} as a new process with the user cache `cache_home` would."""

    def asked(cache_home):
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
        _clear()
        return {language: (sacremoses_answers.answers(language), nonbreaking_prefixes.prefixes(language))
                for language in LANGUAGES}

    yield asked
    _clear()


def test_answers_kept_in_the_user_cache_are_read_back_the_same(fresh, tmp_path):
    asked = fresh(tmp_path)
    files = {language: pathlib.Path(sacremoses_answers.cache_file(language)) for language in LANGUAGES}
    assert all(path.is_file() and tmp_path in path.parents for path in files.values())
    assert f"/{importlib.metadata.version('sacremoses')}/" in str(files["en"])  # another sacremoses, another file
    assert set(asked["en"][0]) == set(sacremoses_answers.FIELDS)
    assert {"Mr", "Dr"} <= asked["en"][1][0] and "No" in asked["en"][1][1] and "z.B" in asked["de"][1][0]
    assert asked["sw"][1] == asked["en"][1]
    assert fresh(tmp_path) == asked  # read back
    files["de"].write_text('{"nonbreaking": ["Mr"]}', encoding="utf-8")  # a broken file is asked again
    files["fr"].write_text("{", encoding="utf-8")
    assert fresh(tmp_path) == asked
    assert json.loads(files["de"].read_text(encoding="utf-8")) == asked["de"][0]


def test_a_cache_that_cannot_be_written_loses_nothing(fresh, tmp_path):
    expected = fresh(tmp_path / "writable")
    (tmp_path / "a-file").write_text("", encoding="utf-8")  # no folder can be made below it, not even by root
    assert fresh(tmp_path / "a-file") == expected
    assert not os.path.exists(sacremoses_answers.cache_file("en"))


def test_rules_come_from_the_answers(fresh, tmp_path):
    fresh(tmp_path)
    english, french = MosesRules.of("en"), MosesRules.of("fr")
    assert english.nonbreaking == nonbreaking_prefixes.prefixes("en")[0] and english.english_contractions
    assert french.elisions == sacremoses_answers.answers("fr")["elisions"] is True
    assert english.possessive_apostrophes == sacremoses_answers.answers("en")["possessive_apostrophes"] is True
    assert MosesRules.of("cs").low_high_quotes == sacremoses_answers.answers("cs")["low_high_quotes"] is True
    assert english.cjk_ranges == tuple(map(tuple, sacremoses_answers.answers("en")["cjk_ranges"])) != ()


def test_a_new_process_that_finds_the_answers_imports_no_sacremoses(tmp_path):
    script = (f"import os, sys; os.environ['XDG_CACHE_HOME'] = {str(tmp_path)!r}; "
              "from data_pipeline import MosesTokenizer; from data_pipeline.sentence_splitter import SentenceSplitter; "
              "import tensorflow as tf; "
              "print(*MosesTokenizer('de').tokenize(tf.constant(['Er sagt: z.B. nicht!'])).to_list()[0], "
              "len(SentenceSplitter('de').split('Er kam z.B. spät. Sie ging.')), 'sacremoses' in sys.modules)")
    first, second = fresh_python(script), fresh_python(script)
    assert first[-1] == "True" and second[-1] == "False"
    assert first[:-1] == second[:-1] == ["b'Er'", "b'sagt'", "b':'", "b'z.B.'", "b'nicht'", "b'!'", "2"]
