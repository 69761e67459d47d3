"""Validation during training: dev NLL, dev BLEU, and attention/translation samples for TensorBoard."""

import io
import os

import tensorflow as tf

from data_pipeline.data_dir import DataDir
from data_pipeline.evaluation_input import EvaluationInput
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.output_formats import word_view
from data_pipeline.constants import EOS_TOKEN
from rnnsearch_tf.evaluation.corpus_scores import corpus_scores
from rnnsearch_tf.evaluation.plots import plot_alignment
from rnnsearch_tf.utils.text_files import read_lines
from rnnsearch_tf.inference.translator import Translator


class Validator:
    """Measures the current weights on a dev split of a built data directory.

    - dev NLL per sentence: -Σ log p(y | x) over the split's records / sentences (the paper's Table 2);
    - dev BLEU and chrF (`corpus_scores`): the raw dev sources (`{split}.source.txt`) translated by `Translator`
      with the data's text codecs (the same tokenization, search and detokenization users get) and scored by
      sacreBLEU against the raw references (`{split}.target.txt`), BLEU with the tokenizer sacreBLEU gives the
      target codec's language (`corpus_scores.bleu`);
    - for the first `attention_sentences` sentences, source / reference / translation and the attention
      matrix α (Bahdanau et al. 2014, Figure 3) as PNG bytes; none for a model without attention (RNNencdec).

    The split's shards are not checksummed here: the trainer checks every shard at start-up
    (`DataDir.check_shards`).

    Args:
        model: the `EncoderDecoderModel` being trained.
        data_dir: output of `rnnsearch build-data`.
        split: the dev split's name.
        batch_size: sentences per NLL batch and per translation batch.
        search_config: `SearchConfig` of the translations scored by BLEU.
        bleu_sentences: first sentences of the split translated for BLEU (None: all).
        attention_sentences: sentences shown in TensorBoard.
        should_stop: a callable asked between two batches (of translation or NLL): when it says yes the validation
            is abandoned, once the batches then running have ended, and returns None (the trainer's stop request:
            a signal's grace period, `docker stop`'s 10 s, is shorter than a validation).
    """

    def __init__(
        self,
        model,
        data_dir,
        split,
        batch_size=80,
        search_config=None,
        bleu_sentences=None,
        attention_sentences=3,
        should_stop=lambda: False,
    ):
        self.model = model
        self.should_stop = should_stop
        self.batch_size = batch_size
        self.attention_sentences = attention_sentences
        data_dir = DataDir(data_dir)
        self.nll_input = EvaluationInput(data_dir.shard_pattern(split), batch_size, verify_shards=False)
        text_files = {side: data_dir.text_file(split, side) for side in ("source", "target")}
        for path in text_files.values():
            if not os.path.exists(path):
                raise FileNotFoundError(
                    f"{path} is missing: rebuild {data_dir.path} with `rnnsearch build-data` "
                    "(it writes the raw text of dev and test splits)"
                )
        self.sources = read_lines(text_files["source"])[:bleu_sentences]
        self.references = read_lines(text_files["target"])[:bleu_sentences]
        translator = Translator(
            model, data_dir.codec("source"), data_dir.codec("target"), search_config, maximum_batch_size=batch_size
        )
        self.translator = BatchTranslator(translator, translator.settings(), batch_size, eager_sentences=0)
        self.target_language = translator.target_language  # the language dev BLEU is tokenized for
        self.lowercase = translator.target_codec.lowercase  # a lower-casing codec's dev BLEU is case-insensitive

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2, autograph=False)
        def negative_log_likelihood(source_ids, target_ids):
            return -tf.reduce_sum(model.token_log_probs(source_ids, target_ids))

        self._negative_log_likelihood = negative_log_likelihood

    def nll_per_sentence(self, between_batches=lambda: None):
        """-Σ log p(y | x) per dev sentence; `between_batches()` is called before each batch (it may raise)."""
        total, sentences = 0.0, 0
        for batch in self.nll_input():
            between_batches()
            total += float(self._negative_log_likelihood(batch["source_ids"], batch["target_ids"]))
            sentences += int(batch["source_ids"].shape[0])
        return total / max(sentences, 1)

    def __call__(self):
        """-> dict: nll_per_sentence, bleu, bleu_signature, chrf, samples [(source, reference, translation)],
        attention_images [PNG bytes], truncated_sentences (dev sentences longer than the search's
        `maximum_source_length`, translated from their first tokens: their BLEU counts them so); or None when
        `should_stop()` said yes between two batches."""

        def between_batches(done=None):
            if self.should_stop():
                raise _Abandoned

        try:
            results = self.translator.translate(self.sources, progress=between_batches)  # in order, by length
            nll_per_sentence = self.nll_per_sentence(between_batches)
        except _Abandoned:
            return None
        scores, signatures = corpus_scores([result["translation"] for result in results], self.references,
                                           ["bleu", "chrf"], target_language=self.target_language,
                                           lowercase=self.lowercase)
        samples, images = [], []
        for source, reference, result in list(zip(self.sources, self.references, results))[: self.attention_sentences]:
            samples.append((source, reference, result["translation"]))
            if not self.model.uses_attention:
                continue
            source_words, words, alignment = word_view(result)  # alignment [len(words) + 1, len(source_words) + 1]
            buffer = io.BytesIO()
            plot_alignment(
                source_words + [EOS_TOKEN],
                (words + [EOS_TOKEN])[: alignment.shape[0]],
                alignment,
                buffer,
            )
            images.append(buffer.getvalue())
        return {
            "nll_per_sentence": nll_per_sentence,
            "bleu": scores["bleu"],
            "bleu_signature": signatures["bleu"],
            "chrf": scores["chrf"],
            "samples": samples,
            "attention_images": images,
            "truncated_sentences": sum(result["truncated"] for result in results),
        }


class _Abandoned(Exception):
    """Ends a validation between two batches (`Validator.__call__`)."""
