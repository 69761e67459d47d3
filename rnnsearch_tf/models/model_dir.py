"""The layout of a model directory: what training writes and what translation and serving read."""

import contextlib
import dataclasses
import json
import os
import shutil

import tensorflow as tf

from data_pipeline.constants import MODEL_DATA_FILE, MODEL_FILE
from data_pipeline.export_dir import ExportDir
from data_pipeline.languages import same_pair
from data_pipeline.pair_reader import sha256
from data_pipeline.vocabulary_folder import VocabularyFolder
from rnnsearch_tf.layers.initializers import restored_weights
from rnnsearch_tf.models.model_config import ModelConfig
from rnnsearch_tf.models.rnn_enc_dec import RNNEncDec
from rnnsearch_tf.models.rnn_search import RNNSearch

MODEL_CLASSES = {"rnnsearch": RNNSearch, "rnnencdec": RNNEncDec}
PARENT_FILE = "parent.json"  # written with the model's description when it starts from another's weights
TRAINING_STATE_FILE = "training_state.json"  # the latest validation and the learning curve
SHORTLIST_FILE = "shortlist.npz"  # written by `rnnsearch shortlist`, read by `--shortlist`
ENSEMBLE_SEPARATOR = "+"


class ModelDir(VocabularyFolder):
    """A model directory.

        model_dir/
          model.json            {"model": "rnnsearch" | "rnnencdec", "config": ModelConfig dict}
          data.json             {"source_language", "target_language", ...} of the data it was trained on
          source_vocab.tsv      the text codec (`data.json`'s "codec"), copied from the data directory:
          target_vocab.tsv      the vocabularies and, for subwords, the SentencePiece model(s)
          spm.model
          flags.txt             resolved flags: `--flagfile=model_dir/flags.txt` reproduces the run
          parent.json           the model it started from, if any (`--init_from`): its model_dir,
                                checkpoint, checkpoint_path, step, and reset_optim
          training_state.json   the latest validation and every earlier one (the learning curve)
          checkpoints/ckpt-N    the last checkpoints (model, optimizer, step, data iterator)
          best/ckpt-N           the checkpoints with the best dev BLEU
          averaged/ckpt-N       the average of several checkpoints (`average_checkpoints`)
          averaged/averaging.json  which checkpoints, by step, and from where (`read_averaging`)
          train/, dev/          TensorBoard event files
          workers/N/            a multi-worker run's files of worker N (not the chief)

    Args:
        path: the directory.
    """

    @staticmethod
    def split(model_dirs):
        """"a+b" -> ["a", "b"]: the model directories of an ensemble (one path: a single model)."""
        paths = [path for path in os.fspath(model_dirs).split(ENSEMBLE_SEPARATOR) if path]
        if not paths:
            raise ValueError(f"no model directory in {model_dirs!r}")
        return paths

    def check_same_data(self, other):
        """Raises ValueError unless `other` (a ModelDir) has the same vocabularies and languages."""
        side = self.differing_vocabulary(other)
        if side:
            raise ValueError(
                f"{self.vocabulary_file(side)} and {other.vocabulary_file(side)} differ: the models of an ensemble "
                "must be trained on the same data directory"
            )
        pairs = [tuple(directory.read_data_info()[key] for key in ("source_language", "target_language"))
                 for directory in (self, other)]
        if not same_pair(*pairs):  # "cmn" is "zh" (`same_language`)
            raise ValueError(f"{self.path} and {other.path} translate different languages: "
                             f"{'-'.join(pairs[0])} and {'-'.join(pairs[1])}")

    def read_data_info(self):
        return self.read_json(MODEL_DATA_FILE)

    def read_model_description(self):
        """model.json: {"model": "rnnsearch" | "rnnencdec", "config": `ModelConfig` dict, "optimizer": the
        optimizer the run trains with (a resumed run must keep it; not in a model of before it was recorded)}."""
        return self.read_json(MODEL_FILE)

    @property
    def model_file(self):
        return self.file(MODEL_FILE)

    @property
    def shortlist_file(self):
        """shortlist.npz: the vocabulary shortlist `--shortlist` decodes over (`rnnsearch shortlist`)."""
        return self.file(SHORTLIST_FILE)

    @property
    def training_state_file(self):
        """training_state.json: the latest validation and the learning curve (`EarlyStopping.write_state`)."""
        return self.file(TRAINING_STATE_FILE)

    def read_training_state(self):
        """training_state.json as a dict, or None where training has not validated yet (or for a copy)."""
        return self.read_json(TRAINING_STATE_FILE) if os.path.exists(self.training_state_file) else None

    def recorded_training_setting(self, name):
        """A setting recorded of the run: `optimizer` (model.json, from the run's start; training_state.json in
        a model of before), `selected_by` (training_state.json); None where not recorded (`selected_by` before
        the first validation)."""
        return self.read_model_description().get(name, (self.read_training_state() or {}).get(name))

    def read_parent(self):
        """parent.json, the trained model this one started from (`rnnsearch train --init_from`), as a dict;
        None for a model trained from scratch."""
        return self.read_json(PARENT_FILE) if os.path.exists(self.file(PARENT_FILE)) else None

    def tensorboard_dir(self, name):
        """The TensorBoard log folder of the "train" or "dev" summaries."""
        if name not in ("train", "dev"):
            raise ValueError(f"TensorBoard logs are train/ and dev/, not {name!r}")
        return self.file(name)

    def worker_dir(self, index):
        """The folder of a non-chief worker's own files (workers/N) in a multi-worker run."""
        return self.file(os.path.join("workers", str(index)))

    def workers_with_checkpoints(self):
        """The indices N of the workers/N folders that hold a checkpoint (a multi-worker run's other workers)."""
        indices = []
        for name in os.listdir(self.file("workers")) if os.path.isdir(self.file("workers")) else []:
            folder = ModelDir(self.worker_dir(name))
            if name.isdigit() and tf.train.latest_checkpoint(folder.checkpoint_dir):
                indices.append(int(name))
        return sorted(indices)

    @property
    def averaged_checkpoint_dir(self):
        return self.file("averaged")

    @property
    def averaging_file(self):
        return os.path.join(self.averaged_checkpoint_dir, "averaging.json")

    @property
    def checkpoint_dir(self):
        return self.file("checkpoints")

    @property
    def best_checkpoint_dir(self):
        return self.file("best")

    def write_model(self, model_name, config, data_info, source_vocabulary_file, target_vocabulary_file,
                    parent=None, subword_model_files=(), optimizer=None):
        """Writes model.json (with `optimizer`, the run's, where given), data.json, copies of the vocabularies
        and of the `subword_model_files` (a subword codec's SentencePiece models) and, for a model started from
        another one's weights, `parent` (a dict) to parent.json (before training starts)."""
        if model_name not in MODEL_CLASSES:
            raise ValueError(f"model must be one of {sorted(MODEL_CLASSES)}, got {model_name!r}")
        os.makedirs(self.path, exist_ok=True)
        self._write_json(MODEL_FILE, {"model": model_name, "config": config.to_dict(),
                                      **({"optimizer": optimizer} if optimizer else {})})
        self._write_json(MODEL_DATA_FILE, data_info)
        if parent is not None:
            self._write_json(PARENT_FILE, parent)
        for source, target in (
            (source_vocabulary_file, self.source_vocabulary_file),
            (target_vocabulary_file, self.target_vocabulary_file),
            *((path, self.file(os.path.basename(path))) for path in subword_model_files),
        ):
            if os.path.abspath(source) != os.path.abspath(target):
                shutil.copyfile(source, target)

    def has_model(self):
        """Whether model.json exists: training started in this directory before, and resumes."""
        return os.path.exists(self.model_file)

    def check_model(self, model_name, config):
        """Raises ValueError unless model.json describes `model_name` with `config` (a `ModelConfig`):
        the checkpoints here hold that model's weights, so a resumed run must build the same one."""
        written, wanted = self.read_model_description(), {"model": model_name, **config.to_dict()}
        written = {"model": written.get("model"), **written.get("config", {})}
        differences = [f"{name} {written.get(name)}, not {value}" for name, value in wanted.items()
                       if written.get(name) != value]
        if differences:
            raise ValueError(
                f"{self.path} holds a different model ({self.model_file}: {'; '.join(differences)} as "
                "given); resume with the same settings or choose another --model_dir"
            )

    def check_vocabularies(self, data_dir):
        """Raises ValueError unless `data_dir` (a `DataDir`) holds this model's language pair and the vocabulary
        copies here are its vocabularies (its metadata.json gives their sha256): the embeddings belong to the
        copies' word ids, which a data directory rebuilt since the model started may have renumbered."""
        metadata = data_dir.read_metadata()
        pairs = [tuple(info.get(f"{side}_language") for side in ("source", "target"))
                 for info in (self.read_data_info(), metadata)]
        # A folder that names no languages is not judged; a variety agrees with its language ("cmn", "zh").
        if not same_pair(*pairs) and None not in pairs[0] + pairs[1]:
            raise ValueError(f"{self.path} translates {' -> '.join(map(str, pairs[0]))} but {data_dir.path} holds "
                             f"{' -> '.join(map(str, pairs[1]))}: train it on its own language pair's data, or start "
                             "a new --model_dir")
        vocabularies = metadata["vocabularies"]
        for side, copy in (("source", self.source_vocabulary_file), ("target", self.target_vocabulary_file)):
            expected = vocabularies[side].get("sha256")
            if expected is not None and sha256(copy) != expected:
                raise ValueError(
                    f"{copy} differs from the {side} vocabulary of {data_dir.path} (rebuilt since this model "
                    "started?): the model's weights belong to its own copy; train it on the data it started "
                    "with, or start a new --model_dir"
                )

    def _write_json(self, name, values):
        with open(self.file(name), "w", encoding="utf-8") as stream:
            json.dump(values, stream, indent=2, sort_keys=True)
            stream.write("\n")

    def read_json(self, name):
        path = self.file(name)
        if not os.path.exists(path):
            export = " (it holds a SavedModel: --saved_model reads exports)" if ExportDir(self.path).versions() else ""
            raise FileNotFoundError(
                f"{path} is missing: {self.path} is not a model directory written by training{export}"
            )
        with open(path, encoding="utf-8") as stream:
            try:
                return json.load(stream)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}: not valid JSON ({error})") from error

    def build_model(self, precision=None, to_restore=False):
        """The model of model.json, with fresh weights; `precision` (`ModelConfig.precision`) replaces the
        one it was trained with. `to_restore`: a checkpoint's weights replace them at once, so they are built
        as zeros (`initializers.restored_weights`), not drawn."""
        description = self.read_model_description()
        if description.get("model") not in MODEL_CLASSES:
            raise ValueError(f"{self.model_file}: field 'model' must be one of {sorted(MODEL_CLASSES)}")
        config = ModelConfig.from_dict(description["config"])
        if precision is not None:
            config = dataclasses.replace(config, precision=precision)
        with restored_weights() if to_restore else contextlib.nullcontext():
            return MODEL_CLASSES[description["model"]](config)

    def checkpoint_path(self, checkpoint="best"):
        """"best" (falls back to "latest" when there is no best yet), "latest", "averaged" (written by
        `average_checkpoints`), a checkpoint path, or the name of one of this directory's checkpoints
        ("ckpt-500"); FileNotFoundError naming the checkpoints there otherwise."""
        if checkpoint == "averaged":
            path = tf.train.latest_checkpoint(self.averaged_checkpoint_dir)
            if path is None:
                raise FileNotFoundError(
                    f"no checkpoint in {self.averaged_checkpoint_dir}: run `rnnsearch average "
                    f"--model_dir={self.path}` first"
                )
            return path
        if checkpoint in ("best", "latest"):
            path = None
            if checkpoint == "best":
                path = tf.train.latest_checkpoint(self.best_checkpoint_dir)
            path = path or tf.train.latest_checkpoint(self.checkpoint_dir)
            if path is None:
                raise FileNotFoundError(f"no checkpoint in {self.checkpoint_dir} or {self.best_checkpoint_dir}")
            return path
        for path in (checkpoint, *(os.path.join(folder, checkpoint) for folder in self._checkpoint_folders())):
            if tf.io.gfile.exists(f"{path}.index"):
                return path
        kept = [os.path.relpath(index[: -len(".index")], self.path)
                for folder in self._checkpoint_folders() for index in sorted(tf.io.gfile.glob(f"{folder}/*.index"))]
        raise FileNotFoundError(
            f"checkpoint {checkpoint} not found: neither a checkpoint path nor one of {self.path}'s "
            f"({', '.join(kept) or 'none yet'}); or give best, latest or averaged"
        )

    @staticmethod
    def is_checkpoint_path(checkpoint):
        """Whether `checkpoint` (`checkpoint_path`'s argument) is the path of a checkpoint, not a name."""
        return tf.io.gfile.exists(f"{checkpoint}.index") and os.path.dirname(checkpoint) != ""

    def _checkpoint_folders(self):
        return self.checkpoint_dir, self.best_checkpoint_dir, self.averaged_checkpoint_dir

    def load_model(self, checkpoint="best", precision=None):
        """(model with the checkpoint's weights, checkpoint path); `precision` as in `build_model`."""
        path = self.checkpoint_path(checkpoint)
        model = self.build_model(precision, to_restore=True)
        try:
            tf.train.Checkpoint(model=model).read(path).expect_partial().assert_existing_objects_matched()
        except (ValueError, AssertionError) as error:  # a checkpoint of another model's shapes or layers
            raise ValueError(f"{path} does not hold the weights of {self.model_file}'s model: "
                             f"{str(error).splitlines()[0][:300]}") from error
        return model, path
