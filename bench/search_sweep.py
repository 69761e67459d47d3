"""Dev BLEU of a trained model under several search settings, to choose a config's search defaults.

    python -m bench.search_sweep --model_dir=work_dirs/multi30k_rnnsearch --data_dir=work_dirs/data/multi30k

Translates the `--split` of the data directory (raw text, `DataDir.text_file`) with every combination of
`--beam_sizes`, `--length_normalizations` (`gnmt:ALPHA` for the GNMT penalty with that exponent) and
`--maximum_length_as`, and prints one JSON object (also written to `--output`): the BLEU and seconds of each
setting, best first.
"""

import itertools
import time

import sacrebleu
from absl import app, flags

from bench.bench_flags import register_check
from bench.provenance import provenance, run_report
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.utils.text_files import read_lines

_MODEL_DIR = flags.DEFINE_string("model_dir", None, "Model directory (or an ensemble, a+b).", required=True)
_DATA_DIR = flags.DEFINE_string("data_dir", None, "Its built data directory.", required=True)
register_check(_DATA_DIR, lambda path: DataDir(path).read_metadata())
_SPLIT = flags.DEFINE_string("split", "dev", "Split whose raw text is translated.")
_CHECKPOINT = flags.DEFINE_string("checkpoint", "best", '"best", "latest", "averaged" or a path.')
_BEAM_SIZES = flags.DEFINE_list("beam_sizes", ["5"], "Beam sizes.")
_LENGTH_NORMALIZATIONS = flags.DEFINE_list(
    "length_normalizations", ["none", "length", "gnmt:0.6", "gnmt:1.0"], "none, length or gnmt:ALPHA."
)
_MAXIMUM_LENGTH_AS = flags.DEFINE_list("maximum_length_as", ["2.0", "1.5"], "Values of maximum_length_a.")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    data_dir = DataDir(_DATA_DIR.value)
    sources = read_lines(data_dir.text_file(_SPLIT.value, "source"))
    references = read_lines(data_dir.text_file(_SPLIT.value, "target"))
    results = []
    for beam, normalization, maximum_length_a in itertools.product(
        _BEAM_SIZES.value, _LENGTH_NORMALIZATIONS.value, _MAXIMUM_LENGTH_AS.value
    ):
        name, _, alpha = normalization.partition(":")
        options = dict(beam_size=int(beam), length_normalization=name, maximum_length_a=float(maximum_length_a))
        if alpha:
            options["length_penalty_alpha"] = float(alpha)
        translator = BatchTranslator.from_model_dir(_MODEL_DIR.value, _CHECKPOINT.value, 64, **options)
        started = time.perf_counter()
        hypotheses = [result["translation"] for result in translator.translate(sources)]
        seconds = time.perf_counter() - started
        bleu = sacrebleu.corpus_bleu(hypotheses, [references]).score
        results.append(dict(options, bleu=round(bleu, 2), seconds=round(seconds, 1)))
    results.sort(key=lambda result: -result["bleu"])
    return {"provenance": provenance(), "model_dir": _MODEL_DIR.value, "split": _SPLIT.value, "sentences": len(sources),
            "results": results}


if __name__ == "__main__":
    run_report(main)
