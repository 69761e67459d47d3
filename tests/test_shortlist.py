"""The vocabulary shortlist: how it is built, which ids a batch is decoded over, and decoding with it."""

import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.shortlist import Shortlist, vocabulary_digest
from rnnsearch_tf.models.model_dir import SHORTLIST_FILE, ModelDir
from rnnsearch_tf.inference.translator import Translator
from serving import export
from helpers.serving_test_utils import SEARCH_OPTIONS, SENTENCES, assert_outputs_equal, write_model_dir
from helpers import preimported
from test_export import _FRESH_PROCESS, _saved_model_ops

# Ids 4.. are words; 0-3 (PAD, BOS, EOS, UNK) are ignored by the counts.
TINY_CORPUS = [
    ([4, 5, 6, 2], [4, 7, 2]),
    ([4, 4, 7, 2], [4, 5, 5, 2]),
    ([5, 3, 2], [6, 7, 8, 2]),
    ([6, 8, 2], [8, 2]),
    ([4, 8, 5, 2], [4, 8, 3, 2]),
]
SOURCE_VOCAB, TARGET_VOCAB = 10, 9


def brute_force(corpus, per_source_word, frequent):
    """Dense sentence-level counts and Dice, ranked by Dice then id: the definition `Shortlist.build` keeps."""
    joint = np.zeros((SOURCE_VOCAB, TARGET_VOCAB))
    source_counts, target_counts = np.zeros(SOURCE_VOCAB), np.zeros(TARGET_VOCAB)
    for source_ids, target_ids in corpus:
        source_words = {s for s in source_ids if s >= 4}
        target_words = {t for t in target_ids if t >= 4}
        for s in source_words:
            source_counts[s] += 1
            for t in target_words:
                joint[s, t] += 1
        for t in target_words:
            target_counts[t] += 1
    candidates = np.zeros((SOURCE_VOCAB, per_source_word), np.int32)
    for s in range(SOURCE_VOCAB):
        scored = [(-2 * joint[s, t] / (source_counts[s] + target_counts[t]), t) for t in range(TARGET_VOCAB) if joint[s, t]]
        ranked = [t for _, t in sorted(scored)][:per_source_word]
        candidates[s, : len(ranked)] = ranked
    return candidates, np.arange(4, min(4 + frequent, TARGET_VOCAB))


@pytest.mark.parametrize("per_source_word, frequent", [(1, 0), (2, 3), (5, 100)])
def test_build_equals_a_brute_force_count(per_source_word, frequent):
    shortlist = Shortlist.build(
        [(np.array(s), np.array(t)) for s, t in TINY_CORPUS], SOURCE_VOCAB, TARGET_VOCAB, per_source_word, frequent
    )
    candidates, frequent_ids = brute_force(TINY_CORPUS, per_source_word, frequent)
    np.testing.assert_array_equal(shortlist.candidates, candidates)
    np.testing.assert_array_equal(shortlist.frequent, frequent_ids)


def test_build_merges_counts_across_chunks():
    corpus = [(np.array([4 + i % 5, 5]), np.array([4 + i % 4, 2])) for i in range(25001)]
    shortlist = Shortlist.build(corpus, SOURCE_VOCAB, TARGET_VOCAB, 3, 0)
    np.testing.assert_array_equal(shortlist.candidates, brute_force(corpus, 3, 0)[0])


def test_save_and_load(tmp_path):
    shortlist = Shortlist([[0, 0], [5, 6]], [4, 5, 6], vocabularies="ab12")
    shortlist.save(tmp_path / SHORTLIST_FILE)
    loaded = Shortlist.from_file(tmp_path / SHORTLIST_FILE)
    np.testing.assert_array_equal(loaded.candidates, shortlist.candidates)
    np.testing.assert_array_equal(loaded.frequent, shortlist.frequent)
    assert loaded.vocabularies == "ab12"
    with np.load(tmp_path / SHORTLIST_FILE) as arrays:
        assert (arrays["per_source_word"], arrays["frequent_words"]) == (2, 3)


def test_candidate_ids_are_the_sorted_union_with_the_reserved_ids_first():
    shortlist = Shortlist([[0, 0], [0, 0], [0, 0], [0, 0], [9, 7], [7, 12]], [5])
    ids = shortlist.candidate_ids(tf.constant([[4, 2, 0]]), tf.constant([[20, 0]])).numpy()
    np.testing.assert_array_equal(ids, [0, 1, 2, 3, 5, 7, 9, 20])


