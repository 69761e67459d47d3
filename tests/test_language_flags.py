"""rnnsearch_tf/cli/language_flags.py: --source_language and --target_language checked when parsed (a tag people
type refused with the code to write), and compared with a registered corpus's languages by base language."""

import pytest
from absl import flags

from data_pipeline import corpus_registry
from rnnsearch_tf.cli import language_flags


def _holders(*argv):
    """The two language FlagHolders of a fresh flag set, parsed from `argv` (absl's ValidationError as a
    flags.Error where a value is refused)."""
    values = flags.FlagValues()
    holders = tuple(flags.DEFINE_string(f"{side}_language", None, "", flag_values=values)
                    for side in ("source", "target"))
    for holder in holders:
        flags.register_validator(holder.name, language_flags._checked, flag_values=values)
    values(["command", *argv])
    return holders


def test_a_tag_is_refused_at_parsing_with_the_code_to_write():
    with pytest.raises(flags.IllegalFlagValueError, match=r"--source_language=zh-CN: not a language code "
                                                          r"\(write 'zh'\)"):
        _holders("--source_language=zh-CN")
    with pytest.raises(flags.IllegalFlagValueError, match=r"--target_language=ger: not a language code "
                                                          r"\(write 'de'\)"):
        _holders("--target_language=ger")


@pytest.mark.parametrize("corpus, argv", [
    ("tatoeba_zhen", ("--source_language=cmn",)),  # Mandarin is the corpus's zh (docs/data.md: cmn follows zh)
    ("tatoeba_enzh", ("--source_language=en", "--target_language=cmn")),
    ("multi30k_deen", ("--source_language=de",)),
    ("multi30k_deen", ()),
])
def test_a_flag_of_the_corpuss_language_agrees(corpus, argv):
    language_flags.check_agree(_holders(*argv), corpus_registry.get_corpus(corpus))


@pytest.mark.parametrize("corpus, argv, hint", [
    ("tatoeba_zhen", ("--source_language=fr",), "name a corpus of that pair (tatoeba_fren, multi30k_fren)"),
    ("multi30k_deen", ("--target_language=fr",), "name a corpus of that pair (multi30k_defr)"),
    ("tatoeba_zhen", ("--source_language=cmn", "--target_language=fr"),
     "no registered corpus is of that pair: give its text files"),
    ("multi30k_deen", ("--source_language=en",), "no registered corpus is of that pair: give its text files"),
])
def test_a_flag_of_another_language_is_refused_naming_the_registered_corpora_of_its_pair(corpus, argv, hint):
    refused = r"^--\w+_language=\w+ but corpus \w+'s is '\w+': leave the flag out, or "
    with pytest.raises(ValueError, match=refused) as error:
        language_flags.check_agree(_holders(*argv), corpus_registry.get_corpus(corpus))
    assert str(error.value).endswith(hint)
    named = str(error.value).partition("(")[2].rstrip(")").split(", ") if "(" in hint else []
    assert all(name in corpus_registry.CORPORA for name in named)  # only corpora that exist
