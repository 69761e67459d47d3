"""The paper's evaluation: Table 1 BLEU, Figure 2, Figure 3, Table 2, and learning curves."""

from rnnsearch_tf.evaluation.evaluator import Evaluator

__all__ = ["Evaluator"]
