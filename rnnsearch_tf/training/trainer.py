"""The training loop of Bahdanau et al. 2014, Appendix B.2, under tf.distribute, made of parts."""

import time

import keras
import tensorflow as tf
from absl import logging

from data_pipeline.training_input import TrainingInput
from rnnsearch_tf.models.model_dir import MODEL_CLASSES
from rnnsearch_tf.training.checkpointing import Checkpointing, InputPipelineMismatchError
from rnnsearch_tf.training.early_stopping import EarlyStopping
from rnnsearch_tf.training.fused_optimizers import FusedAdadelta, FusedAdam
from rnnsearch_tf.training.learning_rate_schedule import LearningRateSchedule
from rnnsearch_tf.training.stop_request import StopRequest
from rnnsearch_tf.training.summaries import TrainingSummaries
from rnnsearch_tf.training.train_step import make_train_step
from rnnsearch_tf.training.training_budget import TrainingBudget
from rnnsearch_tf.training.training_config import INPUT_PIPELINE_SWITCHES
from rnnsearch_tf.training.training_diverged_error import TrainingDivergedError
from rnnsearch_tf.training.training_folders import TrainingFolders
from rnnsearch_tf.training.training_statistics import TrainingStatistics
from rnnsearch_tf.training.validator import Validator
from rnnsearch_tf.training.workers import Workers


