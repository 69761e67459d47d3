"""Text in, text out: the translator (also the SavedModel), batching, `<unk>` replacement, output formats."""

from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.translator import Translator
from rnnsearch_tf.inference.unk_replacer import UnkReplacer

__all__ = ["BatchTranslator", "Translator", "UnkReplacer"]
