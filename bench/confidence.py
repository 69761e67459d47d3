r"""Benchmarks the word-level confidence: how well each output word's probability tells words of the reference
from the others; prints JSON.

    RNNSEARCH_DATA=/work/shared/data flock /tmp/cpu.lock .venv/bin/python -m bench.confidence \
        --model_dir=work_dirs/sw/models/m30k_word --beam_size=5 --output=bench/results/confidence.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Translates the test split of `--corpus` (multi30k_enfr: test_2016, through the corpus registry) with
`BatchTranslator` and the search flags of `rnnsearch translate`. Each output token (`</s>` excluded) is
labelled 1 where it is one of its reference's tokens (the model's target codec's tokenization of the raw
reference, a bag of words, case-sensitive), else 0. Reported: the AUC of the token probabilities against those
labels (the probability that a token of the reference has a higher probability than one outside it, ties
counting one half: the Mann-Whitney statistic), the count and mean probability of each group, and the AUC of
the sentences' `mean_log_prob` against their sentence BLEU above or below its median.
"""


import numpy as np
import sacrebleu
from absl import app, flags

from bench.bench_flags import register_check
from bench.confidence_measures import auc, labelled_tokens
from bench.provenance import provenance, run_report
from data_pipeline import corpus_registry, data_files, pair_reader
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.models.model_dir import ModelDir

_MODEL_DIR = flags.DEFINE_string("model_dir", None, "Model directory written by training.", required=True)
register_check(_MODEL_DIR, lambda path: ModelDir(path).read_data_info())
_CORPUS = flags.DEFINE_enum("corpus", "multi30k_enfr", sorted(corpus_registry.CORPORA),
                            "Registered corpus whose test split is translated.")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    config = search_flags.search_config()
    translator = BatchTranslator.from_model_dir(_MODEL_DIR.value, search_flags.CHECKPOINT.value,
                                                search_flags.BATCH_SIZE.value, workers=search_flags.decode_workers(),
                                                search_config=config)
    root = data_files.data_root_from_environment()
    pairs = [pair for part in corpus_registry.get_corpus(_CORPUS.value).splits["test"]
             for pair in pair_reader.PairReader.of_part(part, root, 2000)]
    sources, references = [source for source, _ in pairs], [target for _, target in pairs]
    results = translator.translate(sources)
    probabilities, labels = labelled_tokens(results, references, ModelDir(_MODEL_DIR.value).codec("target"))
    sentence_bleu = np.array([sacrebleu.sentence_bleu(result["translation"], [reference]).score
                              for result, reference in zip(results, references)])
    report = dict(
        provenance=provenance(), model_dir=_MODEL_DIR.value, checkpoint=translator.loaded_from,
        corpus=_CORPUS.value, split="test", sentences=len(sources), search=config.to_dict(),
        corpus_bleu=round(sacrebleu.corpus_bleu([result["translation"] for result in results], [references]).score, 2),
        tokens=dict(
            count=int(labels.size),
            auc=round(auc(probabilities, labels), 4),
            in_reference=dict(count=int(labels.sum()), mean_probability=round(float(probabilities[labels].mean()), 4)),
            not_in_reference=dict(count=int((~labels).sum()),
                                  mean_probability=round(float(probabilities[~labels].mean()), 4)),
        ),
        sentences_mean_log_prob_auc=round(auc([result["mean_log_prob"] for result in results],
                                              sentence_bleu > np.median(sentence_bleu)), 4),
    )
    return report


if __name__ == "__main__":
    run_report(main)
