"""The flags of the commands that translate (translate, evaluate, score, export): which checkpoint, how many
sentences per batch and batches at once, `<unk>` replacement, the weights' precision and storage, and one flag per
`SearchConfig` field."""

from absl import app, flags

from rnnsearch_tf.cli.config_flags import config_from_flags, define_config_flags, given_flags
from rnnsearch_tf.inference.batch_translator import DECODE_WORKERS as _DEFAULT_WORKERS
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.utils.function_cache import FunctionCache, default_directory
from rnnsearch_tf.utils.precision import PRECISIONS
from rnnsearch_tf.utils.quantization import QUANTIZATIONS
from rnnsearch_tf.utils.threads import share_cores

CHECKPOINT = flags.DEFINE_string(
    "checkpoint", "best", '"best", "latest", "averaged" (rnnsearch_tf.average_checkpoints), a checkpoint path, or '
    'the name of one in the model directory ("ckpt-500").'
)
BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch (batches hold sentences of similar length).")
DECODE_WORKERS = flags.DEFINE_integer(
    "decode_workers", _DEFAULT_WORKERS, "Batches translated at once, each on its share of the cores (Marian's "
    "--cpu-threads workers); the translations do not depend on it.", lower_bound=1,
)
UNK_DICTIONARY = flags.DEFINE_string(
    "unk_dictionary", None, "File of 'source word<TAB>target text' lines used by <unk> replacement."
)
PRECISION = flags.DEFINE_enum(
    "precision", None, list(PRECISIONS),
    "Decode in float32, mixed_bfloat16 or auto (bf16 where the hardware has it); default: the model's own.",
)
QUANTIZE = flags.DEFINE_enum(
    "quantize", "none", list(QUANTIZATIONS),
    "int8: hold every weight matrix in int8 with a scale per output unit or word (an export of a quarter of the "
    "bytes), widened to --precision's type once per call, not int8 arithmetic (docs/serving.md); none: as trained.",
)
FUNCTION_CACHE = flags.DEFINE_string(
    "function_cache", default_directory(), "Folder keeping the traced search between commands, so that a command "
    "loads it instead of tracing it again (rnnsearch_tf.utils.function_cache); \"\": trace in every command.",
)
_SEARCH_FLAGS = define_config_flags(SearchConfig)


def decode_workers():
    """--decode_workers, after giving each worker its share of this process's cores (`share_cores`): call
    it before TensorFlow's first op."""
    share_cores(DECODE_WORKERS.value)
    return DECODE_WORKERS.value


def function_cache():
    """The `FunctionCache` of --function_cache (None for "")."""
    return FunctionCache(FUNCTION_CACHE.value) if FUNCTION_CACHE.value else None


def search_config():
    """The `SearchConfig` the flags set (without `--shortlist` / `--noshortlist`, the model directory's shortlist
    where it has one: `SearchConfig.shortlist`)."""
    return config_from_flags(SearchConfig, _SEARCH_FLAGS)


def refuse_with_saved_model():
    """UsageError naming the flags given that are read from a model directory only: an export (`--saved_model`)
    fixed its checkpoint, precision, weights and search when it was made (`rnnsearch export` takes them), and is
    traced already (no command, export included, reads --function_cache for it)."""
    refuse_given([CHECKPOINT, PRECISION, QUANTIZE, *_SEARCH_FLAGS.values()],
                 "with --saved_model: its export fixed them (give them to rnnsearch export, or use --model_dir)")
    refuse_given([FUNCTION_CACHE], "with --saved_model: an export's search is traced already (the cache keeps a "
                 "model directory's traced search)")


def refuse_given(holders, reason):
    """UsageError naming those of `holders` (FlagHolders) set to other than their defaults: flags this command
    would not read, refused rather than ignored; `reason` ends the message ("with --saved_model: ...")."""
    given = given_flags(holders)
    if given:
        raise app.UsageError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} not read {reason}")
