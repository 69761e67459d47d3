"""Training under tf.distribute: the trainer and its parts, validation, checkpoint averaging."""

from rnnsearch_tf.training.parent_model import ParentModel
from rnnsearch_tf.training.trainer import Trainer
from rnnsearch_tf.training.training_config import TrainingConfig
from rnnsearch_tf.training.training_diverged_error import TrainingDivergedError

__all__ = ["ParentModel", "Trainer", "TrainingConfig", "TrainingDivergedError"]
