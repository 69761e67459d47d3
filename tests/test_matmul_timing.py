"""bench.matmul_timing: the backward products are TensorFlow's, each shape is timed once, and the timer measures."""

import tensorflow as tf

from bench import matmul_timing


def _matmul_products(graph):
    """(M, K, N, transposed) of every MatMul in `graph`, in the timer's convention."""
    products = set()
    for operation in graph.get_operations():
        if operation.type != "MatMul":
            continue
        left, right = (tensor.shape.as_list() for tensor in operation.inputs)
        transposed = "a" if operation.get_attr("transpose_a") else "b" if operation.get_attr("transpose_b") else None
        shape_m, shape_k = left[::-1] if transposed == "a" else left
        shape_n = right[0] if transposed == "b" else right[1]
        products.add((shape_m, shape_k, shape_n, transposed))
    return products


def test_the_backward_products_are_the_ones_tensorflow_runs():
    @tf.function(autograph=False)
    def update(inputs, weight):
        with tf.GradientTape() as tape:
            tape.watch([inputs, weight])
            loss = tf.reduce_sum(tf.matmul(inputs, weight))
        return tape.gradient(loss, [inputs, weight])

    graph = update.get_concrete_function(tf.TensorSpec([6, 4]), tf.TensorSpec([4, 9])).graph
    assert _matmul_products(graph) == set(matmul_timing.row_products(6, 4, 9, backward=True))
    assert matmul_timing.row_products(6, 4, 9, backward=False) == [(6, 4, 9, None)]


def test_each_distinct_product_is_timed_once():
    matmuls = [("first", 8, 16, 32, 3), ("second", 8, 16, 32, 2), ("third", 4, 8, 8, 1)]
    seconds = matmul_timing.products_seconds(matmuls, backward=True, rounds=1, seconds_per_sample=0.001)
    assert set(seconds) == set(matmul_timing.row_products(8, 16, 32, True) + matmul_timing.row_products(4, 8, 8, True))
    assert all(value > 0 for value in seconds.values())


def test_a_product_with_512_times_the_flops_takes_longer():
    small = matmul_timing.seconds_per_product(8, 64, 64, rounds=3, seconds_per_sample=0.02)
    large = matmul_timing.seconds_per_product(256, 256, 512, rounds=3, seconds_per_sample=0.02)
    assert large > 4 * small


def test_a_product_loop_multiplies_in_the_dtype_asked():
    for dtype in (tf.float32, tf.bfloat16):
        loop = matmul_timing.product_loop(8, 16, 32, "b", dtype)
        graph = loop.get_concrete_function(tf.constant(1)).graph
        bodies = [function.graph for function in graph._functions.values()]
        matmuls = [operation for body in bodies for operation in body.get_operations() if operation.type == "MatMul"]
        assert [operation.get_attr("T") for operation in matmuls] == [dtype]
        assert [_matmul_products(body) for body in bodies if _matmul_products(body)] == [{(8, 16, 32, "b")}]
    assert matmul_timing.seconds_per_product(8, 16, 32, rounds=1, seconds_per_sample=0.001, dtype=tf.bfloat16) > 0
