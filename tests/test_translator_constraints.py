"""Translator.translate_constrained: terminology forced into raw-text translations, on tiny random-weight
models (RNNsearch, RNNencdec and their ensemble); a glossary's term outside the target vocabulary searched as
`<unk>` and written there."""

import numpy as np
import pytest
import tensorflow as tf

from helpers.serving_test_utils import SEARCH_OPTIONS, SENTENCES
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.glossary import Glossary, constraint_report
from rnnsearch_tf.inference.sentence_search import with_eos
from rnnsearch_tf.search.beam_search import BeamSearch

TEXT = SENTENCES + ["", "the cat"]


@pytest.fixture(scope="module")
def translators(tiny_translators):
    return tiny_translators


def _numpy(outputs):
    return {name: value.numpy() for name, value in outputs.items()}


def _tokens(outputs, row, name="tokens"):
    tokens = [token.decode("utf-8") for token in outputs[name][row]]
    return tokens[: tokens.index("</s>")] if "</s>" in tokens else []


def _holds(tokens, phrase):
    phrase = phrase.split()
    return any(tokens[start : start + len(phrase)] == phrase for start in range(len(tokens) - len(phrase) + 1))


@pytest.mark.parametrize("name", ["rnnsearch", "rnnencdec", "ensemble"])
def test_no_constraints_give_the_translation_of_translate(translators, name):
    translator = translators[name]
    free = _numpy(translator.translate(tf.constant(TEXT)))
    constrained = _numpy(translator.translate_constrained(tf.constant(TEXT), tf.constant([[""]] * len(TEXT))))
    assert sorted(constrained) == sorted(list(free) + ["constraints_met", "constraints_skipped"])
    for key, value in free.items():
        np.testing.assert_array_equal(constrained[key], value, err_msg=key)
    assert constrained["constraints_skipped"].all() and not constrained["constraints_met"].any()


@pytest.mark.parametrize("name", ["rnnsearch", "rnnencdec", "ensemble"])
def test_the_banked_search_without_constraints_is_the_model_s_beam_search(translators, name):
    """`translate_constrained` keeps the free pass's translations where no phrase is asked for: the test above
    checks that pass, `BeamSearch` itself. Here every sentence goes through the search under constraints
    (`constrained_pass`, the strategy `translate_constrained` uses) over the model's own state and step: with no
    phrase, one bank, it must give `BeamSearch`'s result bit for bit, alignments included. That `BeamSearch` keeps
    every sentence in its batch to the end, as the constrained pass does (`drop_finished=False`)."""
    translator = translators[name]
    search = translator.search  # SentenceSearch
    token_ids = translator.source_codec.lookup(translator.source_codec.tokenize(tf.constant(SENTENCES)))
    state = search.model.encode(with_eos(token_ids))
    maximum_lengths = search.search_config.maximum_target_length(tf.cast(token_ids.row_lengths(), tf.int32))
    constrained = search.search_config.constrained_strategy(search.model.symbols_to_logits_fn)
    beam_search = BeamSearch(search.model.symbols_to_logits_fn, constrained.beam_size, constrained.num_hypotheses,
                             drop_finished=False, early_stopping=constrained.early_stopping,
                             length_normalization=constrained.length_normalization,
                             length_penalty_alpha=constrained.length_penalty_alpha,
                             forbidden_ids=constrained.forbidden_ids)
    expected = _numpy(beam_search.search(state, maximum_lengths))
    result = _numpy(constrained.constrained_pass(state, maximum_lengths, tf.zeros([len(SENTENCES), 1, 2], tf.int32)))
    assert sorted(result) == sorted(list(expected) + ["constraints_met"])
    assert result["constraints_met"].all()
    for key, value in expected.items():
        np.testing.assert_array_equal(result[key], value, err_msg=key)


@pytest.mark.parametrize("name", ["rnnsearch", "rnnencdec", "ensemble"])
def test_every_translation_holds_every_constraint(translators, name):
    translator = translators[name]
    constraints = [["chat grand", "vert"], ["maison", ""], ["le chien", "une"], ["voit", "la"], ["chat", ""],
                   ["petit", "le"]]
    outputs = _numpy(translator.translate_constrained(tf.constant(TEXT), tf.constant(constraints)))
    for row, phrases in enumerate(constraints):
        if not TEXT[row].strip():  # nothing to translate: nothing met
            assert not outputs["constraints_met"][row].any()
            continue
        for column, phrase in enumerate(phrases):
            assert outputs["constraints_skipped"][row, column] == (phrase == "")
            assert outputs["constraints_met"][row, column] == (phrase != "")
            for hypothesis in range(SEARCH_OPTIONS["num_hypotheses"]):
                tokens = [token.decode("utf-8") for token in outputs["nbest_tokens"][row, hypothesis]]
                if hypothesis and "</s>" not in tokens:  # fewer hypotheses than asked for: an empty slot
                    continue
                assert _holds(tokens[: tokens.index("</s>")], phrase), (row, hypothesis, phrase)
        scored = translator.score(tf.constant([TEXT[row]]), tf.constant([" ".join(_tokens(outputs, row))]))
        np.testing.assert_allclose(scored["log_prob"][0], outputs["score"][row], rtol=1e-5)


