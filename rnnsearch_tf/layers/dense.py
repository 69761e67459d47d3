"""`keras.layers.Dense` whose bias gradient is summed in float32 when it trains in bf16."""

import keras
import tensorflow as tf


def add_bias(x, bias):
    """`x + bias` (x `[..., k]`, bias `[k]`, both bf16) whose gradient for the bias, the sum of the upstream gradient
    over every row (a training batch's positions: 1,280 at the peer's size), is a product with a row of ones, which
    oneDNN accumulates in float32. The gradient of TensorFlow's own bias addition (`BiasAddGrad`) sums a bf16 tensor
    in bf16, whose 8-bit mantissa drops the small terms: 23% off on a softmax-like gradient (tests/test_dense.py),
    b_U_o's and b_W_o's 8-16% off in a training batch, and a bf16-trained model translated 5 BLEU worse after 300
    updates (docs/performance.md, *In the code*).
    """

    @tf.custom_gradient
    def added(x, bias):
        def gradient(upstream):
            rows = tf.reshape(upstream, [-1, tf.shape(upstream)[-1]])  # [rows, k]
            ones = tf.ones([1, tf.shape(rows)[0]], rows.dtype)  # [1, rows]
            return upstream, tf.reshape(tf.matmul(ones, rows), [-1])  # [k]

        return x + bias, gradient

    return added(x, bias)


@keras.saving.register_keras_serializable(package="rnnsearch_tf")
class Dense(keras.layers.Dense):
    """`keras.layers.Dense` that adds its bias with `add_bias` when training in bf16; elsewhere (float32, decoding)
    Keras' own addition, which TensorFlow fuses with the product."""

    def call(self, inputs, training=None):
        outputs = keras.ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            if training and outputs.dtype == tf.bfloat16:
                outputs = add_bias(outputs, tf.cast(self.bias, outputs.dtype))
            else:
                outputs = keras.ops.add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs
