"""One training update under tf.distribute, and the loss it differentiates."""

import tensorflow as tf

from data_pipeline.constants import PAD_ID


def make_train_step(
    model,
    optimizer,
    next_batch,
    strategy,
    clip_norm,
    local_replicas=None,
    jit_compile=False,
    jit_length_multiple=4,
    label_smoothing=0.0,
    loss_normalization="tokens",
):
    """One update of `Trainer` as a `tf.function` returning the step's statistics.

    Args:
        model: an `EncoderDecoderModel` created under `strategy.scope()`.
        optimizer: a built Keras optimizer.
        next_batch: callable returning this worker's minibatch, a dict of int `(batch, len)`
            `source_ids` and `target_ids` (traced once: `lambda: next(iterator)`).
        strategy: the `tf.distribute.Strategy` of the model.
        clip_norm: the global gradient norm is rescaled to at most this; 0: no clipping.
        local_replicas: replicas of this worker (default: all replicas in sync).
        jit_compile: compile each replica's forward and backward pass with XLA. Its source and target
            ids are first right-padded with `PAD_ID` to a multiple of `jit_length_multiple` tokens, so
            that XLA compiles one program per length bucket, not per batch; padding changes no loss
            and no gradient (padded positions are masked).
        jit_length_multiple: the bucket width of `jit_compile`.
        label_smoothing: ε of the training loss `(1 - ε) NLL + ε (-mean_k log p_k)` per token (the
            target distribution mixed with a uniform one over the K_y words, as Keras'
            `label_smoothing`); the reported `nll_sum` is always the plain NLL.
        loss_normalization: the summed loss of the global minibatch is divided by its target
            `"tokens"` or its `"sentences"` (OpenNMT-py's default).

    Returns:
        `train_step()`, a `tf.function` returning a dict of `nll_sum`, `target_tokens`, `sentences`,
        `gradient_norm` and `finite`.
    """
    local_replicas = local_replicas or strategy.num_replicas_in_sync

    def nll_and_gradients(source_ids, target_ids):
        with tf.GradientTape() as tape:
            nll_sum, loss_sum = training_loss(model, source_ids, target_ids, label_smoothing)
        gradients = [tf.convert_to_tensor(g) for g in tape.gradient(loss_sum, model.trainable_variables)]
        return nll_sum, gradients

    if jit_compile:
        compiled = tf.function(nll_and_gradients, jit_compile=True)

        def forward_backward(source_ids, target_ids):
            """The same pass under XLA, on ids padded to length buckets."""
            return compiled(*(pad_to_multiple(ids, jit_length_multiple) for ids in (source_ids, target_ids)))
    else:
        forward_backward = nll_and_gradients

    def replica_step(batch):
        nll_sum, gradients = forward_backward(batch["source_ids"], batch["target_ids"])
        return nll_sum, batch_size_in_tokens_and_sentences(batch["target_ids"]), gradients

    def total(value):
        return strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None)

    @tf.function(autograph=False)
    def train_step():
        per_replica_batch = split_over_replicas(strategy, next_batch(), local_replicas)
        nll_sum, (target_tokens, sentences), gradients = strategy.run(replica_step, args=(per_replica_batch,))
        nll_sum, target_tokens, sentences = total(nll_sum), total(target_tokens), total(sentences)
        denominator = target_tokens if loss_normalization == "tokens" else sentences
        summed = [total(g) for g in gradients]  # of the summed loss
        gradient_norm = tf.linalg.global_norm(summed) / denominator  # of the loss per token (or sentence)
        finite = tf.logical_and(tf.math.is_finite(nll_sum), tf.math.is_finite(gradient_norm))
        # The division by the denominator and tf.clip_by_global_norm's rescaling in one multiplication.
        scale = (clip_norm * tf.minimum(1.0 / gradient_norm, 1.0 / clip_norm) if clip_norm else 1.0) / denominator
        clipped = [g * scale for g in summed]

        def apply():
            optimizer.apply(clipped, model.trainable_variables)
            return tf.constant(True)

        tf.cond(finite, apply, lambda: tf.constant(False))
        return dict(nll_sum=nll_sum, target_tokens=target_tokens, sentences=sentences, gradient_norm=gradient_norm,
                    finite=finite)

    return train_step