def test_misuse():
    with pytest.raises(ValueError, match="candidates"):
        Shortlist([1, 2], [4])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_model_dir(tmp_path_factory.mktemp("shortlist") / "model")


def _vocabulary_sizes(model_dir):
    return [sum(1 for _ in open(model_dir / name, encoding="utf-8")) for name in ("source.tsv", "target.tsv")]


def _translator(model_dir, candidates, frequent, **options):
    Shortlist(candidates, frequent).save(model_dir / SHORTLIST_FILE)
    return Translator.from_model_dir(model_dir, shortlist=True, **dict(SEARCH_OPTIONS, **options))


def _small_shortlist(model_dir):
    source_size, _ = _vocabulary_sizes(model_dir)
    candidates = np.zeros((source_size, 2), np.int32)
    candidates[4:] = [[5, 8], [6, 9]] * ((source_size - 4) // 2) + [[5, 8]] * ((source_size - 4) % 2)
    return candidates, [4]


# large: greedy search and sampling over the shortlist (~8 s each); the default suite runs the beam search's, through
# the same restricted step (`restricted_symbols_to_logits_fn`) that every strategy calls, and greedy search and
# sampling themselves (tests/test_greedy_search.py, tests/test_sampler.py, `translate --sampling` in
# tests/test_translate.py)
@pytest.mark.parametrize("options", [
    SEARCH_OPTIONS,
    pytest.param(dict(beam_size=1, num_hypotheses=1), marks=pytest.mark.large),
    pytest.param(dict(sampling=True, num_samples=3), marks=pytest.mark.large),
], ids=["beam", "greedy", "sampling"])
def test_a_shortlist_of_the_whole_vocabulary_changes_nothing(model_dir, options):
    source_size, target_size = _vocabulary_sizes(model_dir)
    everything = np.tile(np.arange(target_size), (source_size, 1))
    text = tf.constant(SENTENCES)
    prefix = tf.constant(["le chat", "", "zyzzyva", "la"])
    full = Translator.from_model_dir(model_dir, **dict(SEARCH_OPTIONS, **options, shortlist=False))
    shortlisted = _translator(model_dir, everything, [], **options)
    for method, arguments in (("translate", (text,)), ("translate_prefix", (text, prefix))):
        expected = getattr(full, method)(*arguments)
        assert_outputs_equal(getattr(shortlisted, method)(*arguments), expected, f"{options} {method}")


def test_every_output_token_is_a_candidate(model_dir):
    candidates, frequent = _small_shortlist(model_dir)
    translator = _translator(model_dir, candidates, frequent, forbid_unk=False)
    source_ids = tf.constant([[4, 6, 0], [5, 0, 0]])
    allowed = set(translator.shortlist.candidate_ids(source_ids).numpy())
    outputs = translator.translate_ids(source_ids)
    assert set(outputs["nbest_target_ids"].numpy().ravel()) <= allowed
    assert allowed == {0, 1, 2, 3, 4, 5, 8, 6, 9}
    texts = translator.translate(tf.constant(SENTENCES))
    words = set(translator.target_vocabulary.tokens(tf.constant(sorted(allowed))).numpy())
    assert set(texts["nbest_tokens"].numpy().ravel()) - {b""} <= words


def test_forced_prefix_words_join_the_candidates(model_dir):
    candidates, frequent = _small_shortlist(model_dir)
    translator = _translator(model_dir, candidates, frequent)
    outputs = translator.translate_prefix(tf.constant(["the cat", "dog"]), tf.constant(["un vert", ""]))
    tokens = outputs["tokens"].numpy()
    assert list(tokens[0, :2]) == [b"un", b"vert"]  # ids 13 and 12: outside the small shortlist
    assert set(outputs["alternatives"].numpy().ravel()) - {b""} <= {
        word.encode() for word in ("</s>", "<unk>", "le", "la", "chat", "maison", "voit", "un", "vert")
    }


def test_constraint_words_join_the_candidates(model_dir):
    candidates, frequent = _small_shortlist(model_dir)
    translator = _translator(model_dir, candidates, frequent)
    text, constraints = tf.constant(["the cat", "dog"]), tf.constant([["un vert"], [""]])
    outputs = translator.translate_constrained(text, constraints)
    tokens = [token.decode() for token in outputs["tokens"].numpy()[0]]
    assert "un vert" in " ".join(tokens)  # ids 13 and 12: outside the small shortlist
    assert outputs["constraints_met"].numpy().tolist() == [[True], [False]]
    np.testing.assert_array_equal(outputs["tokens"].numpy()[1], translator.translate(text)["tokens"].numpy()[1])


def test_a_translator_searches_over_a_model_directorys_shortlist_unless_told_not_to(model_dir, tmp_path):
    directory = tmp_path / "model"
    shutil.copytree(model_dir, directory)
    Shortlist(*_small_shortlist(directory)).save(directory / SHORTLIST_FILE)
    default = Translator.from_model_dir(directory, **SEARCH_OPTIONS)
    assert default.shortlist is not None and default.settings()["shortlist"] is True  # what an export records
    full = Translator.from_model_dir(directory, **SEARCH_OPTIONS, shortlist=False)
    assert full.shortlist is None and full.settings()["shortlist"] is False
    ensemble = Translator.from_model_dir(f"{directory}+{directory}", **SEARCH_OPTIONS)
    assert ensemble.shortlist is None and ensemble.settings()["shortlist"] is False
    text = tf.constant(SENTENCES)
    assert not np.array_equal(default.translate(text)["tokens"].numpy(), full.translate(text)["tokens"].numpy())
    # Each result says whether its scores are over the shortlist (the output formats write it).
    assert all(result["shortlist"] for result in BatchTranslator.from_model_dir(directory).translate(SENTENCES))
    assert not any("shortlist" in result
                   for result in BatchTranslator.from_model_dir(directory, shortlist=False).translate(SENTENCES))


def test_a_shortlist_must_exist_and_fit(model_dir, tmp_path):
    other = write_model_dir(tmp_path / "other")
    with pytest.raises(FileNotFoundError, match="rnnsearch shortlist"):
        Translator.from_model_dir(other, shortlist=True)
    Shortlist([[0]] * 3, [4]).save(other / SHORTLIST_FILE)
    with pytest.raises(ValueError, match="source words"):
        Translator.from_model_dir(other, shortlist=True)


def test_a_shortlist_of_other_vocabularies_of_the_same_sizes_is_refused(model_dir, tmp_path):
    """The ids of a shortlist built over another model's vocabularies would be other words: the file records a
    digest of the vocabularies, and a model whose own differ refuses it in one line; a file that records none
    (written before the digest) is read."""
    directory = tmp_path / "model"
    shutil.copytree(model_dir, directory)
    model = ModelDir(directory)
    candidates, frequent = _small_shortlist(directory)
    digest = vocabulary_digest(model.codec("source"), model.codec("target"))
    Shortlist(candidates, frequent, digest).save(directory / SHORTLIST_FILE)
    assert Shortlist.from_file(directory / SHORTLIST_FILE).vocabularies == digest
    assert Translator.from_model_dir(directory, **SEARCH_OPTIONS).shortlist.vocabularies == digest
    words = model.target_vocabulary_file
    lines = open(words, encoding="utf-8").read().splitlines()
    with open(words, "w", encoding="utf-8") as stream:  # the same size, two words swapped
        stream.write("\n".join(lines[:-2] + [lines[-1], lines[-2]]) + "\n")
    message = f"{directory / SHORTLIST_FILE} was built over other vocabularies .*: rebuild it with `rnnsearch shortlist"
    with pytest.raises(ValueError, match=message):
        Translator.from_model_dir(directory, **SEARCH_OPTIONS)
    Shortlist(candidates, frequent).save(directory / SHORTLIST_FILE)
    assert Shortlist.from_file(directory / SHORTLIST_FILE).vocabularies is None
    assert Translator.from_model_dir(directory, **SEARCH_OPTIONS).shortlist is not None


@pytest.mark.large  # a fresh process, as test_export.py's (default) round trip without a shortlist
def test_the_export_with_a_shortlist_round_trips(model_dir, tmp_path):
    candidates, frequent = _small_shortlist(model_dir)
    translator = _translator(model_dir, candidates, frequent)
    version_path = export.export(translator, str(tmp_path / "exports"))
    inputs = {
        "translate": {"text": np.array([s.encode() for s in SENTENCES], dtype=object)},
        "translate_prefix": {
            "text": np.array([s.encode() for s in SENTENCES], dtype=object),
            "prefix": np.array([b"un vert", b"", b"le", b""], dtype=object),
        },
        "settings": {},
    }
    with open(tmp_path / "inputs.pkl", "wb") as stream:
        pickle.dump(inputs, stream)
    subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS, version_path, str(tmp_path / "inputs.pkl"), str(tmp_path / "outputs.pkl")],
        check=True, cwd=tmp_path, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300,
    )
    with open(tmp_path / "outputs.pkl", "rb") as stream:
        reloaded = pickle.load(stream)
    assert not sorted(_saved_model_ops(version_path) - set(reloaded["registered_ops"]))
    assert reloaded["outputs"]["settings"]["shortlist"]
    for name in ("translate", "translate_prefix"):
        assert_outputs_equal(reloaded["outputs"][name], getattr(translator, name)(**inputs[name]), name)


