"""This machine's speed at a matmul's shape, the one timer every bench shares (gemm_limits, profile_step,
train_throughput, peer_comparison): no flags, so a bench or a test can import it beside any command's flags.

A product is timed in a graph loop of back-to-back calls, each input depending on the last output (so nothing is
hoisted or run in parallel), after one call that traces the loop and warms oneDNN up; the loop's length is
chosen so that one sample lasts about `seconds_per_sample`, and the median of `rounds` samples is reported.
"""

import statistics
import time

import numpy as np
import tensorflow as tf


def timed_loop(route, activation):
    """A graph loop of `repeats` back-to-back calls of `route` on `activation`, each depending on the last."""

    @tf.function(autograph=False)
    def loop(repeats):
        def body(index, total):
            scale = tf.cast(1.0 + total * 1e-30, activation.dtype)
            return index + 1, total + tf.cast(route(activation * scale)[0, 0], tf.float32)

        return tf.while_loop(lambda index, _: index < repeats, body, (tf.constant(0), tf.constant(0.0)))[1]

    return loop


def seconds_per_call(loop, repeats):
    """Wall seconds of one of `repeats` calls of a `timed_loop`."""
    start = time.perf_counter()
    loop(tf.constant(repeats)).numpy()
    return (time.perf_counter() - start) / repeats


def repeats_for(loop, seconds_per_sample):
    """Traces `loop`, then the number of calls that lasts about `seconds_per_sample`."""
    seconds_per_call(loop, 1)  # traces, warms oneDNN up
    return max(1, int(seconds_per_sample / seconds_per_call(loop, 2)))


def product_loop(shape_m, shape_k, shape_n, transposed=None, dtype=tf.float32):
    """The `timed_loop` of one product `[M, K] x [K, N]` in `dtype` (float32 or bfloat16: both operands and the
    product) of random operands; `transposed` "a" or "b": that operand is stored transposed, as the backward pass's
    are (dX = dY W^T, dW = X^T dY)."""
    random = np.random.default_rng(0)
    left = random.normal(size=(shape_k, shape_m) if transposed == "a" else (shape_m, shape_k)).astype(np.float32)
    right = tf.cast(random.normal(0.0, 0.05, size=(shape_n, shape_k) if transposed == "b" else (shape_k, shape_n))
                    .astype(np.float32), dtype)
    return timed_loop(lambda activation: tf.matmul(activation, right, transpose_a=transposed == "a",
                                                   transpose_b=transposed == "b"), tf.cast(left, dtype))


def seconds_per_product(shape_m, shape_k, shape_n, transposed=None, rounds=3, seconds_per_sample=0.05,
                        dtype=tf.float32):
    """Median seconds of one `product_loop` product."""
    loop = product_loop(shape_m, shape_k, shape_n, transposed, dtype)
    repeats = repeats_for(loop, seconds_per_sample)
    return statistics.median(seconds_per_call(loop, repeats) for _ in range(rounds))


def products_seconds(matmuls, backward, rounds=3, seconds_per_sample=0.05, dtype=tf.float32):
    """{(M, K, N, transposed): seconds of one product in `dtype`} for `matmuls` (`(name, M, K, N, count)` rows), each
    shape timed once; with `backward` each row's two backward products too."""
    seconds = {}
    for _, shape_m, shape_k, shape_n, _ in matmuls:
        for shape in row_products(shape_m, shape_k, shape_n, backward):
            if shape not in seconds:
                seconds[shape] = seconds_per_product(*shape, rounds, seconds_per_sample, dtype)
    return seconds


def row_products(shape_m, shape_k, shape_n, backward):
    """The products of one `[M, K] x [K, N]` row: itself, and with `backward` dX = dY W^T and dW = X^T dY."""
    shapes = [(shape_m, shape_k, shape_n, None)]
    if backward:
        shapes += [(shape_m, shape_n, shape_k, "b"), (shape_k, shape_m, shape_n, "a")]
    return shapes


def limit_seconds(matmuls, backward, rounds=3, seconds_per_sample=0.05, dtype=tf.float32):
    """Seconds `matmuls` (`(name, M, K, N, count)` rows) take at this machine's speed in `dtype` at their shapes,
    each product timed alone; with `backward` each row's two backward products too."""
    seconds = products_seconds(matmuls, backward, rounds, seconds_per_sample, dtype)
    return sum(count * seconds[shape] for _, shape_m, shape_k, shape_n, count in matmuls
               for shape in row_products(shape_m, shape_k, shape_n, backward))
