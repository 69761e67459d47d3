"""The figures of `python -m rnnsearch_tf.evaluate`: BLEU by sentence length (Figure 2), alignments
(Figure 3) and learning curves."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file-only backend)
from matplotlib import font_manager  # noqa: E402

# Fonts the labels fall back on, glyph by glyph (matplotlib 3.6+), for the scripts DejaVu Sans lacks: Chinese,
# Japanese and Korean tokens of an alignment. Those installed are used (scripts/install_browser.sh installs
# WenQuanYi Zen Hei with Chromium); without any, such a label shows empty boxes, as before.
CJK_FONTS = ("WenQuanYi Zen Hei", "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK KR", "Droid Sans Fallback")
_INSTALLED = {font.name for font in font_manager.fontManager.ttflist}
plt.rcParams["font.family"] = ["DejaVu Sans", *(name for name in CJK_FONTS if name in _INSTALLED)]


class _OneWeightFallback(logging.Filter):
    """Drops matplotlib's "findfont: Failed to find font weight normal for WenQuanYi Zen Hei, now using 500." that
    every figure logged on stderr: a fallback font of one weight (WenQuanYi Zen Hei's is 500) is used in it, as
    wanted; a command prints its progress and results only (docs/translating.md)."""

    def filter(self, record):
        message = record.getMessage()
        return not (message.startswith("findfont: Failed to find font weight")
                    and any(f" for {font}, " in message for font in CJK_FONTS))


logging.getLogger("matplotlib.font_manager").addFilter(_OneWeightFallback())


def plot_bleu_by_length(curves, path, unit="Moses tokens"):
    """Bahdanau et al. 2014, Figure 2: BLEU of the test sentences grouped by source length, one line per model.

    Args:
        curves: dict model name -> list of `{"bin": label, "bleu": float or None}` and, where known,
            `"sentences": count` (the `bleu_by_length` of `Evaluator.evaluate`), the same bins for every
            model; bins without sentences are skipped. The counts are printed under the bin labels, as a
            reader of a BLEU by length must know how many sentences a point stands on: every model's bins
            hold the same sentences (`Evaluator` counts the source alike for every codec), so one count each.
        path: PNG file to write.
        unit: what a source length counts (`Evaluator.evaluate`'s `source_length_unit`), in the axis label.
    """
    figure, axis = plt.subplots(figsize=(6, 4))
    for name, bins in curves.items():
        points = [(position, item["bleu"]) for position, item in enumerate(bins) if item["bleu"] is not None]
        axis.plot([x for x, _ in points], [y for _, y in points], marker="o", label=name)
    first_bins = next(iter(curves.values()))
    counted = "sentences" in first_bins[0]
    labels = [item["bin"] + (f"\n({item['sentences']})" if counted else "") for item in first_bins]
    axis.set_xticks(range(len(labels)), labels)
    axis.set_xlabel(f"Sentence length (source {unit})" + (", sentences per bin in parentheses" if counted else ""))
    axis.set_ylabel("BLEU score")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def plot_learning_curves(histories, path):
    """Dev BLEU against updates and against training hours, one line per model, side by side.

    Args:
        histories: dict model name -> the `history` list of its `training_state.json` (dicts with
            `step`, `hours` and `dev_bleu`); models without validations are skipped.
        path: PNG file to write.
    """
    figure, (by_updates, by_hours) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for name, history in histories.items():
        if not history:
            continue
        bleu = [entry["dev_bleu"] for entry in history]
        by_updates.plot([entry["step"] for entry in history], bleu, marker=".", label=name)
        by_hours.plot([entry["hours"] for entry in history], bleu, marker=".", label=name)
    if any(histories.values()):
        by_updates.legend()
    by_updates.set_xlabel("Updates")
    by_hours.set_xlabel("Training hours (wall clock, validation included)")
    by_updates.set_ylabel("Dev BLEU")
    for axis in (by_updates, by_hours):
        axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def plot_alignment(source_tokens, target_tokens, alignment, path, title=""):
    """Bahdanau et al. 2014, Figure 3: the weights α_ij in grayscale (0: black, 1: white).

    Args:
        source_tokens: list of str, the x-axis (top), `</s>` included when `alignment` has its column.
        target_tokens: list of str, the y-axis, `</s>` included when `alignment` has its row.
        alignment: float array `[len(target_tokens), len(source_tokens)]`.
        path: PNG file to write.
        title: optional title.
    """
    figure, axis = plt.subplots(figsize=(2 + 0.35 * len(source_tokens), 2 + 0.35 * len(target_tokens)))
    axis.imshow(alignment, cmap="gray", vmin=0.0, vmax=1.0, aspect="equal")
    axis.xaxis.tick_top()
    axis.set_xticks(range(len(source_tokens)), source_tokens, rotation=90)
    axis.set_yticks(range(len(target_tokens)), target_tokens)
    if title:
        axis.set_xlabel(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
