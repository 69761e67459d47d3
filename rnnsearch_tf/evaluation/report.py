"""`report.md` of `python -m rnnsearch_tf.evaluate`: the metrics of several models as the paper's tables."""

import os

from rnnsearch_tf.models.model_dir import ModelDir

# The metrics whose sacreBLEU signatures the report lists, in its order, each with how it is named there.
SIGNATURE_LABELS = (
    ("bleu", "BLEU of the detokenized translations"),
    ("chrf", "chrF"),
    ("chrf_plus_plus", "chrF++"),
    ("ter", "TER"),
)

TRAINING_COLUMNS = (
    ("Updates", "step"),
    ("Epochs", "epoch"),
    ("Hours", "hours"),
    ("Train NLL / sentence", "train_nll_per_sentence"),
    ("Dev NLL / sentence", "dev_nll_per_sentence"),
    ("Dev BLEU", "dev_bleu"),
    ("Best step", "best_step"),
    ("Best dev BLEU", "best_dev_bleu"),
)


def _number(value, digits=2):
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def write_report(path, metrics_by_model, source, reference, bleu_by_length_figure, learning_curves_figure):
    """Writes the Markdown report.

    Args:
        path: the `report.md` to write; figures are linked relative to its folder.
        metrics_by_model: dict model name -> `Evaluator.evaluate` metrics; each model's files lie in the
            subfolder of that name.
        source, reference: the test files, named in the heading.
        bleu_by_length_figure: file name of the Figure 2 plot, beside `path`.
        learning_curves_figure: file name of the learning-curve plot, beside `path`.
    """
    lines = ["# Evaluation", "", f"Source `{source}`, reference `{reference}`.", ""]
    lines += _bleu_table(metrics_by_model)
    lines += _search_table(metrics_by_model)
    lines += _length_table(metrics_by_model, bleu_by_length_figure)
    lines += ["## Alignments (Figure 3)", ""]
    for name, metrics in metrics_by_model.items():
        for heatmap in metrics["heatmaps"]:
            lines.append(f"![{name} {heatmap}]({os.path.join(name, heatmap)})")
        if metrics.get("uses_attention") is False:
            lines.append(f"{name}: none, the model has no attention (RNNencdec: one fixed-length context vector, "
                         "no alignment).")
    lines += _longest_sentences(metrics_by_model)
    lines += _training_table(metrics_by_model)
    lines += [
        "",
        "## Learning curves",
        "",
        "Dev BLEU at every validation (`history` of `training_state.json`), against updates and hours.",
        "",
        f"![Learning curves]({learning_curves_figure})",
    ]
    with open(path, "w", encoding="utf-8") as stream:
        stream.write("\n".join(lines) + "\n")


