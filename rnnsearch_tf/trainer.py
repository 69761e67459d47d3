"""The training loop of Bahdanau et al. 2014, Appendix B.2, under tf.distribute."""

import json
import os
import time

import keras
import numpy as np
import tensorflow as tf
from absl import logging
from tensorboard.plugins import projector
from tensorboard.plugins.hparams import api as hparams_api

from data_pipeline.training_input import TrainingInput
from rnnsearch_tf.constants import PAD_ID
from rnnsearch_tf.learning_rate_schedule import LearningRateSchedule
from rnnsearch_tf.model_dir import MODEL_CLASSES, ModelDir
from rnnsearch_tf.training_diverged_error import TrainingDivergedError
from rnnsearch_tf.validator import Validator


HISTORY_FIELDS = (
    "step", "epoch", "hours", "train_nll_per_sentence", "dev_nll_per_sentence", "dev_bleu", "learning_rate"
)


class Trainer:
    """Trains an RNNsearch or RNNencdec model on a built data directory.

    Each update: the global minibatch is split over the replicas; every replica sums the NLL of its
    sentences and differentiates that sum; the gradients are summed over replicas and divided by the
    global number of target tokens (so the loss is the summed NLL over the global batch divided by the
    global token count, whatever the replica count), the whole gradient's L2 norm is rescaled to at
    most `clip_norm`, and the optimizer (Adadelta, ρ = 0.95, ε = 1e-6) applies it. A non-finite loss or
    gradient skips the update; `max_nonfinite_steps` of them in a row stop training.

    Checkpoints (`tf.train.CheckpointManager`) hold the model, the optimizer slots, the step and the
    data iterator, so a resumed run continues with the batch it would have read next. Every
    `validate_every` updates: dev NLL per sentence and dev BLEU (`Validator`); the checkpoint with the
    best dev BLEU is kept in `best/`, and `patience` validations without improvement stop training.

    Args:
        model_config: `ModelConfig`; its vocabulary sizes must match the data directory's.
        training_config: `TrainingConfig`.
        strategy: a `tf.distribute.Strategy` (default: `MirroredStrategy()`).
    """

    def __init__(self, model_config, training_config, strategy=None):
        self.model_config = model_config
        self.config = training_config
        self.strategy = strategy or tf.distribute.MirroredStrategy()
        self.model_dir = ModelDir(training_config.model_dir)
        workers, worker_index = self._workers()
        self.is_chief = worker_index == 0
        # Every worker saves checkpoints (saving is collective); only the chief's go to model_dir.
        self.worker_dir = ModelDir(
            self.model_dir.path if self.is_chief else os.path.join(self.model_dir.path, "workers", str(worker_index))
        )
        self.metadata = self._read_metadata()
        self._check_vocabulary_sizes()

    def _read_metadata(self):
        path = os.path.join(self.config.data_dir, "metadata.json")
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"{path} is missing: --data_dir must be the --output_dir of `python -m data_pipeline.build`"
            )
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)

    def _check_vocabulary_sizes(self):
        for side in ("source", "target"):
            data_size = self.metadata["vocabularies"][side]["size"]
            model_size = getattr(self.model_config, f"{side}_vocab_size")
            if data_size != model_size:
                raise ValueError(
                    f"{self.config.data_dir} has a {side} vocabulary of {data_size} entries but the model "
                    f"config says {side}_vocab_size={model_size}"
                )

    def _prepare_model_dir(self):
        if not self.is_chief:
            os.makedirs(self.worker_dir.path, exist_ok=True)
            return
        description = {"model": self.config.model, "config": self.model_config.to_dict()}
        if os.path.exists(self.model_dir.file("model.json")):
            if self.model_dir.read_json("model.json") != description:
                raise ValueError(
                    f"{self.model_dir.path} holds a different model ({self.model_dir.file('model.json')}); "
                    "resume with the same settings or choose another --model_dir"
                )
            return
        self.model_dir.write_model(
            self.config.model,
            self.model_config,
            {
                "source_language": self.metadata["source_language"],
                "target_language": self.metadata["target_language"],
                "corpus": self.metadata.get("corpus"),
                "data_dir": os.path.abspath(self.config.data_dir),
                "max_length": self.metadata["filters"]["max_length"],
            },
            os.path.join(self.config.data_dir, "source_vocab.tsv"),
            os.path.join(self.config.data_dir, "target_vocab.tsv"),
        )

    def _make_optimizer(self, schedule):
        if self.config.optimizer == "adadelta":
            return keras.optimizers.Adadelta(
                learning_rate=schedule, rho=self.config.adadelta_rho, epsilon=self.config.adadelta_epsilon
            )
        return keras.optimizers.Adam(learning_rate=schedule)

    def _workers(self):
        """(number of workers, this worker's index): (1, 0) without a cluster."""
        resolver = getattr(self.strategy, "cluster_resolver", None)
        if not isinstance(self.strategy, tf.distribute.MultiWorkerMirroredStrategy) or resolver is None:
            return 1, 0
        spec = resolver.cluster_spec()
        jobs = [job for job in ("chief", "worker") if job in spec.jobs]
        tasks = [(job, index) for job in jobs for index in range(spec.num_tasks(job))]
        return len(tasks), tasks.index((resolver.task_type, resolver.task_id))

    def _make_dataset(self):
        """This worker's share of every global minibatch, as a plain (checkpointable) dataset."""
        workers, worker_index = self._workers()
        training_input = TrainingInput(
            os.path.join(self.config.data_dir, "train-*.tfrecord.gz"),
            batch_size=self.config.batch_size,
            sort_window=self.config.sort_window,
            seed=self.config.seed,
            max_tokens=self.config.max_tokens,
            max_sequence_length=self.metadata["filters"]["max_length"] + 1,
        )
        if workers == 1:
            return training_input()
        return training_input(tf.distribute.InputContext(workers, worker_index, workers))

    def _make_train_step(self, model, optimizer, iterator):
        return make_train_step(
            model,
            optimizer,
            lambda: next(iterator),
            self.strategy,
            self.config.clip_norm,
            local_replicas=self.strategy.num_replicas_in_sync // self._workers()[0],
            jit_compile=self.config.jit_compile,
            jit_length_multiple=self.config.jit_length_multiple,
            label_smoothing=self.config.label_smoothing,
            loss_normalization=self.config.loss_normalization,
        )

    def train(self):
        """Runs until `train_steps`, `max_epochs`, early stopping; returns a summary dict."""
        config = self.config
        self._prepare_model_dir()
        keras.utils.set_random_seed(config.seed)
        schedule = self.schedule = LearningRateSchedule(config.learning_rate, config.warmup_steps)
        with self.strategy.scope():
            model = MODEL_CLASSES[config.model](self.model_config)
            optimizer = self.optimizer = self._make_optimizer(schedule)
            optimizer.build(model.trainable_variables)
        iterator = iter(self._make_dataset())
        progress = {
            name: tf.Variable(initial, trainable=False, name=name)
            for name, initial in (
                ("step", np.int64(0)),
                ("sentences_seen", np.int64(0)),
                ("training_seconds", np.float64(0)),
                ("best_bleu", np.float64(-1)),
                ("best_step", np.int64(0)),
                ("validations_without_improvement", np.int64(0)),
                ("validations_since_decay", np.int64(0)),
            )
        }
        checkpoint = tf.train.Checkpoint(
            model=model,
            optimizer=optimizer,
            iterator=iterator,
            learning_rate_scale=schedule.scale,
            dropout_random_states=model.dropout_random_states(),
            **progress,
        )
        manager = tf.train.CheckpointManager(checkpoint, self.worker_dir.checkpoint_dir, config.keep_checkpoints)
        best_manager = tf.train.CheckpointManager(
            checkpoint, self.worker_dir.best_checkpoint_dir, config.keep_best_checkpoints
        )
        if manager.latest_checkpoint:
            checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
            logging.info("Resumed from %s at step %d", manager.latest_checkpoint, int(progress["step"]))
        train_step = self._make_train_step(model, optimizer, iterator)
        validator = None
        if config.validate_every:
            validator = Validator(
                model,
                config.data_dir,
                config.dev_split,
                self.metadata["source_language"],
                self.metadata["target_language"],
                batch_size=config.batch_size,
                beam_size=config.beam_size,
                length_normalization=config.length_normalization,
                bleu_sentences=config.dev_bleu_sentences,
                attention_sentences=config.attention_sentences,
            )
        writers = {
            name: tf.summary.create_file_writer(self.model_dir.file(name)) if self.is_chief
            else tf.summary.create_noop_writer()
            for name in ("train", "dev")
        }
        if int(progress["step"]) == 0:
            with writers["train"].as_default():
                hparams_api.hparams(self._hparams())
        train_pairs = self.metadata["splits"]["train"]["kept"]
        window = _Window()
        stop_reason, nonfinite_in_row = None, 0
        started = time.time()
        seconds_before = float(progress["training_seconds"])
        last_train_nll = float("nan")
        while stop_reason is None:
            stop_reason = self._limit_reached(progress, train_pairs)
            if stop_reason is not None:
                break
            try:
                result = {name: value.numpy() for name, value in train_step().items()}
            except (StopIteration, tf.errors.OutOfRangeError):
                stop_reason = "the training data ran out"
                break
            step = int(progress["step"]) + 1
            progress["step"].assign(step)
            progress["sentences_seen"].assign_add(int(result["sentences"]))
            progress["training_seconds"].assign(seconds_before + time.time() - started)
            if not result["finite"]:
                nonfinite_in_row += 1
                logging.warning(
                    "step %d: non-finite loss or gradient (NLL sum %s, gradient norm %s); update skipped",
                    step, result["nll_sum"], result["gradient_norm"],
                )
                with writers["train"].as_default():
                    tf.summary.scalar("nonfinite_updates_in_a_row", nonfinite_in_row, step=step)
                if nonfinite_in_row >= config.max_nonfinite_steps:
                    manager.save(checkpoint_number=step)
                    raise TrainingDivergedError(
                        f"{nonfinite_in_row} updates in a row had a non-finite loss or gradient (step {step}); "
                        f"the last finite weights are in {manager.latest_checkpoint}. Lower --learning_rate or "
                        "--clip_norm, or check the data"
                    )
                continue
            nonfinite_in_row = 0
            window.add(result)
            is_last = self._limit_reached(progress, train_pairs) is not None
            if step % config.log_every == 0 or is_last:
                last_train_nll = window.nll_per_sentence()
                self._log_training(writers["train"], window, step, int(progress["sentences_seen"]) / train_pairs,
                                   float(progress["training_seconds"]))
                window = _Window()
            if step % config.checkpoint_every == 0:
                manager.save(checkpoint_number=step)
            if validator and (step % config.validate_every == 0 or is_last):
                if window.updates:
                    last_train_nll = window.nll_per_sentence()
                stop_reason = self._validate(
                    validator, model, writers["dev"], progress, manager, best_manager, step, train_pairs,
                    last_train_nll,
                )
        if manager.latest_checkpoint is None or not manager.latest_checkpoint.endswith(f"-{int(progress['step'])}"):
            manager.save(checkpoint_number=int(progress["step"]))
        for writer in writers.values():
            writer.flush()
        logging.info("Training stopped: %s", stop_reason)
        return {
            "stop_reason": stop_reason,
            "step": int(progress["step"]),
            "best_step": int(progress["best_step"]),
            "best_dev_bleu": float(progress["best_bleu"]),
            "latest_checkpoint": manager.latest_checkpoint,
            "best_checkpoint": best_manager.latest_checkpoint,
        }

    def _limit_reached(self, progress, train_pairs):
        """Why training must stop now (`train_steps`, `max_epochs`, `max_hours`), or None."""
        config = self.config
        if int(progress["step"]) >= config.train_steps:
            return f"reached train_steps={config.train_steps}"
        if config.max_epochs is not None and int(progress["sentences_seen"]) / train_pairs >= config.max_epochs:
            return f"reached max_epochs={config.max_epochs}"
        if config.max_hours is not None and float(progress["training_seconds"]) >= config.max_hours * 3600:
            return f"reached max_hours={config.max_hours}"
        return None

    def _hparams(self):
        values = {f"model/{k}": v for k, v in self.model_config.to_dict().items()}
        values.update({f"training/{k}": v for k, v in self.config.to_dict().items()})
        return {name: value for name, value in values.items() if isinstance(value, (bool, int, float, str))}

    def _log_training(self, writer, window, step, epoch, training_seconds):
        seconds = max(window.seconds(), 1e-9)
        remaining = (self.config.train_steps - step) * seconds / window.updates
        if self.config.max_hours is not None:
            remaining = min(remaining, max(self.config.max_hours * 3600 - training_seconds, 0.0))
        logging.info(
            "step %d | epoch %.2f | loss %.4f | NLL/sentence %.2f | %.0f target tokens/s | %.1f sentences/s | "
            "elapsed %s | ETA %s",
            step, epoch, window.loss(), window.nll_per_sentence(), window.target_tokens / seconds,
            window.sentences / seconds, _hours(training_seconds), _hours(remaining),
        )
        with writer.as_default():
            tf.summary.scalar("loss", window.loss(), step=step)
            tf.summary.scalar("nll_per_sentence", window.nll_per_sentence(), step=step)
            tf.summary.scalar("gradient_norm", window.gradient_norm(), step=step)
            tf.summary.scalar("updates_per_second", window.updates / seconds, step=step)
            tf.summary.scalar("tokens_per_second", window.target_tokens / seconds, step=step)
            tf.summary.scalar("sentences_per_second", window.sentences / seconds, step=step)
            tf.summary.scalar("epoch", epoch, step=step)
            tf.summary.scalar("learning_rate", self._learning_rate(), step=step)

    def _learning_rate(self):
        """The rate of the next update."""
        return float(self.schedule(self.optimizer.iterations))

    def _validate(self, validator, model, writer, progress, manager, best_manager, step, train_pairs, train_nll):
        started = time.time()
        result = validator()
        improved = result["bleu"] > float(progress["best_bleu"])
        if improved:
            progress["best_bleu"].assign(result["bleu"])
            progress["best_step"].assign(step)
            progress["validations_without_improvement"].assign(0)
            progress["validations_since_decay"].assign(0)
        else:
            progress["validations_without_improvement"].assign_add(1)
            progress["validations_since_decay"].assign_add(1)
            decay_due = int(progress["validations_since_decay"]) >= self.config.decay_patience
            if self.config.learning_rate_decay < 1 and decay_due:
                self.schedule.decay(self.config.learning_rate_decay)
                progress["validations_since_decay"].assign(0)
                logging.info(
                    "dev BLEU did not improve for %d validations: learning rate decayed to %g",
                    self.config.decay_patience, self._learning_rate(),
                )
        manager.save(checkpoint_number=step)
        if improved:
            best_manager.save(checkpoint_number=step)
        logging.info(
            "validation at step %d: dev NLL/sentence %.2f | dev BLEU %.2f%s | %s | %.0f s",
            step, result["nll_per_sentence"], result["bleu"], " (best)" if improved else "",
            result["bleu_signature"], time.time() - started,
        )
        with writer.as_default():
            tf.summary.scalar("dev/nll_per_sentence", result["nll_per_sentence"], step=step)
            tf.summary.scalar("dev/bleu", result["bleu"], step=step)
            for index, png in enumerate(result["attention_images"]):
                tf.summary.image(f"attention/{index}", tf.image.decode_png(png)[tf.newaxis], step=step)
            if result["samples"]:
                rows = ["| source | reference | translation |", "|---|---|---|"]
                rows += [
                    "| " + " | ".join(text.replace("|", "\\|") for text in sample) + " |"
                    for sample in result["samples"]
                ]
                tf.summary.text("translations", "\n".join(rows), step=step)
        writer.flush()
        if self.is_chief:
            self._write_projector(model, step)
        state = {
            "step": step,
            "epoch": int(progress["sentences_seen"]) / train_pairs,
            "hours": float(progress["training_seconds"]) / 3600,
            "train_nll_per_sentence": train_nll,
            "dev_nll_per_sentence": result["nll_per_sentence"],
            "dev_bleu": result["bleu"],
            "dev_bleu_signature": result["bleu_signature"],
            "learning_rate": self._learning_rate(),
            "best_step": int(progress["best_step"]),
            "best_dev_bleu": float(progress["best_bleu"]),
        }
        self._write_training_state(state)
        patience = self.config.patience
        if patience is not None and int(progress["validations_without_improvement"]) >= patience:
            return f"dev BLEU did not improve for {patience} validations (best {float(progress['best_bleu']):.2f} at step {int(progress['best_step'])})"
        return None

    def _write_training_state(self, state):
        """training_state.json: the latest validation's fields, and `history`, every validation so far
        (the learning curve; validations after the step a run resumed from are replaced)."""
        path = self.worker_dir.file("training_state.json")
        history = []
        if os.path.exists(path):
            with open(path, encoding="utf-8") as stream:
                history = json.load(stream).get("history", [])
        history = [entry for entry in history if entry["step"] < state["step"]]
        history.append({name: state[name] for name in HISTORY_FIELDS})
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(dict(state, history=history), stream, indent=2)

    def _write_projector(self, model, step):
        """Both embedding matrices with their vocabularies, for TensorBoard's projector (Cho et al. Fig. 4)."""
        logdir = self.model_dir.file("train")
        embeddings = {
            "source_embedding": (model.encoder.source_embedding.embeddings, self.model_dir.source_vocabulary_file),
            "target_embedding": (model.decoder.target_embedding.embeddings, self.model_dir.target_vocabulary_file),
        }
        projector_config = projector.ProjectorConfig()
        for name, (variable, vocabulary_file) in embeddings.items():
            metadata_file = f"{name}_tokens.tsv"
            if not os.path.exists(os.path.join(logdir, metadata_file)):
                with open(vocabulary_file, encoding="utf-8") as source, open(
                    os.path.join(logdir, metadata_file), "w", encoding="utf-8"
                ) as target:
                    target.writelines(line.split("\t")[0] + "\n" for line in source)
            embedding = projector_config.embeddings.add()
            embedding.tensor_name = f"{name}/.ATTRIBUTES/VARIABLE_VALUE"
            embedding.metadata_path = metadata_file
        snapshot = tf.train.Checkpoint(**{name: variable.value for name, (variable, _) in embeddings.items()})
        tf.train.CheckpointManager(snapshot, logdir, 1, checkpoint_name="embeddings").save(checkpoint_number=step)
        projector.visualize_embeddings(logdir, projector_config)


