"""The gated hidden unit of Cho et al. 2014 as used by RNNsearch (Bahdanau et al. 2014, A.1.1)."""

import keras
import tensorflow as tf

from rnnsearch_tf.layers.initializers import initializer


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class GatedRecurrentUnit(keras.layers.Layer):
    """A layer of n gated hidden units with the reset gate applied before U.

    Bahdanau et al. 2014, Appendix A.1.1 / A.2.1 (biases written out):

        z_i = σ(W_z x_i + b_z + U_z h_{i-1})
        r_i = σ(W_r x_i + b_r + U_r h_{i-1})
        h̃_i = tanh(W x_i + b + U [r_i ∘ h_{i-1}])
        h_i = (1 - z_i) ∘ h_{i-1} + z_i ∘ h̃_i,   h_0 = 0

    The three input matrices are fused into one kernel `[input_dim, 3n]` with columns
    `[W_z | W_r | W]` (x @ kernel orientation), so a whole sequence is projected by one matmul before
    the recurrence (`project_inputs`); U_z and U_r are fused into `[n, 2n]`. There is no recurrent bias.
    A decoder adds further terms (C c_i) to the projected input before calling `transition`.

    Initialisation (`initializers.py`): "paper" (Appendix B.1) makes U, U_z, U_r random orthogonal,
    the W's N(0, 0.01²) and the biases zero; every fused matrix is initialised block by block.

    Args:
        units: n, the number of gated hidden units.
        initializer: "paper", "uniform" or "xavier" (`initializers.INITIALIZERS`).

    Call arguments:
        inputs: float `(batch_size, T, input_dim)`. Padding must come after the real positions
            (states at padded positions are computed but meaningless).

    Returns:
        float `(batch_size, T, units)`: h_1 … h_T.

    Example:
    >>> unit = GatedRecurrentUnit(units=8)
    >>> unit(keras.ops.ones((2, 5, 3))).shape
    TensorShape([2, 5, 8])
    """

    def __init__(self, units, initializer="paper", **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.initializer = initializer

    def build(self, inputs_shape):
        input_dim = inputs_shape[-1]
        self.kernel = self.add_weight(
            name="kernel",
            shape=(input_dim, 3 * self.units),
            initializer=initializer(self.initializer, "input", blocks=3),
        )
        self.bias = self.add_weight(
            name="bias", shape=(3 * self.units,), initializer=initializer(self.initializer, "bias")
        )
        self.recurrent_gate_kernel = self.add_weight(
            name="recurrent_gate_kernel",
            shape=(self.units, 2 * self.units),
            initializer=initializer(self.initializer, "recurrent", blocks=2),
        )
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel",
            shape=(self.units, self.units),
            initializer=initializer(self.initializer, "recurrent"),
        )

    def project_inputs(self, inputs):
        """W_z x + b_z, W_r x + b_r, W x + b for any number of positions: `(..., 3 * units)`.

        tensordot flattens the positions into one `[batch * T, input_dim]` matmul: a rank-3 tf.matmul
        would be a batched matmul whose kernel gradient is one `[input_dim, 3n]` product per sentence, summed.
        """
        return tf.tensordot(inputs, self._weight(self.kernel), axes=1) + self._weight(self.bias)

    def transition(self, projected_inputs, previous_state):
        """One step of the recurrence: `(batch, 3n)` projected inputs and h_{i-1} `(batch, n)` -> h_i."""
        new_state, _ = _step(
            projected_inputs, previous_state, self._weight(self.recurrent_gate_kernel),
            self._weight(self.recurrent_kernel),
        )
        return new_state

    def _weight(self, variable):
        """A weight in the compute dtype: step-by-step callers (search) run outside Keras' autocasting."""
        return tf.cast(variable, self.compute_dtype)

    def call(self, inputs):
        if inputs.shape.rank != 3:
            raise ValueError(
                f"GatedRecurrentUnit expects inputs (batch_size, T, input_dim), got shape {inputs.shape}; "
                "use `transition` for a single step"
            )
        projected = tf.transpose(self.project_inputs(inputs), [1, 0, 2])  # [T, batch, 3n]
        states = _recurrence(
            projected, self._weight(self.recurrent_gate_kernel), self._weight(self.recurrent_kernel)
        )  # [T, batch, n]
        return tf.transpose(states, [1, 0, 2])  # [batch, T, n]

    def compute_output_shape(self, inputs_shape):
        return (*inputs_shape[:-1], self.units)

    def paper_weights(self, suffix=""):
        """{paper name + suffix: array [in, out]} for W, W_z, W_r, U, U_z, U_r and their biases."""
        n = self.units
        kernel = keras.ops.convert_to_numpy(self.kernel)
        bias = keras.ops.convert_to_numpy(self.bias)
        gate_kernel = keras.ops.convert_to_numpy(self.recurrent_gate_kernel)
        weights = {}
        for index, name in enumerate(("W_z", "W_r", "W")):
            weights[name + suffix] = kernel[:, index * n : (index + 1) * n]
            weights["b_" + name + suffix] = bias[index * n : (index + 1) * n]
        weights["U_z" + suffix] = gate_kernel[:, :n]
        weights["U_r" + suffix] = gate_kernel[:, n:]
        weights["U" + suffix] = keras.ops.convert_to_numpy(self.recurrent_kernel)
        return weights

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "initializer": self.initializer})
        return config


