"""serving/instance_rows.py: each instance's padded outputs cut to its own lengths, on batches padded as the
export pads them (the same against a real export: tests/test_rest_app.py)."""

import json

import numpy as np

from serving.instance_rows import rows_of_outputs, trim_instance


def _strings(rows):
    return np.array([[token.encode() for token in row] for row in rows], dtype=object)


def test_a_short_sentence_of_a_batch_loses_its_padding():
    tokens = _strings([["le", "chat", "</s>"], ["</s>", "", ""]])
    source_tokens = _strings([["the", "cat", "</s>"], ["dog", "</s>", ""]])
    alignment = np.zeros([2, 3, 3], np.float32)
    alignment[0] = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.0, 0.1, 0.9]]
    alignment[1, 0, :2] = [0.4, 0.6]
    outputs = {"translation": np.array([b"le chat", b""], object), "score": np.array([-1.5, -0.25], np.float32),
               "tokens": tokens, "source_tokens": source_tokens, "alignment": alignment}
    first, second = rows_of_outputs(outputs)
    assert first["tokens"] == ["le", "chat", "</s>"] and np.shape(first["alignment"]) == (3, 3)
    assert second == {"translation": "", "score": -0.25, "tokens": ["</s>"], "source_tokens": ["dog", "</s>"],
                      "alignment": [[0.4000000059604645, 0.6000000238418579]]}
    json.dumps([first, second])  # every value is JSON


def test_hypotheses_ids_and_scores_keep_their_own_lengths():
    instance = trim_instance({
        "nbest_tokens": _strings([["la", "</s>", ""], ["un", "chat", "</s>"]]),
        "source_tokens": _strings([["a", "</s>"]])[0],
        "nbest_alignment": np.ones([2, 3, 2], np.float32),
        "target_ids": np.array([5, 2, 0, 0], np.int32),
        "nbest_translations": np.array([b"", b""], object),  # an empty hypothesis is not padding
    })
    assert [list(row) for row in instance["nbest_tokens"]] == [[b"la", b"</s>"], [b"un", b"chat", b"</s>"]]
    assert [np.shape(alignment) for alignment in instance["nbest_alignment"]] == [(2, 2), (3, 2)]
    assert list(instance["target_ids"]) == [5, 2]
    assert list(instance["nbest_translations"]) == [b"", b""]
    scored = trim_instance({"tokens": _strings([["le", "</s>", ""]])[0],
                            "token_log_probs": np.array([-0.5, -0.25, 0.0], np.float32)})
    assert list(scored["token_log_probs"]) == [-0.5, -0.25]


def test_without_source_tokens_the_columns_end_at_the_last_attended_one():
    alignment = np.zeros([4, 5], np.float32)
    alignment[0, :3] = [0.2, 0.3, 0.5]
    alignment[1, :3] = [0.1, 0.1, 0.8]
    instance = trim_instance({"target_ids": np.array([7, 2, 0, 0], np.int32), "alignment": alignment})
    assert np.shape(instance["alignment"]) == (2, 3)


def test_one_output_gives_its_values_and_a_word_view_its_words():
    assert rows_of_outputs({"log_prob": np.array([-1.0, -2.0], np.float32)}) == [-1.0, -2.0]
    instance = trim_instance({"words": _strings([["le", "chat", "</s>", ""]])[0],
                              "source_words": _strings([["the", "cat", "</s>", "", ""]])[0],
                              "word_alignment": np.ones([4, 5], np.float32)})
    assert np.shape(instance["word_alignment"]) == (3, 3)


def test_probabilities_are_cut_to_their_tokens_and_words():
    instance = trim_instance({"tokens": _strings([["le", "ch", "at", "</s>", ""]])[0],
                              "token_probabilities": np.array([0.5, 0.25, 0.5, 0.9, 0.0], np.float32),
                              "words": _strings([["le", "chat", "</s>", ""]])[0],
                              "word_probabilities": np.array([0.5, 0.125, 0.9, 0.0], np.float32),
                              "nbest_tokens": _strings([["le", "</s>", ""], ["</s>", "", ""]]),
                              "nbest_token_probabilities": np.array([[0.5, 0.9, 0.0], [0.1, 0.0, 0.0]], np.float32),
                              "mean_log_prob": np.float32(-0.7)})
    assert instance["token_probabilities"].tolist() == [0.5, 0.25, 0.5, 0.8999999761581421]
    assert instance["word_probabilities"].tolist() == [0.5, 0.125, 0.8999999761581421]
    assert [values.tolist() for values in instance["nbest_token_probabilities"]] == [[0.5, 0.8999999761581421],
                                                                                     [0.10000000149011612]]
    assert instance["mean_log_prob"] == np.float32(-0.7)
