"""Raw parallel text -> tokens -> vocabulary -> TFRecords -> bucketed tf.data."""

from data_pipeline.moses_tokenizer import MosesTokenizer
