"""BatchTranslator (`rnnsearch_tf.inference.batch_translator`) on a tiny random model: input order,
workers, failing batches, empty and long lines, result shapes, unk replacement, SavedModel vs model
directory, the eager path for a few sentences, and prefixes."""

import threading

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.export_dir import ExportSettings
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.glossary import Glossary
from rnnsearch_tf.inference.unk_replacer import UnkReplacer
from helpers.serving_test_utils import SEARCH_OPTIONS, SENTENCES, exported_model, write_model_dir
from helpers.translation_test_data import INPUT, PREFIXES, translation_model_dir


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return translation_model_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def batch_translator(model_dir):
    return BatchTranslator.from_model_dir(model_dir, batch_size=2, **SEARCH_OPTIONS)


@pytest.fixture(scope="module")
def results(batch_translator):
    return batch_translator.translate(INPUT)


def test_keeps_input_order(results, batch_translator):
    assert len(results) == len(INPUT)
    one_by_one = [batch_translator.module.translate(tf.constant([sentence])) for sentence in INPUT]
    for result, single in zip(results, one_by_one):
        assert result["translation"] == single["translation"].numpy()[0].decode()
        np.testing.assert_allclose(result["score"], single["score"].numpy()[0], rtol=1e-5)
        assert [text for text, _ in result["nbest"]] == [t.decode() for t in single["nbest_translations"].numpy()[0]]


def test_workers_change_nothing_but_speed(batch_translator, results):
    module = batch_translator.module  # traced once: the workers call the same functions
    one_at_a_time, three_at_once = (
        BatchTranslator(module, module.settings(), batch_size=2, workers=workers) for workers in (1, 3)
    )
    progress = {1: [], 3: []}
    for workers, batch_translator in ((1, one_at_a_time), (3, three_at_once)):
        other = batch_translator.translate(INPUT, progress[workers].append)
        for result, expected in zip(other, results, strict=True):
            assert result["translation"] == expected["translation"] and result["tokens"] == expected["tokens"]
            np.testing.assert_allclose(result["alignment"], expected["alignment"], atol=1e-6)
    batch_ends = [min(end, len(INPUT)) for end in range(2, len(INPUT) + 2, 2)]
    assert progress[1] == progress[3] == batch_ends  # after each batch of 2, in order


class _FailingExport:
    """A loaded SavedModel stand-in whose translate signature fails on one sentence, and counts the calls that
    start after that failure."""

    def __init__(self, bad_sentence):
        self.bad_sentence, self.calls, self.failed, self.after_failure = bad_sentence.encode(), 0, False, 0
        self.signatures = {"translate": self._translate, "score": None}

    def _translate(self, text):
        self.calls += 1
        self.after_failure += self.failed
        if self.bad_sentence in text.numpy().tolist():
            self.failed = True
            raise ValueError(f"cannot translate {self.bad_sentence!r}")
        return _FakeExport._translate(text)


def test_a_failing_batch_stops_the_batches_in_flight():
    export = _FailingExport("a b c d e f")  # the longest sentence: the first batch
    translator = BatchTranslator(export, dict(target_language="fr", maximum_batch_size=1), batch_size=1, workers=2)
    with pytest.raises(ValueError, match="cannot translate"):
        translator.translate(["a b c d e f"] + ["x"] * 10)
    # Batches beside the failed one may have ended and been followed before it failed (on a busy machine its
    # thread may start last); once it has failed, none starts, and the other batches are not all run.
    assert export.after_failure <= 1 and export.calls < 11  # at most the one already handed to the other worker


class _SlowFirstExport:
    """A loaded SavedModel stand-in whose first batch (the longest sentence) runs until every other batch
    has been translated (or 10 s pass)."""

    def __init__(self, longest, others):
        self.longest, self.others, self.done = longest.encode(), others, []
        self.all_others_done = threading.Event()
        self.signatures = {"translate": self._translate, "score": None}

    def _translate(self, text):
        sentences = text.numpy().tolist()
        if self.longest in sentences:
            self.all_others_done.wait(timeout=10)
        self.done.extend(sentences)
        if len(self.done) == self.others:
            self.all_others_done.set()
        return _FakeExport._translate(text)


