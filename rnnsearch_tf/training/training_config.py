"""Everything about a training run that is not the model's architecture."""

import dataclasses
import os
import typing

from rnnsearch_tf.utils.config_checks import check_at_least, check_choices, zero_means_unset
from rnnsearch_tf.models.model_dir import MODEL_CLASSES
from rnnsearch_tf.training.early_stopping import SELECTION_METRICS
from rnnsearch_tf.training.parent_model import RESET_OPTIM, ParentModel

MODELS = tuple(sorted(MODEL_CLASSES))
OPTIMIZERS = ("adadelta", "adam")
LOSS_NORMALIZATIONS = ("tokens", "sentences")
# Optional fields whose 0 means None: no limit, all dev sentences, no early stopping, no token-count batching, the
# default strategy (`zero_means_unset`).
UNSET_AT_ZERO = ("max_epochs", "max_hours", "max_tokens", "dev_bleu_sentences", "patience", "cpu_replicas")
# The fields whose being set or not changes the structure of the training input pipeline (`TrainingInput`: token-count
# batching, a map that samples subwords): a checkpoint's data iterator reads only into a pipeline of its own structure,
# so a resumed run keeps them on or off (their values may change).
INPUT_PIPELINE_SWITCHES = ("max_tokens", "subword_sampling_alpha")
# The fields that name folders (`init_from`: a model directory, then an optional ":best", ":latest" or ":averaged").
PATH_FIELDS = ("data_dir", "model_dir", "switch_data_dir", "init_from")


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """Settings of `Trainer`. Defaults are the paper's (Bahdanau et al. 2014, Appendix B.2).

    Args:
        data_dir: output of `rnnsearch build-data` (shards, vocabularies, metadata.json).
        model_dir: where checkpoints, event files and the model description go.
        model: "rnnsearch" or "rnnencdec".
        train_steps: updates to run in total (a resumed run counts the updates already done).
        max_epochs: stop after this many passes over the training pairs (0 or unset: no limit).
        max_hours: stop after this much training time, validations included (0 or unset: no limit); the last
            update is validated, so `best/` reflects the whole budget.
        batch_size: global minibatch of sentence pairs (80).
        sort_window: minibatches sorted by length together (20, i.e. 1600 pairs).
        shuffle_batches: the minibatches of a sort window in a random order instead of shortest first (the
            paper's); with a large --sort_window, less padding without a length curriculum within an epoch.
        max_tokens: token-count batching instead of fixed batches (0 or unset: the paper's batching).
        seed: seed of shuffling and initialisation.
        optimizer: "adadelta" (the paper's) or "adam".
        learning_rate: 1.0 for Adadelta (Zeiler 2012 has none; Keras scales the update by it); 0 leaves the weights
            as they are (a run that only reads, e.g. to check a parent's weights); negative is refused.
        adadelta_rho: ρ of Adadelta, the decay of its running averages of squared gradients and updates (0.95),
            in [0, 1).
        adadelta_epsilon: ε of Adadelta, added under its square roots (1e-6), more than 0.
        clip_norm: the L2 norm of the whole gradient is rescaled to at most this (1.0); 0: no clipping (Marian's and
            OpenNMT-py's 0).
        label_smoothing: ε of label smoothing in the training loss (0: the paper's plain NLL).
        loss_normalization: the summed loss of a minibatch is divided by its target "tokens" (default)
            or its "sentences" (OpenNMT-py's default).
        warmup_steps: updates over which the learning rate rises linearly to `learning_rate` (0: none).
        learning_rate_decay: factor applied to the learning rate after `decay_patience` validations
            without a better --select_by score (1.0: constant rate, the paper).
        decay_patience: validations without improvement before each decay.
        log_every: updates between console lines and training scalars.
        checkpoint_every: updates between checkpoints.
        keep_checkpoints: last checkpoints kept (the best ones are kept apart).
        keep_best_checkpoints: checkpoints kept in best/, each better on the --select_by score than those before
            (more than one to average them, `rnnsearch_tf.average_checkpoints --source=best`).
        validate_every: updates between validations (dev NLL and dev BLEU); 0 disables them.
        dev_split: split of data_dir used for validation.
        dev_bleu_sentences: dev sentences decoded for BLEU (0 or unset: all of them).
        patience: validations without a better --select_by score before training stops (0 or unset: never).
        max_nonfinite_steps: consecutive non-finite losses or gradients before training stops.
        attention_sentences: fixed dev sentences whose attention (RNNsearch only) and translation go to
            TensorBoard.
        cpu_replicas: split the CPU into this many logical devices, one replica each (tests, and
            checking multi-replica behaviour without GPUs); 0 or unset uses all local GPUs, or the CPU.
        jit_compile: compile the forward and backward pass with XLA: one compilation per length bucket,
            faster for mid-size models, slower for tiny ones, and more memory (its measurements are in
            docs/performance.md, "Tried and not kept").
        jit_length_multiple: with `jit_compile`, source and target lengths are padded up to a multiple
            of this, so XLA compiles one program per length bucket rather than per batch.
        init_from: MODEL_DIR[:best|latest|averaged]: start this new model directory from that trained
            model's weights (default checkpoint: best) instead of random ones, to continue training it on
            new data built with `--vocabulary_from=MODEL_DIR`; its model and architecture must be this
            run's. The step count, learning-rate schedule and early stopping start afresh; recorded in
            model_dir/parent.json.
        reset_optim: with `init_from`, as OpenNMT-py's -reset_optim: "all" starts a fresh optimizer;
            "keep_states" restores the parent's optimizer state (its accumulators and update count) and
            keeps this run's optimizer settings.
        select_by: the dev score that judges each validation ("bleu", the paper's; or "chrf"): the best
            checkpoints in best/, learning-rate decay and `patience` follow it.
        switch_data_dir: a second data directory with `data_dir`'s vocabularies (e.g. the same corpus
            built with `--joined_share=0.5`): after `switch_at` of the budget, updates read its training
            pairs instead, the model, optimizer and schedule going on as they were. Singles first, then
            joined pairs, teaches long inputs at less cost to single sentences than joined pairs from the
            start (docs/data.md, "Long sentences"). Validation stays on `data_dir`.
        switch_at: the share of the budget after which updates read `switch_data_dir`: of `train_steps`
            or of `max_hours` (training time, validations included), whichever is spent first; with
            several workers (TF_CONFIG) of `train_steps` only, so that they switch at the same update. The switch is
            checkpointed and one-way: a resumed run with a larger budget goes on reading `switch_data_dir`.
        subword_sampling_alpha: SentencePiece's subword regularisation (Kudo 2018) on a SentencePiece data
            directory: each training pair is cut into pieces sampled anew every time it is read (unigram
            models: the smoothing alpha, e.g. 0.1; BPE models: BPE-dropout's probability of dropping a merge,
            e.g. 0.1); 0 (default) trains on the build's fixed pieces. Not seeded: the same seed gives the
            same pairs in each window of sorted batches, not the same pieces (docs/data.md, "Words or subwords").
    """

    data_dir: str
    model_dir: str
    model: str = dataclasses.field(default="rnnsearch", metadata={"choices": MODELS})
    train_steps: int = 300_000
    max_epochs: typing.Optional[float] = None
    max_hours: typing.Optional[float] = None
    batch_size: int = 80
    sort_window: int = 20
    shuffle_batches: bool = False
    max_tokens: typing.Optional[int] = None
    seed: int = 1234
    optimizer: str = dataclasses.field(default="adadelta", metadata={"choices": OPTIMIZERS})
    learning_rate: float = 1.0
    adadelta_rho: float = 0.95
    adadelta_epsilon: float = 1e-6
    clip_norm: float = 1.0
    label_smoothing: float = 0.0
    loss_normalization: str = dataclasses.field(default="tokens", metadata={"choices": LOSS_NORMALIZATIONS})
    warmup_steps: int = 0
    learning_rate_decay: float = 1.0
    decay_patience: int = 2
    log_every: int = 100
    checkpoint_every: int = 1000
    keep_checkpoints: int = 5
    keep_best_checkpoints: int = 1
    validate_every: int = 5000
    dev_split: str = "dev"
    dev_bleu_sentences: typing.Optional[int] = None
    patience: typing.Optional[int] = None
    max_nonfinite_steps: int = 5
    attention_sentences: int = 3
    cpu_replicas: typing.Optional[int] = None
    jit_compile: bool = False
    jit_length_multiple: int = 4
    init_from: typing.Optional[str] = None
    reset_optim: str = dataclasses.field(default="all", metadata={"choices": RESET_OPTIM})
    select_by: str = dataclasses.field(default="bleu", metadata={"choices": SELECTION_METRICS})
    switch_data_dir: typing.Optional[str] = None
    switch_at: float = 0.5
    subword_sampling_alpha: float = 0.0

    def __post_init__(self):
        check_choices(self)
        zero_means_unset(self, UNSET_AT_ZERO)
        check_at_least(self, 1, ("train_steps", "batch_size", "sort_window", "log_every", "checkpoint_every",
                                 "keep_checkpoints", "max_nonfinite_steps", "jit_length_multiple", "decay_patience",
                                 "keep_best_checkpoints"))
        check_at_least(self, 0, ("validate_every", "warmup_steps", "attention_sentences", "learning_rate",
                                 "clip_norm"))
        if not 0 <= self.adadelta_rho < 1:
            raise ValueError(f"TrainingConfig.adadelta_rho must be in [0, 1), got {self.adadelta_rho}")
        if not self.adadelta_epsilon > 0:
            raise ValueError(f"TrainingConfig.adadelta_epsilon must be more than 0, got {self.adadelta_epsilon}")
        if not 0 <= self.label_smoothing < 1:
            raise ValueError(f"TrainingConfig.label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if not 0 <= self.subword_sampling_alpha <= 1:
            raise ValueError(f"TrainingConfig.subword_sampling_alpha must be in [0, 1], got {self.subword_sampling_alpha}")
        if not 0 < self.switch_at < 1:
            raise ValueError(f"TrainingConfig.switch_at must be in (0, 1), got {self.switch_at}")
        if not 0 < self.learning_rate_decay <= 1:
            raise ValueError(
                f"TrainingConfig.learning_rate_decay must be in (0, 1], got {self.learning_rate_decay}"
            )

    def to_dict(self):
        return dataclasses.asdict(self)

    def with_absolute_paths(self):
        """This config with its folders (`PATH_FIELDS`) absolute, as a run's record must be to read the same from
        any working directory (`--flagfile=<model_dir>/flags.txt`)."""
        paths = {}
        for name in PATH_FIELDS:
            value = getattr(self, name)
            if value:
                folder = ParentModel.split(value)[0] if name == "init_from" else value
                paths[name] = os.path.abspath(folder) + value[len(folder):]  # init_from keeps its ":checkpoint"
        return dataclasses.replace(self, **paths)
