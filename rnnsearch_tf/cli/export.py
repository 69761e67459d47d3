r"""Exports a model directory as a versioned SavedModel for TensorFlow Serving.

    rnnsearch export --model_dir=models/rnnsearch50 --export_dir=exports/rnnsearch \
        --beam_size=12 --length_normalization=length

writes `exports/rnnsearch/<version>/` (integer versions, the newest is served) with the signatures of
`Translator.serving_signatures`; see `serving/export.py` for what a version holds.
"""

from absl import app, flags

from rnnsearch_tf.cli import folder_flags, search_flags
from rnnsearch_tf.inference.translator import Translator
from serving import export

_MODEL_DIR = folder_flags.define_model_dir(ensemble=True, required=True)
_EXPORT_DIR = flags.DEFINE_string("export_dir", None, "Model base path; versions go in subfolders.", required=True)
_VERSION = flags.DEFINE_integer("version", None, "Version number; default: one more than the newest.", lower_bound=0)
_MAXIMUM_BATCH_SIZE = flags.DEFINE_integer("maximum_batch_size", 1000, "Larger requests are refused.", lower_bound=1)
_NUM_ALTERNATIVES = flags.DEFINE_integer(
    "num_alternatives", 10, "Next words the translate_prefix signature offers after each prefix.", lower_bound=1
)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    search_flags.refuse_given(
        [search_flags.BATCH_SIZE, search_flags.DECODE_WORKERS, search_flags.UNK_DICTIONARY,
         search_flags.FUNCTION_CACHE],
        "by export: they say how translate and evaluate decode a file, not what an export holds",
    )
    version = export.new_version(_EXPORT_DIR.value, _VERSION.value)  # refused before the model is built
    translator = Translator.from_model_dir(
        _MODEL_DIR.value,
        search_flags.CHECKPOINT.value,
        maximum_batch_size=_MAXIMUM_BATCH_SIZE.value,
        precision=search_flags.PRECISION.value,
        quantize=search_flags.QUANTIZE.value,
        num_alternatives=_NUM_ALTERNATIVES.value,
        search_config=search_flags.search_config(),
    )
    path = export.export(translator, _EXPORT_DIR.value, version)
    print(f"exported {translator.checkpoint_path} to {path}")
