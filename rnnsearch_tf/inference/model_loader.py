"""What translating needs from model directories: the model (or ensemble), the text codecs, the shortlist."""

import dataclasses
import os

from absl import logging

from rnnsearch_tf.inference.decoding_model import DecodingModel
from rnnsearch_tf.inference.shortlist import Shortlist, vocabulary_digest
from rnnsearch_tf.models.ensemble import Ensemble
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.precision import DECODING_POLICIES
from rnnsearch_tf.utils.quantization import check_quantization


@dataclasses.dataclass(frozen=True)
class LoadedModel:
    """A model read from one model directory, or an `Ensemble` of several sharing a text codec.

    Attributes:
        model: the `EncoderDecoderModel` with restored weights, or the `DecodingModel` of its stored form
            (`decoding_model`), or an `Ensemble` of them.
        source_codec, target_codec: the `TextCodec`s of the (first) model directory.
        checkpoint_path: the checkpoint read; an ensemble's joined with "+".
        shortlist: the `Shortlist` of the model directory when read (`load_model_dir`), else None.
    """

    model: object
    source_codec: object
    target_codec: object
    checkpoint_path: str
    shortlist: Shortlist = None


def load_model_dir(model_dir, checkpoint="best", precision=None, shortlist=None, quantize="none"):
    """Reads a model directory (`ModelDir`) for translation.

    Args:
        model_dir: path of the model directory, or several joined by "+" (`ModelDir.split`): an
            `Ensemble` of their models, which must share vocabularies and languages.
        checkpoint: "best", "latest", "averaged", a checkpoint's name ("ckpt-500") or path
            (`ModelDir.checkpoint_path`), the same for every model but a path; or one per model joined by "+".
        precision: `ModelConfig.precision` to decode with; None: each model's own (model.json). Under
            mixed_bfloat16 (or "auto" resolved to it) the weights are held in bf16 (`decoding_model`).
        shortlist: `SearchConfig.shortlist`: None reads the directory's shortlist (`rnnsearch shortlist`
            writes it) when it is one directory with one, True reads it (it must exist), False none.
        quantize: one of `quantization.QUANTIZATIONS`: "int8" holds every matrix in int8 (`decoding_model`).

    Returns:
        `LoadedModel`. The model directories are checked and their codecs read (`check_model_dir`) before any
        weights load, so that a bad value, codec file or checkpoint is named at once.
    """
    model_dirs, codecs, paths = check_model_dir(model_dir, checkpoint, quantize)
    models = [decoding_model(directory.load_model(path, precision)[0], quantize)
              for directory, path in zip(model_dirs, paths)]
    return LoadedModel(
        models[0] if len(models) == 1 else Ensemble(models),
        *codecs,
        "+".join(paths),
        _read_shortlist(model_dirs, shortlist, codecs),
    )


def check_model_dir(model_dir, checkpoint="best", quantize="none"):
    """(the `ModelDir`s of `model_dir`, their source and target codecs, each model's checkpoint path resolved
    once: "best" is the same file when its weights load) for `load_model_dir`'s arguments, after
    raising ValueError or FileNotFoundError in one line where `load_model_dir` would fail before reading weights,
    in this order: `quantize` unknown, an ensemble's members trained on different data (`ModelDir.check_same_data`),
    a codec file, a model description missing, a checkpoint not found (`member_checkpoints`,
    `ModelDir.checkpoint_path`). Reads no weights, so that a command evaluating several models checks all before it
    decodes any."""
    check_quantization(quantize)
    model_dirs = [ModelDir(path) for path in ModelDir.split(model_dir)]
    for other in model_dirs[1:]:
        model_dirs[0].check_same_data(other)
    codecs = [model_dirs[0].codec(side) for side in ("source", "target")]
    paths = []
    for directory, name in zip(model_dirs, member_checkpoints(checkpoint, len(model_dirs))):
        directory.read_model_description()
        paths.append(directory.checkpoint_path(name))
    return model_dirs, codecs, paths


def member_checkpoints(checkpoint, count):
    """The checkpoint of each of `count` models: `checkpoint` split at "+" (one per model, as the model
    directories are joined), or the same for all. ValueError for another count, and for one checkpoint path given
    to several models: an ensemble of one model's weights read into every member."""
    checkpoints = checkpoint.split("+")
    if len(checkpoints) == 1 and count > 1 and ModelDir.is_checkpoint_path(checkpoint):
        raise ValueError(f"checkpoint {checkpoint} is one model's: an ensemble of {count} models takes one per model, "
                         "joined by '+' as the model directories are, or best, latest, averaged or a name (ckpt-500)")
    if len(checkpoints) not in (1, count):
        raise ValueError(f"checkpoint {checkpoint}: {len(checkpoints)} checkpoints joined by '+' for {count} models")
    return checkpoints * (count // len(checkpoints))


def decoding_model(model, quantize="none"):
    """`model` (an `EncoderDecoderModel` that read its checkpoint) as it decodes.

    Where its dtype policy has a decoding policy (`DECODING_POLICIES`: mixed_bfloat16 -> bfloat16) or `quantize` is
    "int8", a `DecodingModel` holding its weights in that form: bf16 variables, the numbers the mixed policy
    computes without its cast of every weight at every search step; int8 matrices with per-channel scales, widened
    once per call. `model` computes, reading them: it is built once. Otherwise `model` itself (float32 decoding is
    untouched).
    """
    if model.dtype_policy.name not in DECODING_POLICIES and check_quantization(quantize) == "none":
        return model
    return DecodingModel(model, quantize)


def _read_shortlist(model_dirs, wanted, codecs):
    """The first directory's `Shortlist` where `wanted` (`load_model_dir`'s `shortlist`), else None. ValueError
    where it was built over other vocabularies than `codecs` (source, target: its ids would be other words); one
    written before shortlists recorded theirs is used with a warning."""
    model_dir = model_dirs[0]
    if wanted is None:  # the one default of every command
        wanted = len(model_dirs) == 1 and os.path.exists(model_dir.shortlist_file)
    if not wanted:
        return None
    rebuild = f"`rnnsearch shortlist --model_dir={model_dir.path}`"
    try:
        shortlist = Shortlist.from_file(model_dir.shortlist_file)
    except FileNotFoundError:
        raise FileNotFoundError(f"--shortlist needs {model_dir.shortlist_file}: build it with {rebuild}") from None
    if shortlist.vocabularies is None:
        logging.warning("%s does not record the vocabularies it was built over: rebuild it with %s",
                        model_dir.shortlist_file, rebuild)
    elif shortlist.vocabularies != vocabulary_digest(*codecs):
        raise ValueError(f"{model_dir.shortlist_file} was built over other vocabularies than the model's "
                         f"(its source and target codec files): rebuild it with {rebuild}")
    return shortlist
