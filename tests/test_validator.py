"""rnnsearch_tf/training/validator.py on the toy corpus: dev BLEU as sacrebleu scores the translations a
`BatchTranslator` gives, dev NLL as the model's own log-probabilities, samples, cut sentences counted; a Chinese
target's dev BLEU with sacreBLEU's Chinese tokenizer."""


import numpy as np
import pytest
import sacrebleu
import tensorflow as tf

from data_pipeline.data_dir import DataDir
from data_pipeline.text_codec import TextCodec
from rnnsearch_tf import ModelConfig
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.models.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.models.rnn_search import RNNSearch
from rnnsearch_tf.training.validator import Validator
from helpers.model_test_utils import randomize_weights
from helpers import toy_chinese
from helpers.toy_chinese import build_english_chinese

MAXIMUM_SOURCE_LENGTH = 5


@pytest.fixture(scope="module")
def validator(toy_data):
    vocabulary_sizes = [len((toy_data / f"{side}_vocab.tsv").read_text().splitlines()) for side in ("source", "target")]
    model = RNNSearch(ModelConfig(source_vocab_size=vocabulary_sizes[0], target_vocab_size=vocabulary_sizes[1],
                                  embedding_dim=8, hidden_dim=12, maxout_dim=6, alignment_dim=10))
    randomize_weights(model, stddev=0.3)
    return Validator(model, str(toy_data), "dev", batch_size=16,
                     search_config=SearchConfig(beam_size=2, maximum_source_length=MAXIMUM_SOURCE_LENGTH),
                     bleu_sentences=40, attention_sentences=2)


def test_bleu_samples_and_cut_sentences_are_those_of_the_translations(validator):
    result = validator()
    translator = validator.translator.module
    expected = BatchTranslator(translator, translator.settings(), 16, eager_sentences=0).translate(validator.sources)
    hypotheses = [entry["translation"] for entry in expected]
    assert result["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [validator.references]).score)
    assert result["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hypotheses, [validator.references]).score)
    assert result["samples"] == list(zip(validator.sources, validator.references, hypotheses))[:2]
    assert [image[:8] for image in result["attention_images"]] == [b"\x89PNG\r\n\x1a\n"] * 2
    lengths = [len(tokens) for tokens in TextCodec("en").tokenize(tf.constant(validator.sources)).to_list()]
    assert 0 < result["truncated_sentences"] == sum(length > MAXIMUM_SOURCE_LENGTH for length in lengths) < 40


def test_a_validation_asked_to_stop_between_its_batches_is_abandoned(validator):
    # The trainer's stop request, asked after each batch: a signal's grace period is shorter than a validation.
    answers = []

    def stop_at_the_second_question():
        answers.append(len(answers) == 1)
        return answers[-1]

    whole = validator()
    try:
        validator.should_stop = stop_at_the_second_question
        assert validator() is None
        assert answers == [False, True]  # no batch after the answer
        asked = []
        validator.should_stop = lambda: asked.append(1) or False
        asked_throughout = validator()
    finally:
        validator.should_stop = lambda: False
    batches = -(-len(validator.sources) // 16) + sum(1 for _ in validator.nll_input())
    assert len(asked) == batches and asked_throughout["bleu"] == whole["bleu"]


def test_a_model_without_attention_has_samples_and_no_attention_images(toy_data):
    vocabulary_sizes = [len((toy_data / f"{side}_vocab.tsv").read_text().splitlines()) for side in ("source", "target")]
    model = RNNEncDec(ModelConfig(source_vocab_size=vocabulary_sizes[0], target_vocab_size=vocabulary_sizes[1],
                                  embedding_dim=8, hidden_dim=12, maxout_dim=6))
    randomize_weights(model, stddev=0.3)
    result = Validator(model, str(toy_data), "dev", batch_size=16, search_config=SearchConfig(beam_size=2),
                       bleu_sentences=4, attention_sentences=2)()
    assert len(result["samples"]) == 2 and result["attention_images"] == []


def test_nll_per_sentence_is_the_models_own(validator):
    total, sentences = 0.0, 0
    for batch in validator.nll_input():
        log_probs = validator.model.token_log_probs(batch["source_ids"], batch["target_ids"])
        total -= float(np.sum(log_probs))
        sentences += int(batch["source_ids"].shape[0])
    assert sentences > 0
    assert validator.nll_per_sentence() == pytest.approx(total / sentences, rel=1e-5)


def test_dev_bleu_of_a_chinese_target_uses_sacrebleus_chinese_tokenizer(tmp_path):
    data_dir = build_english_chinese(tmp_path, toy_chinese.PAIRS[::4])
    sizes = {side: info["size"] for side, info in DataDir(data_dir).read_metadata()["vocabularies"].items()}
    model = RNNSearch(ModelConfig(source_vocab_size=sizes["source"], target_vocab_size=sizes["target"],
                                  embedding_dim=8, hidden_dim=12, maxout_dim=6, alignment_dim=10))
    randomize_weights(model, stddev=0.3)
    validator = Validator(model, str(data_dir), "dev", batch_size=16, search_config=SearchConfig(beam_size=2),
                          attention_sentences=0)
    result = validator()
    hypotheses = [entry["translation"] for entry in validator.translator.translate(validator.sources)]
    bleu = sacrebleu.BLEU(tokenize="zh")
    assert validator.target_language == "zh"
    assert result["bleu"] == pytest.approx(bleu.corpus_score(hypotheses, [validator.references]).score)
    assert result["bleu_signature"] == str(bleu.get_signature())  # names tok:zh
