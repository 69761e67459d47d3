"""The trained model a new training run starts from (`TrainingConfig.init_from`)."""

import os

import tensorflow as tf

from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.checkpointing import checkpoint_step, saved_object_names

PARENT_CHECKPOINTS = ("best", "latest", "averaged")
# OpenNMT-py's `-reset_optim` values that keep this run's optimizer settings: "all" starts a fresh optimizer,
# "keep_states" also restores the parent's optimizer state (Adam's or Adadelta's accumulators and its
# update count). The settings themselves (learning rate, schedule) are always this run's flags.
RESET_OPTIM = ("all", "keep_states")


class ParentModel:
    """A trained model directory's checkpoint that a new model directory starts from.

    Continuing training on new data (domain adaptation, OpenNMT-py's `-train_from` with `-reset_optim`):
    the child model is built from this run's flags, checked against the parent (`check_fits`: the same
    model, the same architecture, and the data built with the parent's vocabularies), and its weights are
    replaced by the parent's (`restore`) before its first update. Dropout, initializer and precision may
    differ (`model_config.NON_ARCHITECTURE_FIELDS`).

    Args:
        init_from: "MODEL_DIR" (its best checkpoint, or its latest one before any validation) or
            "MODEL_DIR:best", "MODEL_DIR:latest", "MODEL_DIR:averaged" (`rnnsearch average`).

    Example:

    ```python
    parent = ParentModel("work_dirs/multi30k:best")
    parent.check_fits("rnnsearch", model.config, DataDir("work_dirs/data/tatoeba_from_multi30k"))
    parent.restore(model)  # optimizer=... too for reset_optim="keep_states"
    parent.record()        # {"model_dir", "checkpoint" (the one used), "checkpoint_path", "step"}
    ```
    """

    def __init__(self, init_from):
        self.init_from = init_from
        path, self.requested = self.split(init_from)
        self.model_dir = ModelDir(os.path.abspath(path))
        if not self.model_dir.has_model():
            raise FileNotFoundError(
                f"init_from={init_from}: {self.model_dir.model_file} is missing: "
                "it must name a model directory written by training"
            )
        self.checkpoint_path = self.model_dir.checkpoint_path(self.requested)
        # The checkpoint used: "best" is "latest" in a parent not validated yet (`ModelDir.checkpoint_path`).
        in_best = os.path.dirname(os.path.normpath(self.checkpoint_path)) == os.path.normpath(
            self.model_dir.best_checkpoint_dir)
        self.checkpoint = "latest" if self.requested == "best" and not in_best else self.requested
        self.step = checkpoint_step(self.checkpoint_path)

    @staticmethod
    def split(init_from):
        """"DIR:latest" -> ("DIR", "latest"); "DIR" -> ("DIR", "best")."""
        path, separator, checkpoint = init_from.rpartition(":")
        if separator and checkpoint in PARENT_CHECKPOINTS:
            return path, checkpoint
        return init_from, "best"

    def check_fits(self, model_name, model_config, data_dir):
        """Raises ValueError naming what differs unless the parent is a `model_name` with `model_config`'s
        architecture and `data_dir` (a `DataDir`) was built with the parent's vocabularies."""
        description = self.model_dir.read_model_description()
        model_file = self.model_dir.model_file
        if description.get("model") != model_name:
            raise ValueError(
                f"init_from={self.init_from}: the parent is an {description.get('model')!r} model ({model_file}) "
                f"but this run trains an {model_name!r} model"
            )
        parent_config = ModelConfig.from_dict(description["config"])
        differences = parent_config.architecture_differences(model_config)
        if differences:
            field, parent_value, value = differences[0]
            raise ValueError(
                f"init_from={self.init_from}: the parent's {field} is {parent_value!r} ({model_file}) but this "
                f"run's is {value!r}; a continued model keeps its parent's architecture"
            )
        side = self.model_dir.differing_vocabulary(data_dir)
        if side:
            raise ValueError(
                f"init_from={self.init_from}: the {side} vocabulary of {data_dir.path} differs from the "
                f"parent's ({self.model_dir.vocabulary_file(side)}): build the data with `rnnsearch build-data ... "
                f"--vocabulary_from={self.model_dir.path}` so that the word ids are the parent's"
            )

    def named_in(self, recorded):
        """Whether `recorded` (a child's parent.json) names this parent: the same model directory and checkpoint
        name asked for, even if the parent's checkpoint has moved on since."""
        asked = recorded.get("requested", recorded.get("checkpoint"))
        return recorded.get("model_dir") == self.model_dir.path and asked == self.requested

    def check_optimizer_state(self, optimizer_name):
        """Raises ValueError unless the parent's checkpoint holds an optimizer state (an averaged one holds none)
        of the optimizer `optimizer_name` (`TrainingConfig.optimizer`) by the parent's record
        (`ModelDir.recorded_training_setting`): its state, a list of slots, would be read by position into this
        run's (`reset_optim="keep_states"`). A parent recorded without an optimizer is not checked for it."""
        self._check_holds_optimizer_state()
        recorded = self.model_dir.recorded_training_setting("optimizer")
        if recorded is not None and recorded != optimizer_name:
            raise ValueError(
                f"init_from={self.init_from}: the parent's optimizer state ({recorded}) does not fit this run's "
                f"optimizer ({optimizer_name}; "
                f"trained with another --optimizer?): use --optimizer={recorded}, or --reset_optim=all"
            )

    def restore(self, model, optimizer=None):
        """Gives `model` the parent's weights; with `optimizer`, also the parent's optimizer state (its
        accumulators and update count). Nothing else of the parent's run is read (step, schedule, early
        stopping, data iterator and dropout random states stay this run's)."""
        tf.train.Checkpoint(model=model).read(self.checkpoint_path).expect_partial().assert_existing_objects_matched()
        if optimizer is None:
            return
        self._check_holds_optimizer_state()
        try:
            tf.train.Checkpoint(optimizer=optimizer).read(self.checkpoint_path).expect_partial() \
                .assert_existing_objects_matched()
        except AssertionError as error:
            raise ValueError(
                f"init_from={self.init_from}: the parent's optimizer state in {self.checkpoint_path} does not fit "
                f"this run's optimizer ({type(optimizer).__name__}; trained with another --optimizer?): "
                f"{str(error)[:200]}"
            ) from error

    def _check_holds_optimizer_state(self):
        if "optimizer" not in saved_object_names(self.checkpoint_path):
            raise ValueError(
                f"init_from={self.init_from}: {self.checkpoint_path} holds no optimizer state (an averaged "
                "checkpoint holds only the model): use :best or :latest, or reset_optim=all"
            )

    def record(self):
        """What the child's model directory records of its parent (`parent.json`): the checkpoint used, and the
        one asked for (`requested`) where that differs ("best" in a parent not validated yet)."""
        return {"model_dir": self.model_dir.path, "checkpoint": self.checkpoint,
                **({"requested": self.requested} if self.requested != self.checkpoint else {}),
                "checkpoint_path": os.path.abspath(self.checkpoint_path), "step": self.step}
