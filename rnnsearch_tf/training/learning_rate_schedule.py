"""The learning rate of training: linear warm-up, then decay whenever dev BLEU stops improving."""

import keras
import tensorflow as tf


class LearningRateSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """`learning_rate * min(1, (step + 1) / warmup_steps) * scale`.

    The warm-up is a function of the optimizer's update count; `scale` is a variable that the
    trainer multiplies by `TrainingConfig.learning_rate_decay` when dev BLEU has not improved for
    `decay_patience` validations ("plateau" scheduling, as Joey NMT's and Nematus'
    `lrate_decay_patience`). The trainer checkpoints `scale`, so a resumed run keeps its decays.

    Args:
        learning_rate: the rate after warm-up, before any decay.
        warmup_steps: updates over which the rate rises linearly from `learning_rate / warmup_steps`
            (0: no warm-up).
    """

    def __init__(self, learning_rate, warmup_steps=0):
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.scale = tf.Variable(1.0, trainable=False, dtype=tf.float32, name="learning_rate_scale")

    def __call__(self, step):
        rate = tf.constant(self.learning_rate, tf.float32) * self.scale
        if not self.warmup_steps:
            return rate
        warmup = tf.minimum(1.0, tf.cast(step + 1, tf.float32) / float(self.warmup_steps))
        return rate * warmup

    def decay(self, factor):
        """Multiplies the rate by `factor` from the next update on."""
        self.scale.assign(self.scale * factor)

    def get_config(self):
        return {"learning_rate": self.learning_rate, "warmup_steps": self.warmup_steps}
