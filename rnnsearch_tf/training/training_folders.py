"""The folders a training run reads and writes, checked before anything is written."""

import glob
import os

from data_pipeline import text_codec
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.training.parent_model import ParentModel
from rnnsearch_tf.training.training_config import INPUT_PIPELINE_SWITCHES


class TrainingFolders:
    """The data directory, the model directory (this worker's), the parent model and the data to switch to.

    Construction checks what can be checked without writing: the data's vocabularies have the model's
    sizes, the training (and dev) shards read, a parent model fits (`ParentModel.check_fits`), a
    `switch_data_dir` has the same vocabularies. `prepare_model_dir` then checks a model directory that
    training started in before (the same model, vocabularies and parent; the optimizer, selection metric and input
    pipeline recorded of it) or describes a new one.

    Every worker of a multi-worker run saves checkpoints (saving is collective); only the chief's go to
    `model_dir`, the others' to `ModelDir.worker_dir`.

    Args:
        training_config: `TrainingConfig` (`model_dir`, `data_dir`, `dev_split`, `validate_every`, `model`,
            `init_from`, `reset_optim`, `switch_data_dir`).
        model_config: the `ModelConfig` of the model to train.
        worker_index: this worker's index; 0 is the chief.
    """

    def __init__(self, training_config, model_config, worker_index=0):
        self.config = training_config
        self.model_config = model_config
        self.is_chief = worker_index == 0
        self.model_dir = ModelDir(training_config.model_dir)
        self.data_dir = DataDir(training_config.data_dir)
        self.worker_dir = self.model_dir if self.is_chief else ModelDir(self.model_dir.worker_dir(worker_index))
        self.metadata = self.data_dir.read_metadata()
        self.training_pairs = self.data_dir.records("train")  # kept and joined pairs: what an epoch passes over
        self._check_vocabulary_sizes()
        self.parent = ParentModel(training_config.init_from) if training_config.init_from else None
        if self.parent:
            self.parent.check_fits(training_config.model, model_config, self.data_dir)
            if training_config.reset_optim == "keep_states":
                self.parent.check_optimizer_state(training_config.optimizer)
        validated = [training_config.dev_split] if training_config.validate_every else []
        if validated:
            self._check_dev_split()
        self.data_dir.check_shards(["train"] + validated)
        self.switch_data_dir = self._check_switch_data_dir()
        self._check_subword_sampling()

    @property
    def max_length(self):
        """The data's longest training sentence, in tokens without `</s>`."""
        return self.metadata["filters"]["max_length"]

    def _check_dev_split(self):
        """Raises ValueError unless the data has a `dev_split` with pairs to validate on (data built from training
        files alone has none; an empty split's BLEU would fail the first validation)."""
        split, splits = self.config.dev_split, self.metadata["splits"]
        remedy = "rebuild the data with --dev_source/--dev_target, or train with --validate_every=0"
        if split not in splits:
            raise ValueError(f"--dev_split={split}: {self.data_dir.metadata_file} has no such split to validate on "
                             f"(it has {sorted(splits)}): name one of them with --dev_split, {remedy}")
        if not self.data_dir.records(split):
            raise ValueError(f"{self.data_dir.metadata_file}: the {split} split has no pair to validate on: {remedy}")

    def _check_vocabulary_sizes(self):
        for side in ("source", "target"):
            data_size = self.metadata["vocabularies"][side]["size"]
            model_size = getattr(self.model_config, f"{side}_vocab_size")
            if data_size != model_size:
                raise ValueError(
                    f"{self.config.data_dir} has a {side} vocabulary of {data_size} entries but the model "
                    f"config says {side}_vocab_size={model_size}"
                )

    def _check_subword_sampling(self):
        """`subword_sampling_alpha` samples SentencePiece segmentations: refused on word-level data."""
        kinds = {description.get("kind") for description in self.data_dir.codec_descriptions().values()}
        if self.config.subword_sampling_alpha and kinds != {text_codec.SENTENCEPIECE}:
            raise ValueError(
                f"--subword_sampling_alpha={self.config.subword_sampling_alpha} samples SentencePiece pieces, but "
                f"{self.data_dir.path} is word-level; build the data with `rnnsearch build-data "
                "--subwords=sentencepiece`, or leave --subword_sampling_alpha at 0"
            )

    def _check_switch_data_dir(self):
        """The `switch_data_dir` as a `DataDir` (None without one), checked: its training shards read and
        its vocabularies are `data_dir`'s (the same word ids)."""
        if not self.config.switch_data_dir:
            return None
        switch_data_dir = DataDir(self.config.switch_data_dir)
        if not os.path.exists(switch_data_dir.metadata_file):  # DataDir's own message names --data_dir
            raise FileNotFoundError(f"{switch_data_dir.metadata_file} is missing: --switch_data_dir must be the "
                                    "--output_dir of `rnnsearch build-data`; --switch_data_dir= trains on data_dir "
                                    "only")
        side = switch_data_dir.differing_vocabulary(self.data_dir)
        if side:
            raise ValueError(
                f"switch_data_dir={switch_data_dir.path}: its {side} vocabulary differs from that of "
                f"data_dir={self.data_dir.path} ({switch_data_dir.vocabulary_file(side)}); build it from the "
                f"same corpus, or with `rnnsearch build-data ... --vocabulary_from={self.data_dir.path}`; "
                "--switch_data_dir= trains on data_dir only"
            )
        switch_data_dir.check_shards(["train"])
        return switch_data_dir

    def prepare_model_dir(self):
        """Checks a model directory that training started in before; describes a new one (the chief), or
        creates this worker's folder."""
        if not self.is_chief:
            os.makedirs(self.worker_dir.path, exist_ok=True)
            return
        parent = self.parent and dict(self.parent.record(), reset_optim=self.config.reset_optim)
        if self.model_dir.has_model():
            self._check_same_parent(parent)
            self._check_recorded_settings()
            self._check_same_input_pipeline()
            self.model_dir.check_model(self.config.model, self.model_config)
            self.model_dir.check_vocabularies(self.data_dir)
            return
        data_info = {name: self.metadata[name] for name in ("source_language", "target_language")}
        data_info.update(corpus=self.metadata.get("corpus"), data_dir=os.path.abspath(self.data_dir.path),
                         max_length=self.max_length, codec=self.data_dir.codec_descriptions())
        self.model_dir.write_model(self.config.model, self.model_config, data_info,
                                   self.data_dir.source_vocabulary_file, self.data_dir.target_vocabulary_file,
                                   parent, self.data_dir.subword_model_files(), self.config.optimizer)

    def _check_recorded_settings(self):
        """Raises ValueError when a resumed run's `optimizer` or `select_by` is not the one recorded of it
        (`ModelDir.recorded_training_setting`): the checkpoint's optimizer slots are a list that another optimizer
        would read by position (and diverge), and the best score kept is of the recorded metric. A run recorded
        without them resumes."""
        for flag, value, recorded_name in (("optimizer", self.config.optimizer, "optimizer"),
                                           ("select_by", self.config.select_by, "selected_by")):
            recorded = self.model_dir.recorded_training_setting(recorded_name)
            if recorded is not None and recorded != value:
                raise ValueError(
                    f"--{flag}={value}: {self.model_dir.path} was trained with --{flag}={recorded}; resume with "
                    f"--{flag}={recorded}, or start a new "
                    "--model_dir (--init_from=... --reset_optim=all keeps the weights)"
                )

    def new_model_dir_from_latest(self):
        """The remedy for a setting a run cannot change (its checkpoints would not read): where and how to go on
        from its weights instead."""
        return f"a new --model_dir with --init_from={self.model_dir.path}:latest --reset_optim=keep_states"

    def _check_same_input_pipeline(self):
        """Raises ValueError when a resumed run turns `max_tokens` or `subword_sampling_alpha` on or off
        (`INPUT_PIPELINE_SWITCHES`) against the run's flags.txt (written by `rnnsearch train` once a run is
        accepted) while it has checkpoints: their data iterator reads only into an input pipeline of the same
        structure. Their values may change. A run without flags.txt is checked when it resumes
        (`Checkpointing.restore`)."""
        checkpoints = glob.glob(os.path.join(self.worker_dir.checkpoint_dir, "ckpt-*.index"))
        if not checkpoints or not os.path.exists(self.model_dir.flags_file):
            return
        with open(self.model_dir.flags_file, encoding="utf-8") as lines:
            recorded = dict(line.strip()[2:].split("=", 1) for line in lines if line.startswith("--") and "=" in line)
        for name in INPUT_PIPELINE_SWITCHES:
            value, before = getattr(self.config, name), recorded.get(name)
            if bool(value) == bool(before and float(before)):
                continue
            was, now = (f"with --{name}={before}" if not value else f"without --{name}",
                        f"with --{name}={value}" if value else f"without --{name}")
            raise ValueError(
                f"--{name}={value or 0}: {self.model_dir.path} was trained {was} ({self.model_dir.flags_file}), and "
                f"its checkpoints hold the data position of that input pipeline, which one {now} cannot read: resume "
                f"{was} (its value may change, not whether it is set), or continue the weights in "
                f"{self.new_model_dir_from_latest()}"
            )

    def _check_same_parent(self, parent):
        """Raises ValueError when `init_from` names a parent that the existing model directory did not
        start from: `init_from` starts a new model directory, it does not overwrite one. The same parent
        directory and checkpoint name resume the child (`ParentModel.named_in`)."""
        if parent is None:
            return
        recorded = self.model_dir.read_parent()
        if recorded is None or not self.parent.named_in(recorded):
            raise ValueError(
                f"init_from={self.config.init_from}: {self.model_dir.path} already holds a model"
                + (f" started from {recorded['checkpoint_path']}" if recorded else " not started from it")
                + "; --init_from starts a new --model_dir"
            )
