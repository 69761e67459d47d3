"""The search-option flags shared by the translate and evaluate entry points (see `Translator`)."""

from absl import flags

from rnnsearch_tf.beam_search import LENGTH_NORMALIZATIONS

CHECKPOINT = flags.DEFINE_string(
    "checkpoint", "best", '"best", "latest", "averaged" (rnnsearch_tf.average_checkpoints) or a checkpoint path.'
)
BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch (batches hold sentences of similar length).")
BEAM_SIZE = flags.DEFINE_integer("beam_size", 12, "Beam width (12 in the paper).")
LENGTH_NORMALIZATION = flags.DEFINE_enum(
    "length_normalization", "none", LENGTH_NORMALIZATIONS, "How hypothesis scores are normalised by length."
)
LENGTH_PENALTY_ALPHA = flags.DEFINE_float("length_penalty_alpha", 0.6, "Exponent of the gnmt length penalty.")
MAXIMUM_LENGTH_A = flags.DEFINE_float("maximum_length_a", 2.0, "Target length bound: a * source_length + b.")
MAXIMUM_LENGTH_B = flags.DEFINE_integer("maximum_length_b", 10, "Target length bound: a * source_length + b.")
MAXIMUM_SOURCE_LENGTH = flags.DEFINE_integer(
    "maximum_source_length", 100, "Sources of more Moses tokens are translated from their first tokens only."
)
UNK_DICTIONARY = flags.DEFINE_string(
    "unk_dictionary", None, "File of 'source word<TAB>target text' lines used by <unk> replacement."
)


def search_options():
    """The `Translator` search options the flags above set (without `num_hypotheses`, `forbid_unk`)."""
    return dict(
        beam_size=BEAM_SIZE.value,
        length_normalization=LENGTH_NORMALIZATION.value,
        length_penalty_alpha=LENGTH_PENALTY_ALPHA.value,
        maximum_length_a=MAXIMUM_LENGTH_A.value,
        maximum_length_b=MAXIMUM_LENGTH_B.value,
        maximum_source_length=MAXIMUM_SOURCE_LENGTH.value,
    )