def test_a_worker_takes_the_next_batch_while_an_earlier_one_runs():
    export = _SlowFirstExport("a b c d e f", others=5)
    translator = BatchTranslator(export, dict(target_language="fr", maximum_batch_size=1), batch_size=1, workers=2)
    progress = []
    results = translator.translate(["x"] * 2 + ["a b c d e f"] + ["x"] * 3, progress.append)
    assert export.done == [b"x"] * 5 + [b"a b c d e f"]  # the other worker translated all five meanwhile
    assert progress == [1, 2, 3, 4, 5, 6] and len(results) == 6  # still reported in order


def test_empty_and_long_lines(results):
    for result in (results[len(SENTENCES)], results[len(SENTENCES) + 2]):  # "" and whitespace only
        assert result["translation"] == "" and result["score"] == 0.0 and result["tokens"] == []
        assert result["source_tokens"] == [] and result["alignment"].shape == (0, 1) and not result["truncated"]
    long_result = results[len(SENTENCES) + 1]
    assert long_result["truncated"]
    assert long_result["source_tokens"] == ["cat"] * SEARCH_OPTIONS["maximum_source_length"]
    assert sum(result["truncated"] for result in results) == 1


def test_result_shapes(results):
    for result in results[: len(SENTENCES)]:
        assert result["alignment"].shape == (len(result["tokens"]) + 1, len(result["source_tokens"]) + 1)
        np.testing.assert_allclose(result["alignment"].sum(axis=1), 1.0, rtol=1e-5)
        assert result["nbest"][0] == (result["translation"], result["score"])
        assert len(result["nbest"]) == SEARCH_OPTIONS["num_hypotheses"] and result["unks_replaced"] == 0


