"""Keras' Adam and Adadelta with each variable's update in one TensorFlow kernel.

Keras 3 writes an update as about ten element-wise ops per variable (each a pass over the variable and
its slots); TensorFlow's `ResourceApplyAdam` and `ResourceApplyAdadelta` compute the same update in one
pass. The slots, their names and the checkpoints are Keras' own: a checkpoint of one loads into the other.
"""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class FusedAdam(keras.optimizers.Adam):
    """`keras.optimizers.Adam` (Kingma & Ba 2015, ε outside the square root), one kernel per variable:

        m_t = β_1 m + (1 - β_1) g,   v_t = β_2 v + (1 - β_2) g²,
        θ_t = θ - lr √(1 - β_2^t) / (1 - β_1^t) · m_t / (√v_t + ε)
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.amsgrad:
            raise ValueError("FusedAdam has no amsgrad: use keras.optimizers.Adam")

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        index = self._get_variable_index(variable)
        step = tf.cast(self.iterations + 1, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle,
            m=self._momentums[index].handle,
            v=self._velocities[index].handle,
            beta1_power=tf.pow(tf.cast(self.beta_1, dtype), step),
            beta2_power=tf.pow(tf.cast(self.beta_2, dtype), step),
            lr=tf.cast(learning_rate, dtype),
            beta1=tf.cast(self.beta_1, dtype),
            beta2=tf.cast(self.beta_2, dtype),
            epsilon=tf.cast(self.epsilon, dtype),
            grad=tf.cast(gradient, dtype),
        )


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class FusedAdadelta(keras.optimizers.Adadelta):
    """`keras.optimizers.Adadelta` (Zeiler 2012, the paper's optimizer), one kernel per variable:

        E[g²]_t = ρ E[g²] + (1 - ρ) g²,   Δθ = -√(E[Δθ²] + ε) / √(E[g²]_t + ε) · g,
        E[Δθ²]_t = ρ E[Δθ²] + (1 - ρ) Δθ²,   θ_t = θ + lr Δθ
    """

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        index = self._get_variable_index(variable)
        tf.raw_ops.ResourceApplyAdadelta(
            var=variable.handle,
            accum=self._accumulated_grads[index].handle,
            accum_update=self._accumulated_delta_vars[index].handle,
            lr=tf.cast(learning_rate, dtype),
            rho=tf.cast(self.rho, dtype),
            epsilon=tf.cast(self.epsilon, dtype),
            grad=tf.cast(gradient, dtype),
        )
