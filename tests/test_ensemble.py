"""Ensembles (the mean of the models' log-probabilities at every step), in Python and exported."""

import numpy as np
import pytest
import tensorflow as tf

from helpers.model_test_utils import padded_batch, randomize_weights, small_config
from rnnsearch_tf import RNNEncDec, RNNSearch
from rnnsearch_tf.models.ensemble import Ensemble
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.inference.translator import Translator
from serving import export
from helpers.serving_test_utils import SEARCH_OPTIONS, SENTENCES, write_model_dir
from helpers.translation_test_data import translate


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("ensemble")
    return [str(write_model_dir(root / name, seed=seed)) for name, seed in (("a", 3), ("b", 4))]


@pytest.mark.parametrize("beam_size", [1, 3])
def test_ensemble_of_one_model_or_two_copies_equals_the_model(model_dirs, beam_size):
    options = dict(beam_size=beam_size, num_hypotheses=1)
    expected, _ = translate(model_dirs[0], **options)
    actual, checkpoint = translate(model_dirs[0] + "+" + model_dirs[0], **options)
    assert checkpoint.count("+") == 1
    np.testing.assert_array_equal(actual["translation"], expected["translation"])
    np.testing.assert_allclose(actual["score"], expected["score"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(actual["log_prob"], expected["log_prob"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(actual["alignment"], expected["alignment"], atol=1e-6)
    model = ModelDir(model_dirs[0]).load_model()[0]
    _, _, source_ids, target_ids = padded_batch()
    source_ids, target_ids = np.minimum(source_ids, 15), np.minimum(target_ids, 14)
    np.testing.assert_allclose(Ensemble([model]).token_log_probs(source_ids, target_ids),
                               model.token_log_probs(source_ids, target_ids), atol=1e-5)


def test_two_models_average_their_log_probabilities():
    models = [RNNSearch(small_config()), RNNEncDec(small_config())]
    for seed, model in enumerate(models):
        randomize_weights(model, seed=seed)
    ensemble = Ensemble(models)
    _, _, source_ids, target_ids = padded_batch()
    member_log_probs = [log_softmax(m.teacher_forcing(source_ids, target_ids)[0].numpy().astype("float64"))
                        for m in models]
    expected = log_softmax((member_log_probs[0] + member_log_probs[1]) / 2)
    expected = np.take_along_axis(expected, target_ids[..., None], -1)[..., 0] * (target_ids > 0)
    np.testing.assert_allclose(ensemble.token_log_probs(source_ids, target_ids).numpy(), expected, atol=1e-5)

    first_words = tf.constant([1, 1, 1])
    logits, new_state, alignment = ensemble.symbols_to_logits_fn(first_words, 0, ensemble.encode(source_ids))
    step_expected = [log_softmax(m.step(first_words, m.encode(source_ids))[0].numpy().astype("float64"))
                     for m in models]
    np.testing.assert_allclose(logits.numpy(), (step_expected[0] + step_expected[1]) / 2, atol=1e-5)
    assert set(new_state) == {"0/s", "1/s"}  # the rest of each model's state is read only
    _, _, rnnsearch_alignment = models[0].step(first_words, models[0].encode(source_ids))
    np.testing.assert_allclose(alignment.numpy(), rnnsearch_alignment.numpy(), atol=1e-6)  # only RNNsearch attends


def test_ensemble_refuses_models_of_other_data(model_dirs, tmp_path):
    other = write_model_dir(tmp_path / "other")
    (other / "target_vocab.tsv").write_text((other / "target_vocab.tsv").read_text().replace("chat", "chatte"))
    with pytest.raises(ValueError, match="target_vocab.tsv differ: the models of an ensemble"):
        Translator.from_model_dir(f"{model_dirs[0]}+{other}")
    with pytest.raises(ValueError, match="must share their vocabularies"):
        Ensemble([RNNSearch(small_config()), RNNSearch(small_config(target_vocab_size=30))])


@pytest.mark.large  # an export and a fresh process
def test_exported_ensemble_equals_the_python_ensemble(model_dirs, tmp_path):
    spec = "+".join(model_dirs)
    expected, checkpoint = translate(spec)
    translator = Translator.from_model_dir(spec, **SEARCH_OPTIONS)
    path = export.export(translator, str(tmp_path / "exports"))
    loaded = tf.saved_model.load(path)
    outputs = loaded.signatures["translate"](text=tf.constant(SENTENCES))
    np.testing.assert_array_equal(outputs["translation"].numpy(), expected["translation"])
    np.testing.assert_allclose(outputs["score"].numpy(), expected["score"], rtol=1e-5)
    assert loaded.signatures["settings"]()["checkpoint"].numpy().decode() == checkpoint