class _Window:
    """Sums of training statistics between two console lines."""

    def __init__(self):
        self.started = time.time()
        self.updates = 0
        self.nll_sum = self.target_tokens = self.sentences = self.gradient_norm_sum = 0.0

    def add(self, result):
        self.updates += 1
        self.nll_sum += float(result["nll_sum"])
        self.target_tokens += float(result["target_tokens"])
        self.sentences += float(result["sentences"])
        self.gradient_norm_sum += float(result["gradient_norm"])

    def seconds(self):
        return time.time() - self.started

    def loss(self):
        return self.nll_sum / max(self.target_tokens, 1.0)

    def nll_per_sentence(self):
        return self.nll_sum / max(self.sentences, 1.0)

    def gradient_norm(self):
        return self.gradient_norm_sum / max(self.updates, 1)


def _hours(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


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
        clip_norm: the global gradient norm is rescaled to at most this.
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

    def split_over_replicas(batch):
        """Each local replica gets a contiguous slice of this worker's minibatch."""

        def replica_slice(context):
            index = context.replica_id_in_sync_group % local_replicas
            size = tf.shape(batch["target_ids"])[0]
            start, end = size * index // local_replicas, size * (index + 1) // local_replicas
            return {name: ids[start:end] for name, ids in batch.items()}

        return strategy.experimental_distribute_values_from_function(replica_slice)

    def nll_and_gradients(source_ids, target_ids):
        with tf.GradientTape() as tape:
            nll_sum, loss_sum = training_loss(model, source_ids, target_ids, label_smoothing)
        gradients = [tf.convert_to_tensor(g) for g in tape.gradient(loss_sum, model.trainable_variables)]
        return nll_sum, gradients

    if jit_compile:
        compiled_nll_and_gradients = tf.function(nll_and_gradients, jit_compile=True)

    def pad_to_bucket(ids):
        length = tf.shape(ids)[1]
        padding = (jit_length_multiple - length % jit_length_multiple) % jit_length_multiple
        return tf.pad(ids, [[0, 0], [0, padding]], constant_values=PAD_ID)  # [batch, bucket length]

    def replica_step(batch):
        source_ids, target_ids = batch["source_ids"], batch["target_ids"]
        if jit_compile:
            nll_sum, gradients = compiled_nll_and_gradients(pad_to_bucket(source_ids), pad_to_bucket(target_ids))
        else:
            nll_sum, gradients = nll_and_gradients(source_ids, target_ids)
        target_tokens = tf.reduce_sum(tf.cast(target_ids > 0, tf.float32))
        sentences = tf.cast(tf.shape(target_ids)[0], tf.float32)
        return nll_sum, target_tokens, sentences, gradients

    def total(value):
        return strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None)

    @tf.function
    def train_step():
        per_replica_batch = split_over_replicas(next_batch())
        nll_sum, target_tokens, sentences, gradients = strategy.run(replica_step, args=(per_replica_batch,))
        nll_sum, target_tokens, sentences = total(nll_sum), total(target_tokens), total(sentences)
        denominator = target_tokens if loss_normalization == "tokens" else sentences
        gradients = [total(g) / denominator for g in gradients]
        gradient_norm = tf.linalg.global_norm(gradients)
        finite = tf.logical_and(tf.math.is_finite(nll_sum), tf.math.is_finite(gradient_norm))
        clipped, _ = tf.clip_by_global_norm(gradients, clip_norm, use_norm=gradient_norm)

        def apply():
            optimizer.apply(clipped, model.trainable_variables)
            return tf.constant(True)

        tf.cond(finite, apply, lambda: tf.constant(False))
        return {
            "nll_sum": nll_sum,
            "target_tokens": target_tokens,
            "sentences": sentences,
            "gradient_norm": gradient_norm,
            "finite": finite,
        }

    return train_step


