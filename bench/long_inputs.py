r"""Benchmarks long inputs: decoding speed per token and BLEU on test sentences joined k at a time; prints JSON.

    RNNSEARCH_DATA=/work/shared/data python -m bench.long_inputs --model_dir=MODEL_DIR --beam_size=5 \
        --output=bench/results/long_inputs.json

(Run it with -m from the repository root: as a script, this file would shadow the package.)

One process, one model. For each k of `--sizes`, the pairs of `--test_set` (`<data root>/<name>.{en,fr}.gz`)
are joined k at a time (`SentenceJoiner`: lines 1..k, k+1..2k, ...; k = 1 keeps them) and translated with
`BatchTranslator` (`--batch_size`, `--decode_workers` as in `rnnsearch translate`) after one untimed batch
that traces the graph:
- `whole`: each joined line as one input. Seconds, source and output tokens (EOS included) per line,
  milliseconds per output token and per source token, lines cut to `--maximum_source_length`, BLEU.
- `split` (k > 1): each line split into sentences (`ParagraphTranslator`, Moses' rules), all sentences
  translated as one batch, the translations joined; BLEU, and the sentences the splitter found.
- `single_joined` (k > 1): the k = 1 translations joined k at a time as the references are: the BLEU the
  split translation should reach (it does where the splitter finds every sentence).
BLEU is sacrebleu's corpus BLEU of the detokenized output against the joined raw references.
"""

import gzip
import json
import os
import sys
import time

import sacrebleu
from absl import app, flags

from bench.provenance import provenance, run_report
from data_pipeline import data_files
from data_pipeline.sentence_joiner import SentenceJoiner
from rnnsearch_tf.cli import search_flags
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.paragraph_translator import ParagraphTranslator

_MODEL_DIR = flags.DEFINE_string("model_dir", None, "Model directory written by training.", required=True)
_TEST_SET = flags.DEFINE_string("test_set", "multi30k/test_2016_flickr", "Files <data root>/<name>.{en,fr}.gz.")
_SIZES = flags.DEFINE_list("sizes", ["1", "2", "3", "4", "5", "7"], "Sentences joined per line.")


def _read(name, language):
    path = os.path.join(data_files.data_root_from_environment(), f"{name}.{language}.gz")
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        return [line.rstrip("\n") for line in stream]


def _bleu(hypotheses, references):
    return round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    workers = search_flags.decode_workers()
    config = search_flags.search_config()
    translator = BatchTranslator.from_model_dir(_MODEL_DIR.value, search_flags.CHECKPOINT.value,
                                                search_flags.BATCH_SIZE.value, workers=workers, search_config=config)
    paragraphs = ParagraphTranslator(translator)
    sources, targets = _read(_TEST_SET.value, "en"), _read(_TEST_SET.value, "fr")
    sizes = sorted(int(size) for size in _SIZES.value)
    report = dict(provenance=provenance(), model_dir=_MODEL_DIR.value, checkpoint=translator.loaded_from,
                  test_set=_TEST_SET.value, search=config.to_dict(), batch_size=translator.batch_size,
                  decode_workers=workers, sizes={})
    translator.translate(sources[: translator.batch_size])  # traces the graph
    single = None
    for size in sizes:
        joined = SentenceJoiner((size,)).join(sources, targets)
        lines, references = [pair.source for pair in joined], [pair.target for pair in joined]
        start = time.perf_counter()
        results = translator.translate(lines)
        seconds = time.perf_counter() - start
        output_tokens = sum(len(result["tokens"]) + 1 for result in results)
        source_tokens = sum(len(result["source_tokens"]) + 1 for result in results)
        hypotheses = [result["translation"] for result in results]
        entry = dict(
            lines=len(lines),
            whole=dict(
                seconds=round(seconds, 2),
                source_tokens_per_line=round(source_tokens / len(lines), 1),
                output_tokens_per_line=round(output_tokens / len(lines), 1),
                ms_per_output_token=round(1000 * seconds / output_tokens, 3),
                ms_per_source_token=round(1000 * seconds / source_tokens, 3),
                truncated_lines=sum(result["truncated"] for result in results),
                bleu=_bleu(hypotheses, references),
            ),
        )
        if size == 1:
            single = hypotheses
        else:
            split_lines = paragraphs.split(lines)
            split_results = paragraphs.translate(split_lines)
            entry["split"] = dict(
                bleu=_bleu([result["translation"] for result in split_results], references),
                sentences_found=sum(len(line) for line in split_lines),
                sentences_joined=size * len(lines),
            )
            if single is not None:
                entry["single_joined"] = dict(bleu=_bleu(
                    [" ".join(single[line - 1] for line in pair.lines) for pair in joined], references
                ))
        report["sizes"][str(size)] = entry
        print(json.dumps({str(size): entry}), file=sys.stderr, flush=True)  # progress; the report is stdout's
    return report


if __name__ == "__main__":
    run_report(main)