class _FakeExport:
    """Stands in for a loaded SavedModel whose best translation holds an `<unk>` with a known alignment."""

    def __init__(self):
        self.signatures = {"translate": self._translate, "score": None}  # scoring is not used here

    @staticmethod
    def _translate(text):
        del text
        return dict(
            translation=tf.constant([b"le <unk>, grand"]),
            score=tf.constant([-1.5]),
            tokens=tf.constant([[b"le", b"<unk>", b",", b"grand", b"</s>", b""]]),
            alignment=tf.constant(
                [[[0.8, 0.1, 0.1, 0.0], [0.1, 0.2, 0.6, 0.1], [0.3, 0.3, 0.3, 0.1], [0.1, 0.7, 0.1, 0.1],
                  [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]]
            ),
            source_tokens=tf.constant([[b"the", b"big", b"Zyzzyva", b"</s>"]]),
            truncated=tf.constant([False]),
        )


def test_unk_replacement_in_batches(tmp_path):
    settings = dict(target_language="fr", maximum_batch_size=10)
    result = BatchTranslator(_FakeExport(), settings, unk_replacer=UnkReplacer()).translate(["the big Zyzzyva"])[0]
    assert result["tokens"] == ["le", "Zyzzyva", ",", "grand"] and result["unks_replaced"] == 1
    assert result["searched_tokens"] == ["le", "<unk>", ",", "grand"]  # the alignment's rows, as searched
    assert result["translation"] == "le Zyzzyva, grand"
    assert result["nbest"] == [("le Zyzzyva, grand", -1.5)]  # the one hypothesis, replaced too
    dictionary = UnkReplacer({"Zyzzyva": "zyzzyva du Brésil"})
    result = BatchTranslator(_FakeExport(), settings, unk_replacer=dictionary).translate(["the big Zyzzyva"])[0]
    assert result["translation"] == "le zyzzyva du Brésil, grand"


def test_saved_model_translates_like_the_model_dir(tmp_path_factory, model_dir):
    export_model_dir, export_dir, version_path = exported_model(tmp_path_factory)
    from_export = BatchTranslator.from_saved_model(export_dir, batch_size=3)
    loaded = from_export.loaded_from
    assert loaded == version_path
    from_checkpoint = BatchTranslator.from_model_dir(export_model_dir, batch_size=3, **SEARCH_OPTIONS)
    for exported, direct in zip(from_export.translate(INPUT), from_checkpoint.translate(INPUT)):
        assert exported["translation"] == direct["translation"] and exported["tokens"] == direct["tokens"]
        np.testing.assert_allclose(exported["alignment"], direct["alignment"], atol=1e-6)


# Prefixes: each translation starts with the words of its prefix.

def test_a_few_sentences_are_searched_without_tracing(model_dir, results, batch_translator):
    assert len(INPUT) > BatchTranslator(batch_translator.module, batch_translator.module.settings()).eager_sentences
    eager = BatchTranslator.from_model_dir(model_dir, batch_size=2, eager_sentences=len(INPUT), **SEARCH_OPTIONS)
    for result, expected in zip(eager.translate(INPUT), results, strict=True):
        assert result["translation"] == expected["translation"] and result["tokens"] == expected["tokens"]
        assert result["nbest"][1][0] == expected["nbest"][1][0]
        np.testing.assert_allclose(result["score"], expected["score"], rtol=1e-5)
        np.testing.assert_allclose(result["alignment"], expected["alignment"], atol=1e-6)
    prefixed, prefixed_traced = (bt.translate(INPUT, prefixes=PREFIXES) for bt in (eager, batch_translator))
    assert [r["translation"] for r in prefixed] == [r["translation"] for r in prefixed_traced]
    scored, scored_traced = (bt.score(INPUT, [r["translation"] for r in results]) for bt in (eager, batch_translator))
    np.testing.assert_allclose([r["log_prob"] for r in scored], [r["log_prob"] for r in scored_traced], rtol=1e-5)
    module = eager.module
    assert [f.experimental_get_tracing_count() for f in (module.translate, module.translate_prefix, module.score)] == [
        0, 0, 0
    ]
    eager.translate(INPUT + ["one more"])  # more sentences than eager_sentences: traced
    assert module.translate.experimental_get_tracing_count() == 1


def test_prefixes_start_the_translations(batch_translator, results):
    prefixed = batch_translator.translate(INPUT, prefixes=PREFIXES)
    for sentence, prefix, result, free in zip(INPUT, PREFIXES, prefixed, results, strict=True):
        single = batch_translator.module.translate_prefix(tf.constant([sentence]), tf.constant([prefix]))
        assert result["translation"] == single["translation"].numpy()[0].decode()
        alone = [(word.decode(), float(score))
                 for word, score in zip(single["alternatives"].numpy()[0], single["alternative_scores"].numpy()[0]) if word]
        assert [word for word, _ in result["alternatives"]] == [word for word, _ in alone]
        np.testing.assert_allclose([score for _, score in result["alternatives"]], [score for _, score in alone],
                                   rtol=1e-5)  # a batch and one sentence: float32 sums in other shapes
        if not sentence.strip():  # nothing to translate, nothing offered
            assert result["translation"] == "" and result["tokens"] == [] and result["alternatives"] == []
            continue
        assert len(result["alternatives"]) == 10  # the Translator's default num_alternatives
        expected_start = ["<unk>" if word == "zyzzyva" else word for word in prefix.split()]
        assert result["tokens"][: len(expected_start)] == expected_start
        if not prefix:
            assert result["translation"] == free["translation"]
            assert result["score"] == pytest.approx(free["score"], rel=1e-5)
    with pytest.raises(ValueError, match="got 9 sentences but 8 prefixes"):
        batch_translator.translate(INPUT, prefixes=PREFIXES[:-1])
    settings = dict(target_language="fr", maximum_batch_size=10)
    with pytest.raises(ValueError, match="no translate_prefix signature"):
        BatchTranslator(_FakeExport(), settings).translate(["the big Zyzzyva"], prefixes=["le"])


# large: the export's prefixes batched as the model directory's are; the default suite translates with the export
# (above), batches prefixes (test_prefixes_start_the_translations) and compares the export's translate_prefix
# with the Python path (tests/test_export.py)
@pytest.mark.large
def test_saved_model_translates_prefixes_like_the_model_dir(tmp_path_factory):
    export_model_dir, export_dir, _ = exported_model(tmp_path_factory)
    from_export = BatchTranslator.from_saved_model(export_dir, batch_size=3).translate(INPUT, prefixes=PREFIXES)
    direct = BatchTranslator.from_model_dir(export_model_dir, batch_size=3, **SEARCH_OPTIONS).translate(
        INPUT, prefixes=PREFIXES
    )
    for exported, expected in zip(from_export, direct, strict=True):
        assert exported["translation"] == expected["translation"] and exported["tokens"] == expected["tokens"]
        assert [word for word, _ in exported["alternatives"]] == [word for word, _ in expected["alternatives"]]
        np.testing.assert_allclose([score for _, score in exported["alternatives"]],
                                   [score for _, score in expected["alternatives"]], rtol=1e-5)


def test_constraints_are_padded_per_batch_and_reported_per_sentence(batch_translator, results):
    constraints = [["chien"], [], ["maison", "le chat"], ["zyzzyva", "vert"], ["chat"], ["un"], [], [], ["la"]]
    constrained = batch_translator.translate(INPUT, constraints=constraints)  # batches of 2: widths 1 and 2
    for phrases, result, free in zip(constraints, constrained, results, strict=True):
        assert len(result["constraints_met"]) == len(result["constraints_skipped"]) == len(phrases)
        for phrase, met, skipped in zip(phrases, result["constraints_met"], result["constraints_skipped"]):
            assert skipped == (phrase == "zyzzyva")  # outside the target vocabulary
            assert met == (f" {phrase} " in f" {result['translation']} ")
        if not phrases:
            assert result["translation"] == free["translation"]  # no constraint: translate's search
    assert all(all(result["constraints_met"]) or not result["source_tokens"]
               for phrases, result in zip(constraints, constrained) if "zyzzyva" not in phrases)
    with pytest.raises(ValueError, match="got 9 sentences but 8 constraint lists"):
        batch_translator.translate(INPUT, constraints=constraints[:-1])
    with pytest.raises(ValueError, match="give prefixes or constraints, not both"):
        batch_translator.translate(INPUT, prefixes=PREFIXES, constraints=constraints)


def test_constraints_that_cannot_fit_the_length_bound_leave_the_free_translation(batch_translator, results):
    """A phrase longer than every length bound is not met, and its line gets the translation it gets without
    constraints (docs/translating.md: "the translation is the search's best without it"), not a hypothesis cut
    off at the bound."""
    bounds = [batch_translator.search_config.maximum_target_length(len(free["source_tokens"])) for free in results]
    # The bound counts </s>; a phrase is cut to the longest bound's tokens, so the lines of that bound get none.
    constraints = [[" ".join(["chien"] * bound)] if free["source_tokens"] and
                   bound < batch_translator.maximum_target_length else [] for free, bound in zip(results, bounds)]
    assert sum(map(len, constraints)) >= 4
    constrained = batch_translator.translate(INPUT, constraints=constraints)
    for result, free in zip(constrained, results, strict=True):
        assert result["constraints_met"] == [False] * len(result["constraints_met"])
        assert result["translation"] == free["translation"] and result["tokens"] == free["tokens"]
        assert result["score"] == pytest.approx(free["score"], rel=1e-5)


def test_unk_replacement_keeps_the_forced_prefix_as_given(model_dir):
    """A prefix word outside the target vocabulary is forced as `<unk>`; `<unk>` replacement writes the user's word
    back there (not the source word it attends to most) in every hypothesis, and reads the rest as usual."""
    sentences, prefixes = ["The zyzzyva sees a cat.", "a big dog", "the cat"], ["le zyzzyva", "un Zyzzyva chien", ""]
    searched = BatchTranslator.from_model_dir(model_dir, **SEARCH_OPTIONS).translate(sentences, prefixes=prefixes)
    replacing = BatchTranslator.from_model_dir(model_dir, unk_replacer=UnkReplacer(), **SEARCH_OPTIONS)
    replaced = replacing.translate(sentences, prefixes=prefixes)
    for prefix, plain, result in zip(prefixes, searched, replaced, strict=True):
        for plain_hypothesis, hypothesis in zip(plain["hypotheses"], result["hypotheses"], strict=True):
            given = prefix.split()
            assert plain_hypothesis["tokens"][: len(given)] == [word if word in ("le", "un", "chien") else "<unk>"
                                                                for word in given]
            assert hypothesis["tokens"] == given + plain_hypothesis["tokens"][len(given) :]
            assert hypothesis["unks_replaced"] == sum(word not in ("le", "un", "chien") for word in given)
        assert result["tokens"] == result["hypotheses"][0]["tokens"]
        assert result["translation"].split() == result["tokens"] and result["nbest"][0][0] == result["translation"]


def test_a_word_level_export_tells_the_target_words_outside_its_vocabulary(tmp_path_factory):
    """The export carries its target vocabulary (assets/target_vocab.tsv): a glossary's term outside it is searched
    as `<unk>` and written back, with `--saved_model` as with `--model_dir`."""
    export_model_dir, export_dir, _ = exported_model(tmp_path_factory)
    from_export = BatchTranslator.from_saved_model(export_dir)
    direct = BatchTranslator.from_model_dir(export_model_dir, **SEARCH_OPTIONS)
    assert from_export.target_codec.vocabulary.size == direct.target_codec.vocabulary.size
    terms = Glossary([("dog", "toutou"), ("cat", "chat")], direct.source_codec)
    constraints = terms.constraints(["the dog sees a cat"])
    searched = [terms.searched_as(constraints, translator.target_codec) for translator in (from_export, direct)]
    assert searched[0] == searched[1] == [["<unk>", "chat"]]


def test_a_model_without_attention_replaces_no_unk(tmp_path):
    """RNNencdec's alignment rows are zeros: their argmax copied the first source word for every <unk>."""
    for name, attends in (("rnnsearch", True), ("rnnencdec", False)):
        path = write_model_dir(tmp_path / name, model_name=name)
        translator = BatchTranslator.from_model_dir(path, unk_replacer=UnkReplacer(), beam_size=2)
        assert translator.uses_attention is attends and (translator.unk_replacer is not None) is attends
    ensemble = BatchTranslator.from_model_dir(f"{tmp_path / 'rnnsearch'}+{tmp_path / 'rnnencdec'}",
                                              unk_replacer=UnkReplacer(), beam_size=2)
    assert ensemble.uses_attention and ensemble.unk_replacer is not None  # its attending member aligns


def test_an_export_says_whether_its_model_attends_and_an_older_one_is_taken_to(tmp_path_factory):
    """`uses_attention` comes from the export's settings (an RNNencdec export's: test_translate.py); an export older
    than the record keeps the behaviour it had, taken to attend, <unk> replaced."""
    _, export_dir, _ = exported_model(tmp_path_factory)
    recorded = BatchTranslator.from_saved_model(export_dir, unk_replacer=UnkReplacer())
    assert recorded.uses_attention is True and recorded.unk_replacer is not None
    assert recorded.module.signatures["settings"]()["uses_attention"].numpy()  # recorded, not an older one's default
    older = {name: value for name, value in ExportSettings.read(recorded.module).items() if name != "uses_attention"}
    from_older = BatchTranslator(recorded.module, older, unk_replacer=UnkReplacer(), loaded_from=recorded.loaded_from)
    assert from_older.uses_attention is True and from_older.unk_replacer is not None