def training_loss(model, source_ids, target_ids, label_smoothing=0.0):
    """`(nll_sum, loss_sum)` of a batch under teacher forcing with dropout (`training=True`).

    `nll_sum` is -Σ log p(y_i | y_<i, x) over the real target tokens; `loss_sum` the same sum of
    `(1 - ε) (-log p(y_i)) + ε (-mean_k log p_k)`, with ε = `label_smoothing` (equal to `nll_sum` at 0).
    """
    logits, _ = model.teacher_forcing(source_ids, target_ids, training=True)
    logits = tf.cast(logits, tf.float32)  # [batch, tgt_len, K_y]
    target_ids = tf.cast(target_ids, tf.int32)
    log_normalizer = tf.reduce_logsumexp(logits, axis=-1)  # [batch, tgt_len]
    nll = log_normalizer - tf.gather(logits, target_ids, axis=-1, batch_dims=2)  # [batch, tgt_len]
    is_token = tf.cast(tf.not_equal(target_ids, PAD_ID), tf.float32)  # [batch, tgt_len]
    nll_sum = tf.reduce_sum(nll * is_token)
    if not label_smoothing:
        return nll_sum, nll_sum
    uniform_nll = log_normalizer - tf.reduce_mean(logits, axis=-1)  # -mean_k log p_k: [batch, tgt_len]
    loss = (1.0 - label_smoothing) * nll + label_smoothing * uniform_nll
    return nll_sum, tf.reduce_sum(loss * is_token)