def _step(projected_inputs, previous_state, recurrent_gate_kernel, recurrent_kernel):
    """h_i and r_i ∘ h_{i-1}, both `(batch, n)`, from the projected inputs `(batch, 3n)`, h_{i-1}, [U_z U_r] and U."""
    n = recurrent_kernel.shape[0]
    # tf.split, not slices: its gradient is one concat, a slice's a zero-filled tensor per slice.
    projected_gates, projected_candidate = tf.split(projected_inputs, [2 * n, n], axis=-1)  # [batch, 2n], [batch, n]
    gate_inputs = projected_gates + tf.matmul(previous_state, recurrent_gate_kernel)  # [batch, 2n]
    update_gate, reset_gate = tf.split(tf.sigmoid(gate_inputs), 2, axis=-1)  # z_i, r_i: [batch, n]
    reset_state = reset_gate * previous_state  # r_i ∘ h_{i-1}
    candidate = tf.tanh(projected_candidate + tf.matmul(reset_state, recurrent_kernel))
    return (1.0 - update_gate) * previous_state + update_gate * candidate, reset_state


@tf.custom_gradient
def _recurrence(projected, recurrent_gate_kernel, recurrent_kernel):
    """h_1 … h_T `[T, batch, n]` from h_0 = 0 and the projected inputs `[T, batch, 3n]`.

    The recurrent weights' gradients are taken after the loop, each one `[n, T * batch]` product,
    instead of a `K = batch` product added up at every position by the loop's own gradient: the loop
    sees the weights as constants, and the gradient of a position's projected input is that of its gate
    pre-activations (the two are summed), so dU_z|U_r = Σ_i h_{i-1}ᵀ δgates_i and dU = Σ_i (r_i ∘ h_{i-1})ᵀ δh̃_i.
    """
    n = recurrent_kernel.shape[0]
    # The loop reads its inputs through stop_gradient, so that only this function's tape watches them: a
    # tape outside (the update's) watching them too would make TensorFlow build the loop's gradient while
    # tracing the loop, before this function's own gradient builds it again.
    projected = tf.stop_gradient(projected)
    constant_gate_kernel, constant_kernel = tf.stop_gradient(recurrent_gate_kernel), tf.stop_gradient(recurrent_kernel)
    initial_state = tf.zeros_like(projected[0, :, :n])  # h_0: [batch, n]
    with tf.GradientTape() as tape:
        tape.watch(projected)
        states, reset_states = tf.scan(
            lambda carried, projected_step: _step(projected_step, carried[0], constant_gate_kernel, constant_kernel),
            projected,
            initializer=(initial_state, initial_state),
        )  # [T, batch, n] each

    def gradient(state_gradients):
        projected_gradients = tape.gradient(states, projected, output_gradients=state_gradients)  # [T, batch, 3n]
        previous_states = tf.concat([initial_state[tf.newaxis], states[:-1]], axis=0)  # h_{i-1}: [T, batch, n]
        gate_gradients, candidate_gradients = tf.split(projected_gradients, [2 * n, n], axis=-1)
        return (
            projected_gradients,
            tf.tensordot(previous_states, gate_gradients, axes=[[0, 1], [0, 1]]),  # [n, 2n]
            tf.tensordot(reset_states, candidate_gradients, axes=[[0, 1], [0, 1]]),  # [n, n]
        )

    return states, gradient
