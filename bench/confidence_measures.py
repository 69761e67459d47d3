"""What `bench.confidence` measures, apart from its flags (so that tests import it beside any command's):
the ranking measure and the labelling of output tokens by their reference."""

import numpy as np
import tensorflow as tf


def auc(scores, labels):
    """The area under the ROC curve of `scores` for boolean `labels`: P(score of a positive > score of a
    negative), ties counting one half (the Mann-Whitney U statistic over the positives' mean ranks)."""
    scores, labels = np.asarray(scores, np.float64), np.asarray(labels, bool)
    positives, negatives = labels.sum(), (~labels).sum()
    if not positives or not negatives:
        raise ValueError("the AUC needs both labels")
    _, tie_group, tie_counts = np.unique(scores, return_inverse=True, return_counts=True)
    first_ranks = np.cumsum(tie_counts) - tie_counts + 1  # the 1-based rank of each group's first score
    ranks = (first_ranks + (tie_counts - 1) / 2)[tie_group]  # each tie group at its mean rank
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def labelled_tokens(results, references, target_codec):
    """(probability, in the reference) of every output token of every translation, `</s>` excluded."""
    reference_tokens = target_codec.tokenize(tf.constant(references)).to_list()
    probabilities, labels = [], []
    for result, tokens in zip(results, reference_tokens):
        in_reference = {token.decode("utf-8") for token in tokens}
        probabilities += result["token_probabilities"][: len(result["tokens"])]
        labels += [token in in_reference for token in result["tokens"]]
    return np.array(probabilities), np.array(labels, bool)