def test_the_command_counts_the_training_shards(tmp_path):
    from data_pipeline import shard_files
    from data_pipeline.data_dir import DataDir
    from helpers.toy_translation import build_toy_data
    from rnnsearch_tf import ModelConfig

    data_dir = DataDir(build_toy_data(tmp_path))
    sizes = [sum(1 for _ in open(path, encoding="utf-8"))
             for path in (data_dir.source_vocabulary_file, data_dir.target_vocabulary_file)]
    model_dir = ModelDir(tmp_path / "model")
    os.makedirs(model_dir.path)
    config = ModelConfig(source_vocab_size=sizes[0], target_vocab_size=sizes[1], embedding_dim=4, hidden_dim=4,
                         maxout_dim=2, alignment_dim=4)
    model_dir.write_model("rnnsearch", config, {"data_dir": data_dir.path, "source_language": "en",
                                                "target_language": "fr"},
                          data_dir.source_vocabulary_file, data_dir.target_vocabulary_file)
    preimported.run([sys.executable, "-m", "rnnsearch_tf.shortlist", f"--model_dir={model_dir.path}",
                     "--per_source_word=3", "--frequent=7"], check=True, timeout=300,
                    env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    written = Shortlist.from_file(model_dir.file(SHORTLIST_FILE))
    pairs = [(example["source_ids"], example["target_ids"]) for example in shard_files.read_examples(
        shard_files.list_shards(data_dir.shard_pattern("train"))).as_numpy_iterator()]
    expected = Shortlist.build(pairs, sizes[0], sizes[1], 3, 7)
    np.testing.assert_array_equal(written.candidates, expected.candidates)
    np.testing.assert_array_equal(written.frequent, np.arange(4, 11))
    assert written.candidates.shape == (sizes[0], 3) and written.candidates[5:].any()
    assert written.vocabularies == vocabulary_digest(model_dir.codec("source"), model_dir.codec("target"))


# large: two fresh processes; the default suite has a translator search a model directory's shortlist unless told
# not to (above), `--noshortlist` parsed (tests/test_search_flags.py) and `evaluate` translate over the
# shortlist in a fresh process (tests/test_evaluate.py)
@pytest.mark.large
def test_translate_uses_a_model_directorys_shortlist_unless_told_not_to(model_dir, tmp_path):
    directory = tmp_path / "model"
    shutil.copytree(model_dir, directory)
    Shortlist(*_small_shortlist(directory)).save(directory / SHORTLIST_FILE)
    (tmp_path / "input.txt").write_text("".join(sentence + "\n" for sentence in SENTENCES), encoding="utf-8")
    options = dict(beam_size=3, forbid_unk=True, maximum_source_length=12)

    def command(*flags):
        result = preimported.run(
            [sys.executable, "-m", "rnnsearch_tf.cli.main", "translate", f"--model_dir={directory}",
             "--checkpoint=latest", f"--input={tmp_path / 'input.txt'}", "--noprogress",
             *(f"--{name}={str(value).lower()}" for name, value in options.items()), *flags],
            capture_output=True, text=True, check=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        )
        return result.stdout.splitlines(), result.stderr

    def expected(shortlist):
        translator = BatchTranslator.from_model_dir(directory, "latest", shortlist=shortlist, **options)
        return [result["translation"] for result in translator.translate(SENTENCES)]

    (default, default_note), (full, full_note) = command(), command("--noshortlist")
    assert default == expected(True) and "over its vocabulary shortlist" in default_note
    assert full == expected(False) and "shortlist" not in full_note
    assert default != full  # the small shortlist leaves out words the whole vocabulary's search picks
