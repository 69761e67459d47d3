"""Validation during training: dev NLL, dev BLEU, and attention/translation samples for TensorBoard."""

import io
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sacrebleu  # noqa: E402
import tensorflow as tf  # noqa: E402

from data_pipeline.evaluation_input import EvaluationInput  # noqa: E402
from data_pipeline.vocabulary import Vocabulary  # noqa: E402
from rnnsearch_tf.translator import Translator  # noqa: E402


def _read_lines(path, limit=None):
    with open(path, encoding="utf-8") as stream:
        lines = stream.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines[:limit] if limit else lines


class Validator:
    """Measures the current weights on a dev split of a built data directory.

    - dev NLL per sentence: -Σ log p(y | x) over the split's records / sentences (the paper's Table 2);
    - dev BLEU: the raw dev sources (`{split}.source.txt`) translated by `Translator` (the same
      tokenization, search and detokenization users get) and scored by sacrebleu against the raw
      references (`{split}.target.txt`);
    - for the first `attention_sentences` sentences, source / reference / translation and the attention
      matrix α (Bahdanau et al. 2014, Figure 3) as PNG bytes.

    Args:
        model: the `EncoderDecoderModel` being trained.
        data_dir: output of `data_pipeline.build`.
        split: the dev split's name.
        source_language, target_language: languages of the data.
        batch_size: sentences per NLL batch and per translation batch.
        beam_size, length_normalization: search settings for BLEU.
        bleu_sentences: first sentences of the split translated for BLEU (None: all).
        attention_sentences: sentences shown in TensorBoard.
    """

    def __init__(
        self,
        model,
        data_dir,
        split,
        source_language,
        target_language,
        batch_size=80,
        beam_size=12,
        length_normalization="none",
        bleu_sentences=None,
        attention_sentences=3,
    ):
        self.model = model
        self.batch_size = batch_size
        self.attention_sentences = attention_sentences
        self.nll_input = EvaluationInput(os.path.join(data_dir, f"{split}-*.tfrecord.gz"), batch_size)
        text_files = {side: os.path.join(data_dir, f"{split}.{side}.txt") for side in ("source", "target")}
        for path in text_files.values():
            if not os.path.exists(path):
                raise FileNotFoundError(
                    f"{path} is missing: rebuild {data_dir} with `python -m data_pipeline.build` "
                    "(it writes the raw text of dev and test splits)"
                )
        self.sources = _read_lines(text_files["source"], bleu_sentences)
        self.references = _read_lines(text_files["target"], bleu_sentences)
        self.translator = Translator(
            model,
            Vocabulary(os.path.join(data_dir, "source_vocab.tsv")),
            Vocabulary(os.path.join(data_dir, "target_vocab.tsv")),
            source_language,
            target_language,
            beam_size=beam_size,
            length_normalization=length_normalization,
            maximum_batch_size=max(batch_size, attention_sentences),
        )

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2)
        def negative_log_likelihood(source_ids, target_ids):
            return -tf.reduce_sum(model.token_log_probs(source_ids, target_ids))

        self._negative_log_likelihood = negative_log_likelihood

    def nll_per_sentence(self):
        total, sentences = 0.0, 0
        for batch in self.nll_input():
            total += float(self._negative_log_likelihood(batch["source_ids"], batch["target_ids"]))
            sentences += int(batch["source_ids"].shape[0])
        return total / max(sentences, 1)

    def translate(self, sentences):
        """Translations of raw sentences, in order; batches are formed by length for speed."""
        order = sorted(range(len(sentences)), key=lambda index: len(sentences[index].split()))
        translations = [None] * len(sentences)
        for start in range(0, len(order), self.batch_size):
            indices = order[start : start + self.batch_size]
            outputs = self.translator.translate(tf.constant([sentences[i] for i in indices]))
            for index, translation in zip(indices, outputs["translation"].numpy()):
                translations[index] = translation.decode("utf-8")
        return translations

    def __call__(self):
        """-> dict: nll_per_sentence, bleu, bleu_signature, samples [(source, reference, translation)],
        attention_images [PNG bytes]."""
        translations = self.translate(self.sources)
        bleu = sacrebleu.BLEU()
        score = bleu.corpus_score(translations, [self.references])
        samples, images = [], []
        if self.attention_sentences:
            shown = self.sources[: self.attention_sentences]
            outputs = self.translator.translate(tf.constant(shown))
            for index, source in enumerate(shown):
                translation = outputs["translation"][index].numpy().decode("utf-8")
                samples.append((source, self.references[index], translation))
                images.append(
                    attention_png(
                        [t.decode("utf-8") for t in outputs["source_tokens"][index].numpy() if t],
                        [t.decode("utf-8") for t in outputs["tokens"][index].numpy() if t],
                        outputs["alignment"][index].numpy(),
                    )
                )
        return {
            "nll_per_sentence": self.nll_per_sentence(),
            "bleu": score.score,
            "bleu_signature": str(bleu.get_signature()),
            "samples": samples,
            "attention_images": images,
        }


def attention_png(source_tokens, target_tokens, alignment):
    """A heatmap of α (rows: target tokens, columns: source tokens) as PNG bytes (Figure 3)."""
    alignment = np.asarray(alignment)[: len(target_tokens), : len(source_tokens)]  # [tgt_len, src_len]
    figure, axes = plt.subplots(figsize=(1 + 0.4 * len(source_tokens), 1 + 0.4 * len(target_tokens)))
    axes.imshow(alignment, cmap="gray", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(source_tokens)), source_tokens, rotation=90)
    axes.set_yticks(range(len(target_tokens)), target_tokens)
    axes.xaxis.tick_top()
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    plt.close(figure)
    return buffer.getvalue()
