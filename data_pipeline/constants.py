"""Reserved vocabulary entries, shared by the data pipeline, the models, search and serving.

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
UNK_ID = 3  # every word outside the shortlist