def _bleu_table(metrics_by_model):
    lines = [
        "## BLEU (Bahdanau et al. 2014, Table 1)",
        "",
        "\"All\": every test sentence, `<unk>` allowed. \"No UNK\": the sentences without a word outside the "
        "vocabularies in source and reference, decoded with `<unk>` forbidden. \"UNK replaced\": \"All\" after "
        "replacing each `<unk>` with its most-attended source word (or dictionary entry); none (–) for a model "
        "without attention, which aligns nothing. chrF, chrF++ and TER "
        "(an edit rate: lower is better) of the \"All\" translations. Shortlist: the target words searched, the "
        "model directory's vocabulary shortlist (K per source word, N frequent) or the full vocabulary.",
        "",
        "| Model | All | chrF | chrF++ | TER | No UNK | No UNK sentences | UNK replaced | Sentences | Truncated sources "
        "| Checkpoint | Shortlist |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, metrics in metrics_by_model.items():
        lines.append(
            f"| {name} | {_number(metrics['bleu'])} | {_number(metrics.get('chrf'))} | "
            f"{_number(metrics.get('chrf_plus_plus'))} | {_number(metrics.get('ter'))} | "
            f"{_number(metrics['bleu_no_unk'])} | {_number(metrics['no_unk_sentences'])} | "
            f"{_number(metrics['bleu_unk_replaced'])} | {metrics['sentences']} | {metrics['truncated_sentences']} | "
            f"`{metrics['checkpoint']}` | {_number(metrics.get('shortlist'))} |"
        )
    return lines + ["", "sacreBLEU signatures: " + _signatures(metrics_by_model), ""]


def _signatures(metrics_by_model):
    """Each metric's sacreBLEU signatures (several where the models' differ, e.g. a lower-casing model's BLEU),
    labelled, BLEU first ("BLEU of the detokenized translations `nrefs:1|...`; chrF `...`; ..."); a metrics.json
    written before `signatures` has its BLEU `signature` only."""
    parts = []
    for metric, label in SIGNATURE_LABELS:
        found = dict.fromkeys(metrics.get("signatures", {"bleu": metrics["signature"]}).get(metric)
                              for metrics in metrics_by_model.values())
        found.pop(None, None)
        if found:
            parts.append(f"{label} " + ", ".join(f"`{signature}`" for signature in found))
    return "; ".join(parts)


def _search_table(metrics_by_model):
    """How each model's translations were made (`search`, `precision`, `quantize` of its metrics; a metrics.json
    written before they were recorded has none, and no row)."""
    recorded = {name: metrics for name, metrics in metrics_by_model.items() if "search" in metrics}
    if not recorded:
        return []
    lines = [
        "How the \"All\" translations were searched (\"No UNK\": the same search, `<unk>` forbidden) and the form of "
        "the weights decoding (precision; int8: matrices held in int8).",
        "",
        "| Model | Search | Length normalisation | Target length bound | Source tokens kept | Precision | Weights |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, metrics in recorded.items():
        search = metrics["search"]
        if search["sampling"]:
            strategy = (f"sampling: {search['num_samples']} per sentence, temperature "
                        f"{search['sampling_temperature']}, seed {search['sampling_seed']}")
        else:
            strategy = f"beam {search['beam_size']}" + (", early stopping" if search["early_stopping"] else "")
        if search["forbid_unk"]:
            strategy += ", `<unk>` forbidden"
        normalization = search["length_normalization"]
        if normalization == "gnmt":
            normalization += f" (α {search['length_penalty_alpha']})"
        lines.append(f"| {name} | {strategy} | {normalization} | "
                     f"{search['maximum_length_a']:g} × source + {search['maximum_length_b']} | "
                     f"{search['maximum_source_length']} | {metrics['precision']} | {metrics['quantize']} |")
    return lines + [""]


def _length_table(metrics_by_model, bleu_by_length_figure):
    first_bins = next(iter(metrics_by_model.values()))["bleu_by_length"]
    lines = [
        "## BLEU by source sentence length (Figure 2)",
        "",
        f"![BLEU by sentence length]({bleu_by_length_figure})",
        "",
        "| Model | " + " | ".join(item["bin"] for item in first_bins) + " |",
        "|---|" + "---|" * len(first_bins),
    ]
    for name, metrics in metrics_by_model.items():
        cells = [f"{_number(item['bleu'])} ({item['sentences']})" for item in metrics["bleu_by_length"]]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    unit = _length_unit(metrics_by_model)
    return lines + ["", f"BLEU (sentences) per bin of source length in {unit}, counted alike for every model (Moses "
                    "tokens, or characters for a source written without spaces, whatever the model's vocabulary); "
                    "a bin `a-b` holds lengths a to b - 1.", ""]


def _length_unit(metrics_by_model):
    """What the source lengths count (`source_length_unit`; one source language); "tokens" for a metrics.json
    written before it was recorded."""
    return next(iter(metrics_by_model.values())).get("source_length_unit", "tokens")


def _longest_sentences(metrics_by_model):
    """Appendix C / Table 3 of Bahdanau et al.: the longest test sentences and every model's translation."""
    first = next(iter(metrics_by_model.values())).get("longest_sentences")
    if not first:
        return []
    lines = [
        "",
        "## Long sentences (Appendix C, Table 3)",
        "",
        f"The {len(first)} test sentences of greatest source length, each model's translation (\"All\": `<unk>` kept) "
        "and its sentence BLEU (sacreBLEU's `sentence_bleu`, tokenized as the corpus BLEU for the target "
        "language).",
    ]
    translations = {
        name: {sentence["line"]: sentence for sentence in metrics.get("longest_sentences", [])}
        for name, metrics in metrics_by_model.items()
    }
    for sentence in first:
        lines += [
            "",
            f"### Line {sentence['line']} ({sentence['source_length']} source {_length_unit(metrics_by_model)})",
            "",
            "| | Text | Sentence BLEU |",
            "|---|---|---|",
            f"| Source | {_cell(sentence['source'])} | |",
            f"| Reference | {_cell(sentence['reference'])} | |",
        ]
        for name in metrics_by_model:
            translated = translations[name].get(sentence["line"])
            if translated is not None:
                bleu = _number(translated["sentence_bleu"])
                lines.append(f"| {name} | {_cell(translated['translation'])} | {bleu} |")
    return lines


def _cell(text):
    """Text as one Markdown table cell: `|` escaped."""
    return text.replace("|", "\\|")


def _training_table(metrics_by_model):
    """Table 2: a row per single model; an ensemble (its `model_dir` joins several with "+") was trained as its
    members, which have no row here, and is named below the table."""
    lines = ["", "## Training (Table 2)", ""]
    ensembles = [name for name, metrics in metrics_by_model.items()
                 if len(ModelDir.split(metrics.get("model_dir") or name)) > 1]
    singles = [name for name in metrics_by_model if name not in ensembles]
    if singles:
        lines.append("| Model | " + " | ".join(title for title, _ in TRAINING_COLUMNS) + " |")
        lines.append("|---|" + "---|" * len(TRAINING_COLUMNS))
    missing = []
    for name in singles:
        state = metrics_by_model[name]["training"]
        if state is None:
            missing.append(name)
            state = {}
        lines.append(f"| {name} | " + " | ".join(_number(state.get(key)) for _, key in TRAINING_COLUMNS) + " |")
    if missing:
        lines += [
            "",
            f"No `training_state.json` in the model directory of {', '.join(missing)}: it is written after every "
            "validation of `rnnsearch_tf.train`, so the model was trained elsewhere or not yet validated.",
        ]
    if ensembles:
        lines += [
            "",
            f"{', '.join(ensembles)}: {'an ensemble' if len(ensembles) == 1 else 'ensembles'} of models trained apart, "
            "with no row here: each member's training is its own model directory's `training_state.json`.",
        ]
    return lines
