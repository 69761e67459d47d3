"""Model-agnostic search strategies over `symbols_to_logits_fn(ids, step, state)`."""

from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.greedy_search import GreedySearch
from rnnsearch_tf.search.sampler import Sampler

__all__ = ["BeamSearch", "GreedySearch", "Sampler"]
