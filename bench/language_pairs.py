r"""Models of several language pairs scored alike, and scored the way published anchors score; prints JSON.

    RNNSEARCH_DATA=../shared/data python -m bench.language_pairs \
        --models=deen_quickstart=work_dirs/pairs/deen_quickstart,zhen_quickstart=work_dirs/pairs/zhen_quickstart \
        --peers=deen_peer_3600=en:work_dirs/peer/deen_3600 --output=bench/results/language_pairs.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

Per model (named by `--models`): its languages and codec, its training (updates, hours, best dev BLEU), and on
every test split of its data directory, translated with beam 5 from its best checkpoint, sacreBLEU's BLEU with
the target language's tokenizer (`corpus_scores`: 13a, or zh / ja-mecab / ko-mecab) and its signature, and
chrF. Published Multi30k anchors score otherwise, so each model is scored their way too:
- `nmtpy` (lium-lst/wmt17-mmt, multi30k/dataset's `scripts/task1-tokenize.sh`): hypotheses and references
  lower-cased, punctuation normalised and Moses-tokenized (sacremoses' `MosesPunctNormalizer` and
  `MosesTokenizer` of the target language, as `lowercase.perl | normalize-punctuation.perl | tokenizer.perl`),
  then BLEU on those tokens (`tokenize="none"`, as multi-bleu.perl).
- `nmtpy_search`: nmtpy decodes with beam 12, each hypothesis's log-probability divided by its length
  (`nmt-translate`'s defaults): that search too, scored as above (its `nmtpy` field is the anchor's convention).
- `lowercased_greedy` (bentrevett/pytorch-seq2seq notebook 3 scores greedy output on lower-cased spaCy tokens):
  greedy search (beam 1), then BLEU on lower-cased Moses tokens; spaCy's models are not on PyPI, so Moses
  tokens stand in for spaCy's (the same splitting of punctuation for these captions, not byte-identical).
`--peers=NAME=TARGET_LANGUAGE:WORKDIR` adds OpenNMT-py runs of `../shared/peer/multi30k.sh WORKDIR STEPS ... SRC TGT`: its
detokenized test_2016 translations (`onmt/test.hyp`) scored by the same functions against the raw references.
"""

import json
import pathlib

from absl import app, flags

from bench.bench_flags import define_named_list
from bench.pair_scores import scores
from bench.provenance import provenance, run_report
from data_pipeline.data_dir import DataDir
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.search_config import SearchConfig
from rnnsearch_tf.models.model_dir import ModelDir
from rnnsearch_tf.utils.text_files import read_lines


def _peer_run(value):
    """A check of `--peers`' values: TARGET_LANGUAGE:WORKDIR."""
    language, colon, workdir = value.partition(":")
    if not (language and colon and workdir):
        raise ValueError(f"{value!r} is not TARGET_LANGUAGE:WORKDIR")


_MODELS = define_named_list("models", [], "NAME=MODEL_DIR entries.", value_name="MODEL_DIR")
_PEERS = define_named_list("peers", [], "NAME=TARGET_LANGUAGE:WORKDIR entries of the peer's multi30k.sh runs "
                           "(test_2016 only).", value_name="TARGET_LANGUAGE:WORKDIR", check=_peer_run)
_CHECKPOINT = flags.DEFINE_string("checkpoint", "best", "Checkpoint of every model.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences decoded together.")


def _training(model_dir):
    state = model_dir.read_training_state()
    last = state["history"][-1]
    return {"updates": last["step"], "epochs": round(last["epoch"], 2), "hours": round(last["hours"], 3),
            "best_step": state["best_step"], "best_dev_bleu": round(state["best_dev_bleu"], 2)}


def evaluate_model(path):
    """The report entry of one model directory: languages, training, and per test split its scores."""
    model_dir = ModelDir(path)
    data_dir = DataDir(model_dir.read_data_info()["data_dir"])
    codecs = model_dir.codec_descriptions()
    language, lowercase = codecs["target"]["language"], codecs["target"].get("lowercase", False)
    entry = {"model_dir": path, "source_language": codecs["source"]["language"], "target_language": language,
             "codec": codecs["target"]["kind"], "lowercase": lowercase, "training": _training(model_dir), "test": {}}
    searches = {"beam5": SearchConfig(beam_size=5), "greedy": SearchConfig(beam_size=1),
                "nmtpy_search": SearchConfig(beam_size=12, length_normalization="length")}
    translators = {name: BatchTranslator.from_model_dir(path, _CHECKPOINT.value, _BATCH_SIZE.value, search_config=config)
                   for name, config in searches.items()}
    entry["checkpoint"] = translators["beam5"].loaded_from
    for split in data_dir.test_splits():
        sources, references = (read_lines(data_dir.text_file(split, side)) for side in ("source", "target"))
        entry["test"][split] = {"sentences": len(sources)}
        for name, translator in translators.items():
            translations = [result["translation"] for result in translator.translate(sources)]
            entry["test"][split][name] = scores(translations, references, language, lowercase)
    return entry


def evaluate_peer(workdir, language):
    """The peer's detokenized test_2016 translations of `workdir` scored as ours; its bench JSON line."""
    import sacremoses

    workdir = pathlib.Path(workdir)
    detokenizer = sacremoses.MosesDetokenizer(lang=language)
    hypotheses = [detokenizer.detokenize(line.split()) for line in read_lines(workdir / "onmt" / "test.hyp")]
    references = read_lines(workdir / "raw" / f"test_2016_flickr.{language}")
    bench = json.loads(read_lines(workdir / "bench.out")[-1])
    test = {"sentences": len(references), "beam5": scores(hypotheses, references, language)}
    return {"workdir": str(workdir), "target_language": language, "updates": bench["config"]["steps"],
            "training_minutes": round(bench["train_wall_s"] / 60, 2), "bench": bench, "test": {"test": test}}


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    report = {"provenance": provenance(), "checkpoint": _CHECKPOINT.value, "models": {}, "peers": {}}
    for name, path in _MODELS.value:
        report["models"][name] = evaluate_model(path)
    for name, value in _PEERS.value:
        language, _, workdir = value.partition(":")
        report["peers"][name] = evaluate_peer(workdir, language)
    return report


if __name__ == "__main__":
    run_report(main)