@pytest.mark.parametrize("name", ["rnnsearch", "ensemble"])
def test_a_constraint_already_in_the_translation_changes_nothing(translators, name):
    translator = translators[name]
    free = _numpy(translator.translate(tf.constant(SENTENCES)))
    constraints = [[_tokens(free, row)[len(_tokens(free, row)) // 2]] for row in range(len(SENTENCES))]
    constrained = _numpy(translator.translate_constrained(tf.constant(SENTENCES), tf.constant(constraints)))
    np.testing.assert_array_equal(constrained["translation"], free["translation"])
    np.testing.assert_allclose(constrained["score"], free["score"], rtol=1e-6)
    assert constrained["constraints_met"].all()


def test_unknown_phrases_are_skipped_and_unfit_ones_reported(translators):
    translator = translators["rnnsearch"]
    too_long = " ".join(["chat"] * 40)  # more tokens than "dog"'s length bound
    outputs = _numpy(translator.translate_constrained(
        tf.constant(["the cat", "dog"]), tf.constant([["zyzzyva", "chat"], [too_long, ""]])))
    assert outputs["constraints_skipped"].tolist() == [[True, False], [False, True]]
    assert outputs["constraints_met"].tolist() == [[False, True], [False, False]]
    assert _tokens(outputs, 1)  # the sentence is still translated


def test_the_text_unk_is_the_word_outside_the_vocabulary_forced_as_in_a_prefix(translators):
    outputs = _numpy(translators["rnnsearch"].translate_constrained(
        tf.constant(["the cat", "dog"]), tf.constant([["<unk>", "chat"], ["<unk> <unk>", "zyzzyva <unk>"]])))
    assert not outputs["constraints_skipped"].any() and outputs["constraints_met"].all()
    assert "<unk>" in _tokens(outputs, 0)  # forbidden to the free search (SEARCH_OPTIONS' forbid_unk)
    assert _holds(_tokens(outputs, 1), "<unk> <unk>")


def test_a_glossary_term_outside_the_vocabulary_is_searched_as_unk_and_written_there(translators):
    """`rnnsearch translate --terminology` on a word-level model: "toutou" is no target word; its constraint is
    searched as `<unk>`, which the glossary's `<unk>` replacement writes the term over (the model forbids `<unk>`
    itself). Given as it is written, a phrase of unknown words is skipped."""
    translator = translators["rnnsearch"]
    terms = Glossary([("dog", "toutou"), ("cat", "chat")], translator.source_codec)
    sentences = ["The cat sees the big dog.", "Dog", "a small green house ?"]
    constraints = terms.constraints(sentences)
    assert constraints == [["chat", "toutou"], ["toutou"], []]
    batch = BatchTranslator(translator, translator.settings(), unk_replacer=terms.unk_replacer(translator.target_codec))
    results = batch.translate(sentences, constraints=terms.searched_as(constraints, translator.target_codec))
    for result, phrases in zip(results[:2], constraints):
        assert "<unk>" in result["searched_translation"].split() and "<unk>" not in result["tokens"]
        assert all(phrase in result["tokens"] for phrase in phrases) and all(result["constraints_met"])
    assert constraint_report(constraints, results)[-1] == "constraints: 3 on 2 of 3 lines: 3 met, 0 not met, 0 skipped"
    plain = BatchTranslator(translator, translator.settings())
    searched = plain.translate(sentences, constraints=terms.searched_as(constraints, translator.target_codec))
    assert constraint_report(constraints, searched)[-1].endswith("0 skipped, 2 written as <unk>")  # nothing wrote it
    assert constraint_report(constraints, plain.translate(sentences, constraints=constraints))[-1].endswith(
        "1 met, 0 not met, 2 skipped")


def test_constraint_misuse_is_refused(translators):
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many sentences"):
        translators["rnnsearch"].translate_constrained(tf.constant(["a", "b"]), tf.constant([["la"]]))