class Trainer:
    """Trains an RNNsearch or RNNencdec model on a built data directory.

    Each update (`make_train_step`): the global minibatch is split over the replicas; every replica
    sums the loss of its sentences and differentiates that sum; the gradients are summed over replicas
    and divided by the global number of target tokens (or sentences, `loss_normalization`), the whole
    gradient's L2 norm is rescaled to at most `clip_norm`, and the optimizer applies it. A non-finite
    loss or gradient skips the update; `max_nonfinite_steps` of them in a row stop training.

    Every `validate_every` updates, and after the last one: dev NLL per sentence and dev BLEU
    (`Validator`), judged by `EarlyStopping` (the best checkpoints in `best/`, learning-rate decay on
    plateaus, `patience`), written to `training_state.json` and TensorBoard (`TrainingSummaries`;
    `TrainingStatistics` logs the updates between console lines). Checkpoints (`Checkpointing`) hold the
    model, its dropout random states, the optimizer slots, the learning-rate scale, the early-stopping
    state, the step and the data iterator, so a resumed run continues with the batch it would have read
    next. The checkpoint of a validated step is written last, after `best/`, `training_state.json` and
    TensorBoard, so a run killed during a validation resumes before it and validates again. A signal during a
    validation abandons it between two batches (nothing recorded, `best/` untouched) and the run stops with the
    checkpoint of its update; a run resumed there (a validation step, the last of the budget included, that
    `training_state.json` lacks) validates it before its next update and writes that checkpoint again, with what
    the validation decided. At start-up, leftovers of an interrupted save are removed, and when the newest
    checkpoint does not read, training resumes from the one before it, saying so.

    The constructor checks the data directory and the model directory (`TrainingFolders`, which also refuses a
    resumed run's other `optimizer` or `select_by`, or `max_tokens` or `subword_sampling_alpha` turned on or off),
    creates the parts (refusing a `switch_data_dir` added to or removed from a run, the validation's search, and a
    `dev_bleu_sentences` that measures dev BLEU on another number of sentences than the run recorded), and
    only then writes a new model directory's description, so that a refused run writes nothing; `train()` resumes
    and runs the loop, which a run stopped by `patience` ends at once.

    With `switch_data_dir`, updates read that data directory's training pairs (its own iterator, also
    checkpointed) once `switch_at` of the budget is spent, and go on reading them when a resumed run raises the
    budget (the switch is checkpointed and one-way); the model, optimizer, schedule and validation go
    on as they were, but the best checkpoint is judged afresh (`EarlyStopping.restart`): the run is for
    a model that has read both.

    With `init_from` (`ParentModel`), a new model directory starts from a trained model's weights: the
    parent must be the same model with the same architecture and the data must have its vocabularies
    (`TrainingFolders`, before anything is written); `parent.json` records it; the first `train()` copies its weights
    (and with `reset_optim="keep_states"` its optimizer state) before the first update. The step count,
    schedule, early stopping and data iterator are this run's own; a killed child resumes from its own
    checkpoints. A model directory that already holds another model, or a child of another parent, is refused.

    Args:
        model: an `EncoderDecoderModel` built under `strategy.scope()`.
        optimizer: its optimizer, built for `model.trainable_variables`, whose learning rate is
            `learning_rate_schedule`.
        learning_rate_schedule: a `LearningRateSchedule`.
        training_config: `TrainingConfig`.
        strategy: the `tf.distribute.Strategy` the model was built under.
        search_config: `SearchConfig` of the validation translations (default: the paper's beam 12).

    `Trainer.create(model_config, training_config)` builds the model and optimizer the config asks for.
    """

    def __init__(self, model, optimizer, learning_rate_schedule, training_config, strategy, search_config=None):
        self.model = model
        self.optimizer = optimizer
        self.schedule = learning_rate_schedule
        self.config = training_config
        self.strategy = strategy
        self.search_config = search_config
        self.workers = Workers(strategy)
        if training_config.batch_size % strategy.num_replicas_in_sync:
            raise ValueError(
                f"--batch_size={training_config.batch_size} is not divisible by the {strategy.num_replicas_in_sync} "
                f"replicas ({self.workers.count} worker(s) of {strategy.num_replicas_in_sync // self.workers.count}"
                " each), which share every minibatch equally: make it a multiple of that"
            )
        self.folders = TrainingFolders(training_config, model.config, self.workers.index)
        self.early_stopping = EarlyStopping(training_config.patience, training_config.decay_patience,
                                            training_config.learning_rate_decay, training_config.select_by)
        self.budget = TrainingBudget(training_config.train_steps, training_config.max_epochs,
                                     training_config.max_hours, self.folders.training_pairs)
        # Whether updates read `switch_data_dir` already (checkpointed: the best checkpoint was judged afresh).
        self.has_switched = None
        if self.folders.switch_data_dir:
            self.has_switched = tf.Variable(False, trainable=False, name="switched")
        # One iterator and one update function per data directory (the second read after `switch_at`).
        iterators = [iter(self._make_dataset(data_dir))
                     for data_dir in (self.folders.data_dir, self.folders.switch_data_dir) if data_dir]
        self.checkpointing = self._make_checkpointing(iterators)
        self._check_same_switch_data_dir()
        self.train_steps = [self._make_train_step(iterator) for iterator in iterators]
        self.validator = self._make_validator()  # checks the dev split's text and the search
        # The dev sentences BLEU is measured on, which a resumed run must keep (`_check_same_dev_bleu_sentences`).
        self.dev_bleu_sentences = len(self.validator.sources) if self.validator is not None else None
        self.folders.prepare_model_dir()  # every check passed: a new model directory is written from here on
        # After the model directory's own checks (another model, other vocabularies: the first thing to say); a
        # new model directory records nothing yet, so this refuses only a resumed one, which prepare wrote nothing to.
        self._check_same_dev_bleu_sentences()
        self.summaries = TrainingSummaries(self.folders.model_dir, model, self.folders.is_chief)
        self.stop_request = StopRequest(enabled=False)  # `train` listens for SIGINT and SIGTERM

    @classmethod
    def create(cls, model_config, training_config, strategy=None, search_config=None):
        """A trainer with a new model of `model_config` and the optimizer of `training_config`."""
        strategy = strategy or tf.distribute.MirroredStrategy()
        keras.utils.set_random_seed(training_config.seed)
        schedule = LearningRateSchedule(training_config.learning_rate, training_config.warmup_steps)
        with strategy.scope():
            model = MODEL_CLASSES[training_config.model](model_config)
            if training_config.optimizer == "adadelta":
                optimizer = FusedAdadelta(
                    schedule, rho=training_config.adadelta_rho, epsilon=training_config.adadelta_epsilon
                )
            else:
                optimizer = FusedAdam(schedule)
            optimizer.build(model.trainable_variables)
        return cls(model, optimizer, schedule, training_config, strategy, search_config)

    def _make_dataset(self, data_dir):
        """This worker's share of every global minibatch of `data_dir`'s training pairs, as a plain
        (checkpointable) dataset."""
        sampling = self.config.subword_sampling_alpha
        training_input = TrainingInput(
            data_dir.shard_pattern("train"),
            batch_size=self.config.batch_size,
            sort_window=self.config.sort_window,
            shuffle_batches=self.config.shuffle_batches,
            seed=self.config.seed,
            max_tokens=self.config.max_tokens,
            max_sequence_length=data_dir.read_metadata()["filters"]["max_length"] + 1,
            verify_shards=False,  # checked at start-up (`DataDir.check_shards`)
            pairs=data_dir.records("train"),
            subword_sampling_alpha=sampling,
            subword_codecs={side: data_dir.codec(side) for side in ("source", "target")} if sampling else None,
        )
        count = self.workers.count
        if count == 1:
            return training_input()
        return training_input(tf.distribute.InputContext(count, self.workers.index, count))

    def _make_train_step(self, iterator):
        config = self.config
        return make_train_step(
            self.model, self.optimizer, lambda: next(iterator), self.strategy, config.clip_norm,
            local_replicas=self.strategy.num_replicas_in_sync // self.workers.count,
            jit_compile=config.jit_compile, jit_length_multiple=config.jit_length_multiple,
            label_smoothing=config.label_smoothing, loss_normalization=config.loss_normalization,
        )

    def _make_checkpointing(self, iterators):
        """Checkpoints of everything a resumed run needs; the names are those of every earlier checkpoint
        (`switch_iterator` only in runs with a `switch_data_dir`)."""
        return Checkpointing(
            self.folders.worker_dir,
            self.config.keep_checkpoints,
            self.config.keep_best_checkpoints,
            model=self.model,
            optimizer=self.optimizer,
            iterator=iterators[0],
            **({"switch_iterator": iterators[1]} if len(iterators) > 1 else {}),
            learning_rate_scale=self.schedule.scale,
            dropout_random_states=self.model.dropout_random_states(),
            **self.early_stopping.variables,
            **self.budget.variables,
            **({"switched": self.has_switched} if self.has_switched is not None else {}),
        )

    def _check_same_switch_data_dir(self):
        """Raises ValueError when a resumed run adds a `switch_data_dir` to a run that started without one, or
        removes it from one that started with it: its checkpoints hold a second data iterator only with it."""
        saved = self.checkpointing.saved_names()
        started_with = saved is not None and "switch_iterator" in saved
        if saved is None or started_with == (self.folders.switch_data_dir is not None):
            return
        path = self.folders.model_dir.path
        if started_with:
            raise ValueError(f"{path} started with a --switch_data_dir, which cannot be removed from the run: "
                             f"resume with the --switch_data_dir of {self.folders.model_dir.flags_file}")
        raise ValueError(f"--switch_data_dir={self.config.switch_data_dir}: {path} started without "
                         "--switch_data_dir, which cannot be added to a run; resume without it, or train on that "
                         f"data in {self.folders.new_model_dir_from_latest()}")

    def _make_validator(self):
        if not self.config.validate_every:
            return None
        return Validator(
            self.model,
            self.config.data_dir,
            self.config.dev_split,
            batch_size=self.config.batch_size,
            search_config=self.search_config,
            bleu_sentences=self.config.dev_bleu_sentences,
            attention_sentences=self.config.attention_sentences,
            should_stop=lambda: self.stop_request.signal_name is not None,  # abandoned at a signal (`_validate`)
        )

    def _check_same_dev_bleu_sentences(self):
        """Raises ValueError when a resumed run would measure dev BLEU (and chrF) on another number of dev
        sentences than its training_state.json records (`dev_bleu_sentences`, the validator's count): the best
        score it judges against is of the recorded subset. A run recorded without it resumes."""
        if self.validator is None:  # a run that does not validate judges nothing
            return
        state = self.folders.worker_dir.read_training_state() or {}
        recorded, sentences = state.get("dev_bleu_sentences"), self.dev_bleu_sentences
        path = self.folders.model_dir.path
        if state.get("dev_split", self.config.dev_split) != self.config.dev_split:
            raise ValueError(
                f"--dev_split={self.config.dev_split}: {path} measured dev BLEU on the {state['dev_split']} split "
                f"({self.folders.worker_dir.training_state_file}), this run would on other sentences, against the best "
                f"of those; resume with --dev_split={state['dev_split']}, or continue its weights in "
                f"{self.folders.new_model_dir_from_latest()}"
            )
        if recorded is not None and recorded != sentences:
            raise ValueError(
                f"--dev_bleu_sentences={self.config.dev_bleu_sentences or 0}: {path} measured dev BLEU on "
                f"{recorded} dev sentences ({self.folders.worker_dir.training_state_file}), this run would on "
                f"{sentences}, against the best of the others; resume with --dev_bleu_sentences={recorded}, or "
                f"continue its weights in {self.folders.new_model_dir_from_latest()}"
            )

    def train(self, before_first_update=None):
        """Runs until `train_steps`, `max_epochs`, `max_hours` or early stopping; returns a summary dict.
        `before_first_update()`, where given, is called once the run has resumed, if an update will run (`rnnsearch
        train` then writes flags.txt: a run already at its limit leaves the record of the updates made as it was)."""
        self._resume()
        if before_first_update and self._limit_reached() is None:
            before_first_update()
        if self.step == 0:
            self.summaries.write_hparams(self._hparams())
        if self.workers.count > 1:
            StopRequest.restore_sigterm()
        try:
            with StopRequest(enabled=self.workers.count == 1) as self.stop_request:
                stop_reason = self._loop()
            self.checkpointing.save_unless_saved(self.step)
        except tf.errors.OpError as error:  # a collective op of a multi-worker run: was a worker lost?
            lost = self.workers.lost_worker_error(error, self.step, self.checkpointing.latest_checkpoint)
            if lost is None:
                raise
            raise lost from None
        self.summaries.flush()
        logging.info("Training stopped: %s", stop_reason)
        return {
            "stop_reason": stop_reason,
            "signal": self.stop_request.signal_name,  # "SIGINT" or "SIGTERM" where one stopped it, else None
            "step": self.step,
            "best_step": self.early_stopping.best_step,
            "selected_by": self.config.select_by,
            # Of `selected_by`; None, as `best_checkpoint`, before any validation (`EarlyStopping` holds -1 then).
            "best_dev_score": self.early_stopping.best_score if self.early_stopping.best_score >= 0 else None,
            "latest_checkpoint": self.checkpointing.latest_checkpoint,
            "best_checkpoint": self.checkpointing.best_checkpoint,
        }

    @property
    def step(self):
        return self.budget.step

    def _resume(self):
        """Restores the newest checkpoint (the same step on every worker), or a parent's weights."""
        try:
            resumed_from = self.checkpointing.restore()
        except InputPipelineMismatchError as error:
            settings = ", ".join(f"--{name}={getattr(self.config, name) or 0}" for name in INPUT_PIPELINE_SWITCHES)
            raise ValueError(
                f"{error}: {' and '.join(f'--{name}' for name in INPUT_PIPELINE_SWITCHES)} cannot be turned on or off "
                f"within a run (this run: {settings}); resume with the run's own, or continue its weights in "
                f"{self.folders.new_model_dir_from_latest()}"
            ) from None
        resumed_from = self._same_step_on_every_worker(resumed_from)
        if resumed_from is not None:
            logging.info("Resumed from %s at step %d", resumed_from, self.step)
        elif self.folders.parent:
            parent = self.folders.parent
            parent.restore(self.model, self.optimizer if self.config.reset_optim == "keep_states" else None)
            logging.info("Started from the weights of %s (step %d)%s", parent.checkpoint_path, parent.step,
                         ", with its optimizer state" if self.config.reset_optim == "keep_states" else "")

    def _same_step_on_every_worker(self, resumed_from):
        """Workers killed at different moments may hold newest checkpoints of different steps (one finished a
        save that another did not): every worker resumes from the oldest of those steps. Returns the path
        this worker resumed from."""
        recorded = (self.folders.worker_dir.read_training_state() or {}).get("workers", 0)  # 0: not recorded
        rows = self.workers.gather([self.step, recorded])
        self._check_same_workers(rows)
        steps = [step for step, _ in rows]
        if min(steps) == self.step:
            return resumed_from
        path = self.checkpointing.restore_step(min(steps))
        logging.warning("the workers' newest checkpoints are of steps %s: resuming from %s, the newest step "
                        "every worker has", steps, path)
        return path

    def _check_same_workers(self, rows):
        """Raises ValueError, on every worker, when a run resumes with another number of workers than wrote its
        checkpoints: each worker's checkpoint holds the data position of its own share of the shards. Seen in the
        count training_state.json records (`rows`: every worker's step and recorded count, 0 where none), or in a
        worker without checkpoints beside one with (a model directory of fewer workers, or a worker machine
        replaced: its `workers/N` gone), or in a `workers/N` with checkpoints beyond this run's workers (a run of
        more workers that never validated records no count). A run recorded without the count resumes as before."""
        count, steps = self.workers.count, [step for step, _ in rows]
        remedy = f"resume with as many workers, or continue its weights in {self.folders.new_model_dir_from_latest()}"
        recorded = [(index, workers) for index, (_, workers) in enumerate(rows) if workers not in (0, count)]
        if recorded:
            index, workers = recorded[0]
            raise ValueError(
                f"--model_dir={self.folders.model_dir.path} was trained by {workers} worker(s) (training_state.json "
                f"of worker {index}), this run has {count} (TF_CONFIG): each worker's "
                f"checkpoints hold the data position of its own share of the shards; {remedy}"
            )
        more = [index for index in self.folders.model_dir.workers_with_checkpoints() if index >= count]
        if more and max(steps):
            raise ValueError(
                f"--model_dir={self.folders.model_dir.path} was trained by {more[-1] + 1} or more workers (its "
                f"workers/{more[-1]} holds checkpoints), this run has {count} (TF_CONFIG): each worker's "
                f"checkpoints hold the data position of its own share of the shards; {remedy}"
            )
        missing = [index for index, step in enumerate(steps) if step == 0]
        if missing and max(steps):
            raise ValueError(
                f"--model_dir={self.folders.model_dir.path}: worker(s) {', '.join(map(str, missing))} of TF_CONFIG "
                f"have no checkpoint of it, worker(s) with one are at step {max(steps)}: it was trained by fewer "
                f"workers, or a worker's {self.folders.model_dir.path}/workers/N is gone (a machine replaced); "
                f"{remedy}"
            )

    def _loop(self):
        """Appendix B.2: read a minibatch and update on it; every so many updates log, validate (early
        stopping judges the validation) and checkpoint. Until a limit or early stopping; returns why."""
        statistics = TrainingStatistics(self.summaries.train)
        self.budget.start_clock()
        if self._abandoned_validation():  # validated as the stopped run would have, before the next update
            with statistics.left_out():
                stop_reason = self._validate(train_nll=None)  # the updates' NLL was not saved
            if stop_reason is not None:
                return stop_reason
        nonfinite_in_row = 0
        while (stop_reason := self._limit_reached()) is None:
            try:
                result = self._update()
            except (StopIteration, tf.errors.OutOfRangeError):
                return "the training data ran out"
            nonfinite_in_row = 0 if result["finite"] else nonfinite_in_row + 1
            if nonfinite_in_row:
                self._skip_nonfinite(result, nonfinite_in_row)
                continue
            statistics.add(result)
            stop_reason = self._after_update(statistics)
            if stop_reason is not None:
                return stop_reason
        return stop_reason

    def _abandoned_validation(self):
        """Whether the step this run resumed at has a validation a signal abandoned (`_validate`): a step validated
        (a multiple of `validate_every`, or the last of the budget, unless patience stopped the run) that
        training_state.json's history lacks."""
        if not self.validator or not self.step or self.early_stopping.should_stop():
            return False
        if self.step % self.config.validate_every and self.budget.exhausted() is None:
            return False
        history = (self.folders.worker_dir.read_training_state() or {}).get("history", [])
        return all(entry["step"] != self.step for entry in history)

    def _update(self):
        """Reads the next minibatch and updates on it; returns the update's statistics (`make_train_step`)."""
        switched = self._switched()
        if switched and not self.has_switched:
            self.has_switched.assign(True)
            self.early_stopping.restart()
            logging.info("step %d: past %.0f%% of the budget, updates read the training pairs of %s; the best "
                         "checkpoint is judged afresh", self.step, 100 * self.config.switch_at,
                         self.folders.switch_data_dir.path)
        result = {name: value.numpy() for name, value in self.train_steps[int(switched)]().items()}
        self.budget.add_update(result["sentences"])
        return result

    def _switched(self):
        """Whether updates now read `switch_data_dir`: once they did (`has_switched`, checkpointed: a resumed run
        with a larger budget goes on with them), or once `switch_at` of `train_steps` or of `max_hours` is spent
        (the limit that ends training comes first to its share too). With several workers only the steps count:
        every worker must switch at the same update, and each keeps its own clock."""
        if self.folders.switch_data_dir is None:
            return False
        return bool(self.has_switched) or self.budget.spent(self.config.switch_at, self.workers.count == 1)

    def _after_update(self, statistics):
        """Logging, validation and checkpointing due after a finite update; returns a stop reason or None."""
        step, config = self.step, self.config
        is_last = self._limit_reached() is not None
        train_nll = statistics.nll_per_sentence()  # before `log` starts a new window
        if step % config.log_every == 0 or is_last:
            statistics.log(step, self.budget.epoch, self.budget.seconds,
                           self.budget.remaining_seconds(statistics.seconds_per_update()),
                           self._learning_rate(self.optimizer.iterations - 1))
        final_validation = is_last and not self.stop_request.signal_name  # a signal asks for a quick stop
        with statistics.left_out():  # the rates are of updates only
            if self.validator and (step % config.validate_every == 0 or final_validation):
                return self._validate(train_nll)
            if step % config.checkpoint_every == 0:
                self.checkpointing.save(step)
        return None

    def _skip_nonfinite(self, result, in_row):
        logging.warning(
            "step %d: non-finite loss or gradient (NLL sum %s, gradient norm %s); update skipped",
            self.step, result["nll_sum"], result["gradient_norm"],
        )
        self.summaries.write_nonfinite_updates(self.step, in_row)
        if in_row >= self.config.max_nonfinite_steps:
            # Updates skipped leave the weights as the last update made them, which may have been finite in its
            # loss and gradient and still made weights non-finite (a learning rate too large): saved only if finite.
            if self.checkpointing.holds_finite_values():
                self.checkpointing.save(self.step)
            finite = self.checkpointing.newest_finite_checkpoint()
            raise TrainingDivergedError(
                f"{in_row} updates in a row had a non-finite loss or gradient (step {self.step}); "
                + (f"the last finite weights are in {finite}" if finite else
                   f"no checkpoint in {self.folders.worker_dir.checkpoint_dir} holds finite weights")
                + ". Lower --learning_rate or --clip_norm, or check the data"
            )

    def _limit_reached(self):
        """Why training must stop now (a signal, the budget: `TrainingBudget.exhausted`, or early stopping, which
        a run it stopped resumes to: the re-run stops at once, as one stopped by its budget does), or None."""
        if self.stop_request.signal_name:
            return f"{self.stop_request.signal_name} at step {self.step}; the same command resumes"
        return self.budget.exhausted() or self.early_stopping.should_stop()

    def _learning_rate(self, update):
        """The rate of update `update`, counted from 0 as `optimizer.iterations` (which after an update is the
        next one's). A step's console line, TensorBoard scalar and validation record report the rate that its
        last update used (`iterations - 1`), before a decay that the validation decides."""
        return float(self.schedule(update))

    def _hparams(self):
        values = {f"model/{k}": v for k, v in self.model.config.to_dict().items()}
        values.update({f"training/{k}": v for k, v in self.config.to_dict().items()})
        return {name: value for name, value in values.items() if isinstance(value, (bool, int, float, str))}

    def _validate(self, train_nll):
        """Validates the current weights, then checkpoints them; returns a stop reason or None. A signal abandons
        the validation between two batches (`Validator`): nothing is recorded, and `train` saves the checkpoint."""
        started, step = time.time(), self.step
        learning_rate = self._learning_rate(self.optimizer.iterations - 1)  # of the updates validated
        result = self.validator()
        if result is None:
            logging.warning("validation at step %d abandoned (%s): the checkpoint of the step is saved, and the run "
                            "validates it first when it resumes", step, self.stop_request.signal_name)
            return None
        # The validation's time counts against `max_hours`: a budget it used up stops training here, at
        # a validated step, instead of after one more update and a second validation.
        self.budget.count_seconds()
        improved = self.early_stopping.record(step, result[self.config.select_by])
        if self.early_stopping.should_decay():
            self.schedule.decay(self.config.learning_rate_decay)
            logging.info("dev %s did not improve for %d validations: learning rate decayed to %g",
                         self.early_stopping.metric_name, self.config.decay_patience,
                         self._learning_rate(self.optimizer.iterations))
        if improved:
            self.checkpointing.save_best(step)
        scores = {"bleu": f"dev BLEU {result['bleu']:.2f}", "chrf": f"chrF {result['chrf']:.2f}"}
        scores[self.config.select_by] += " (best)" if improved else ""
        logging.info(
            "validation at step %d: dev NLL/sentence %.2f | %s | %s | %s | %.0f s", step, result["nll_per_sentence"],
            scores["bleu"], scores["chrf"], result["bleu_signature"], time.time() - started,
        )
        if result["truncated_sentences"]:
            logging.warning("%d dev sentences are longer than the search's maximum_source_length (%d tokens) and "
                            "were translated from their first tokens", result["truncated_sentences"],
                            self.validator.translator.search_config.maximum_source_length)
        self.summaries.write_validation(step, result)
        self.early_stopping.write_state(self.folders.worker_dir.training_state_file, {
            "step": step,
            "epoch": self.budget.epoch,
            "hours": self.budget.seconds / 3600,
            "train_nll_per_sentence": train_nll,
            "dev_nll_per_sentence": result["nll_per_sentence"],
            "dev_bleu": result["bleu"],
            "dev_bleu_signature": result["bleu_signature"],
            "dev_chrf": result["chrf"],
            "learning_rate": learning_rate,
            "optimizer": self.config.optimizer,  # a resumed run must keep it (`TrainingFolders`)
            "dev_bleu_sentences": self.dev_bleu_sentences,  # and measure on these
            "dev_split": self.config.dev_split,  # of this split
            "workers": self.workers.count,  # and resume with as many workers (`_check_same_workers`)
        })
        self.checkpointing.save(step)  # last: this step is complete
        return self.early_stopping.should_stop()
