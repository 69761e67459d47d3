"""Reserved vocabulary entries, shared by the data pipeline, the models, search and serving, and the
names of the files every built data directory (and every model directory's copy) holds.

Every vocabulary file starts with these four tokens, in this order, so their ids are fixed.
"""

PAD_TOKEN = "<pad>"
BOS_TOKEN = "<s>"
EOS_TOKEN = "</s>"
UNK_TOKEN = "<unk>"
RESERVED_TOKENS = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)

PAD_ID = 0  # right padding of every batch; never a real token
BOS_ID = 1  # "no previous word": its embedding is the zero vector (Cho et al.: e(y_0) = 0)
EOS_ID = 2  # ends every source and target sequence
UNK_ID = 3  # every word outside the vocabulary

METADATA_FILE = "metadata.json"  # `DataDir`: what the build read, kept and wrote, with shard checksums
MODEL_DATA_FILE = "data.json"  # `ModelDir`: the languages, text codec and data directory a model was trained on
MODEL_FILE = "model.json"  # `ModelDir`: the model's class and `ModelConfig`
FLAGS_FILE = "flags.txt"  # `DataDir`, `ModelDir`: the resolved flags of the command that wrote the folder
SOURCE_VOCABULARY_FILE = "source_vocab.tsv"
TARGET_VOCABULARY_FILE = "target_vocab.tsv"
VOCABULARY_FILES = {"source": SOURCE_VOCABULARY_FILE, "target": TARGET_VOCABULARY_FILE}
JOINT_SUBWORD_MODEL_FILE = "spm.model"  # a SentencePiece model learned from both languages
SUBWORD_MODEL_FILES = {"source": "source_spm.model", "target": "target_spm.model"}  # one per language