def split_over_replicas(strategy, batch, local_replicas):
    """Each of this worker's `local_replicas` replicas gets a contiguous slice of its minibatch."""

    def replica_slice(context):
        index = context.replica_id_in_sync_group % local_replicas
        size = tf.shape(batch["target_ids"])[0]
        start, end = size * index // local_replicas, size * (index + 1) // local_replicas
        return {name: ids[start:end] for name, ids in batch.items()}

    return strategy.experimental_distribute_values_from_function(replica_slice)


def pad_to_multiple(ids, multiple):
    """Right-pads ids `[batch, length]` with `PAD_ID` to a length that is a multiple of `multiple`."""
    length = tf.shape(ids)[1]
    padding = (multiple - length % multiple) % multiple
    return tf.pad(ids, [[0, 0], [0, padding]], constant_values=PAD_ID)  # [batch, bucket length]


def batch_size_in_tokens_and_sentences(target_ids):
    """(real target tokens, sentences) of a batch, as float32 scalars."""
    return tf.reduce_sum(tf.cast(target_ids > 0, tf.float32)), tf.cast(tf.shape(target_ids)[0], tf.float32)


def training_loss(model, source_ids, target_ids, label_smoothing=0.0):
    """`(nll_sum, loss_sum)` of a batch under teacher forcing with dropout (`training=True`).

    `nll_sum` is -Σ log p(y_i | y_<i, x) over the real target tokens; `loss_sum` the same sum of
    `(1 - ε) (-log p(y_i)) + ε (-mean_k log p_k)`, with ε = `label_smoothing` (equal to `nll_sum` at 0).
    """
    logits, _ = model.teacher_forcing(source_ids, target_ids, training=True)
    logits = tf.cast(logits, tf.float32)  # [batch, tgt_len, K_y]
    target_ids = tf.cast(target_ids, tf.int32)
    nll, loss = token_losses(logits, target_ids, label_smoothing)  # [batch, tgt_len] each
    is_token = tf.cast(tf.not_equal(target_ids, PAD_ID), tf.float32)  # [batch, tgt_len]
    return tf.reduce_sum(nll * is_token), tf.reduce_sum(loss * is_token)


def token_losses(logits, target_ids, label_smoothing):
    """`(nll, loss)` per target position `[batch, tgt_len]`: -log p(y_i) and `(1 - ε) (-log p(y_i)) + ε (-mean_k
    log p_k)`, from float32 `logits` `[batch, tgt_len, K_y]` and int32 `target_ids` `[batch, tgt_len]`.

    The gradient is written out, `softmax - (1 - ε) onehot(y_i) - ε / K_y` for the loss (`softmax - onehot(y_i)`
    for the NLL), from the softmax's exponentials kept from the forward pass: differentiated op by op, the
    log-sum-exp, the target logits and the smoothing term each gave a `[batch, tgt_len, K_y]` gradient to be summed,
    about twice the passes over the logits (docs/performance.md, "In the code").
    """
    epsilon = float(label_smoothing)

    @tf.custom_gradient
    def losses(logits):
        row_max = tf.reduce_max(logits, axis=-1, keepdims=True)  # [batch, tgt_len, 1]
        exponentials = tf.exp(logits - row_max)  # [batch, tgt_len, K_y]
        sum_exp = tf.reduce_sum(exponentials, axis=-1)  # [batch, tgt_len]
        log_normalizer = tf.squeeze(row_max, -1) + tf.math.log(sum_exp)  # [batch, tgt_len]
        nll = log_normalizer - tf.gather(logits, target_ids, batch_dims=2)  # [batch, tgt_len]
        loss = nll
        if epsilon:
            loss = (1.0 - epsilon) * nll + epsilon * (log_normalizer - tf.reduce_mean(logits, axis=-1))

        def gradient(d_nll, d_loss):
            softmax_weight = (d_nll + d_loss) / sum_exp  # [batch, tgt_len]
            d_logits = exponentials * softmax_weight[..., None]  # [batch, tgt_len, K_y]
            if epsilon:
                d_logits -= (epsilon / tf.cast(tf.shape(logits)[-1], tf.float32) * d_loss)[..., None]
            positions = tf.stack(tf.meshgrid(tf.range(tf.shape(target_ids)[0]), tf.range(tf.shape(target_ids)[1]),
                                             indexing="ij") + [target_ids], axis=-1)  # [batch, tgt_len, 3]
            return tf.tensor_scatter_nd_sub(d_logits, positions, d_nll + (1.0 - epsilon) * d_loss)

        return (nll, loss), gradient

    return losses(logits)
