r"""Names and numbers kept verbatim by constraints (`translate --verbatim`): the rare-word probe of
`bench.subwords` and the test sets, each model with and without; prints JSON.

    RNNSEARCH_DATA=../shared/data .venv/bin/python -m bench.verbatim \
        --models=words=work_dirs/sw/models/m30k_word,bpe8k=work_dirs/sw/models/m30k_bpe8k \
        --checkpoint=best --beam_size=5 --output=bench/results/verbatim.json

Per model: the probe's share of names and of numbers found verbatim in the translation (word-level models
with `<unk>` replaced, as in `bench.subwords`), BLEU and chrF of each test split, and the seconds each
translation took, each without constraints and with `verbatim_terms_of` every line (judged by the model's
source codec, as `translate --verbatim --model_dir` does) as its constraints; the
share of the test lines that have any, and of their constraints met.
"""

import time

import sacrebleu
from absl import app

from bench.bench_flags import define_named_list
from bench.provenance import provenance, run_report
from bench.rare_words import found_verbatim, probe_sentences
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.unk_replacer import UnkReplacer
from rnnsearch_tf.inference.verbatim_terms import verbatim_terms_of
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import read_lines

_MODELS = define_named_list("models", None, "NAME=MODEL_DIR of each model.", value_name="MODEL_DIR", required=True)


def _translate(translator, sentences, verbatim):
    """(results, seconds) of `sentences`; with `verbatim` (the model's source codec, None: free) their
    `verbatim_terms_of` as constraints."""
    constraints = None if verbatim is None else verbatim_terms_of(sentences, verbatim)
    start = time.perf_counter()
    results = translator.translate(sentences, constraints=constraints)
    return results, round(time.perf_counter() - start, 2)


def _probe(translator, verbatim):
    probes = probe_sentences()
    results, seconds = _translate(translator, [sentence for sentence, _, _ in probes], verbatim)
    return {"names_unchanged": sum(found_verbatim(name, r["translation"]) for r, (_, name, _) in zip(results, probes))
            / len(probes),
            "numbers_unchanged": sum(found_verbatim(n, r["translation"]) for r, (_, _, n) in zip(results, probes))
            / len(probes),
            "seconds": seconds, "example": results[0]["translation"]}


def _test_split(translator, data_dir, split, verbatim):
    sources, references = (read_lines(data_dir.text_file(split, side)) for side in ("source", "target"))
    results, seconds = _translate(translator, sources, verbatim)
    translations = [result["translation"] for result in results]
    entry = {"bleu": round(sacrebleu.corpus_bleu(translations, [references]).score, 2),
             "chrf": round(sacrebleu.corpus_chrf(translations, [references]).score, 2), "seconds": seconds}
    if verbatim is not None:
        met = [m for r in results for m, s in zip(r["constraints_met"], r["constraints_skipped"]) if not s]
        entry.update(lines_with_terms=round(sum(bool(r["constraints_met"]) for r in results) / len(results), 3),
                     constraints=len(met), constraints_met=round(sum(met) / max(len(met), 1), 3))
    return entry


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    config = search_flags.search_config()
    report = {"provenance": provenance(), "checkpoint": search_flags.CHECKPOINT.value, "search": config.to_dict(),
              "models": {}}
    for name, path in _MODELS.value:
        translator = BatchTranslator.from_model_dir(path, search_flags.CHECKPOINT.value, search_flags.BATCH_SIZE.value,
                                                    UnkReplacer(), search_config=config)
        data_dir = DataDir(ModelDir(path).read_data_info()["data_dir"])
        splits = data_dir.test_splits()
        translator.translate([sentence for sentence, _, _ in probe_sentences()[:2]], constraints=[["x"], []])  # traces
        report["models"][name] = {
            "model_dir": path,
            **{mode: {"probe": _probe(translator, verbatim),
                      **{split: _test_split(translator, data_dir, split, verbatim) for split in splits}}
               for mode, verbatim in (("free", None), ("verbatim", ModelDir(path).codec("source")))},
        }
    return report


if __name__ == "__main__":
    run_report(main)
