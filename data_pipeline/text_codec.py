"""How one language's text becomes the model's ids and back: the one place that tokenizes and detokenizes."""

import functools
import os
import re

import tensorflow as tf

from data_pipeline import constants, languages
from data_pipeline.moses_tokenizer import MosesTokenizer
from data_pipeline.vocabulary import Vocabulary

MOSES = "moses"
SENTENCEPIECE = "sentencepiece"
KINDS = (MOSES, SENTENCEPIECE)
SUBWORD_MODELS = ("bpe", "unigram")
WORD_START = "\u2581"  # "▁": SentencePiece's mark of a piece that starts a word (a space in the text)
# SentencePiece's default: the rarest 0.05% of the characters get no piece of their own (byte fallback
# spells them), so a character seen once or twice does not take a piece whose embedding is barely trained.
CHARACTER_COVERAGE = 0.9995
# The 4 reserved tokens, the 256 bytes of byte fallback and a few pieces more: the fewest pieces of any model.
# A text of more characters needs more (each character of `CHARACTER_COVERAGE` is a piece), which
# `learn_sentencepiece` reports with the size that text needs.
MIN_SUBWORD_VOCABULARY = 300
INPUT_SENTENCES = 2_000_000  # sentences a SentencePiece model is learned from, sampled (memory stays bounded)
# How every SentencePiece model is learned besides its type and size (`learn_sentencepiece`; recorded in a
# data folder's metadata.json): byte fallback spells what no piece holds, so no text is `<unk>`; the ten
# digits are pieces of their own however rare in the text, so numbers are copied digit by digit; the text is
# not normalised ("identity", not SentencePiece's default NFKC), so that every script reads back exactly as
# written: NFKC turns Chinese full-width "？" and "，" into "?" and ",", which a reference does not hold.
SENTENCEPIECE_OPTIONS = dict(byte_fallback=True, split_digits=True, user_defined_symbols=list("0123456789"),
                             character_coverage=CHARACTER_COVERAGE, normalization_rule_name="identity")
# A piece that starts with a letter or digit of a script written with spaces (one that goes on such a word).
_SPACED_SCRIPT_START = r"[\p{Latin}\p{Greek}\p{Cyrillic}\p{Armenian}\p{Georgian}\pN].*"
# Stands for the text `<unk>` of a word-level prefix while it is tokenized: a private-use character, a token.
_UNK_PLACEHOLDER = "\ue000"
# The whitespace SentencePiece keeps as text (it marks the space U+0020 alone as "▁"): tabs, line and page breaks,
# and Unicode's next-line, line and paragraph separators. A piece holding one could not be written in a
# `token<TAB>count` vocabulary or a `source<TAB>target` pair file (`token_pair_file`), so a SentencePiece codec's
# text has them as spaces (`normalized`); the spaces of other scripts (U+00A0, U+3000, ...) are characters a
# piece may hold, and read back as written. Moses splits words at all of them anyway.
_SEPARATING_WHITESPACE = r"[\t\n\x0b\x0c\r\x{85}\x{2028}\x{2029}]"
# SentencePiece's error for a vocabulary smaller than the text's characters and the fixed pieces: "... 300 vs 326".
_TOO_FEW_PIECES = re.compile(r"Vocabulary size is smaller than required_chars\. \d+ vs (\d+)")


class TextCodec(tf.Module):
    """One language's text <-> ids: normalisation and tokenization, the vocabulary, detokenization, words.

    Two kinds, described by `description()` in a data folder's metadata.json and a model folder's
    data.json (`from_description` reads it back), so that every command turns text into ids the way the
    model was trained:
    - "moses" (the paper's, Bahdanau et al. 2014 Section 4.1): Moses tokenization (`MosesTokenizer`),
      a vocabulary of the most frequent whole words (`Vocabulary`, every other word is `<unk>`), Moses detokenization. A
      token is a word.
    - "sentencepiece": a SentencePiece model (`sentencepiece` package, Kudo & Richardson 2018) applied to
      raw text in-graph by tensorflow-text's `SentencepieceTokenizer`; its pieces are the vocabulary, in
      the model's id order, with the reserved tokens at ids 0-3. Pieces that start a word carry "▁";
      with byte fallback no text is unknown. Detokenization is SentencePiece's exact inverse.

    Everything is TensorFlow ops, so the same object tokenizes a corpus at build time and raw requests
    inside an exported SavedModel (TF Serving links SentencePiece's ops:
    `data_pipeline.export_dir.MODEL_SERVER_TF_TEXT_OPS`).

    Args:
        language: the language code (`languages.check`); a "moses" codec takes its rules from sacremoses
            (`MosesRules`) and refuses a language written without spaces, a "sentencepiece" codec takes any.
        vocabulary_file: the `Vocabulary` file (ids); None for a codec that only tokenizes.
        kind: one of `KINDS`.
        model_file: the SentencePiece model ("sentencepiece" only).
        lowercase: lower-case the text before tokenizing (`lowercase`), as nmtpy and most Multi30k systems
            train: fewer distinct words and pieces, translations come out lower-cased, and scores compare
            lower-cased text (`corpus_scores`, sacreBLEU's `case:lc`). Recorded in `description()`.
        name: module name.

    Example:
    >>> codec = TextCodec("fr", vocabulary_file)
    >>> codec.detokenize(codec.tokenize(tf.constant(["L'homme a 3,5 kg."])))
    <tf.Tensor: shape=(1,), dtype=string, numpy=array([b"L'homme a 3,5 kg."], dtype=object)>
    """

    def __init__(self, language, vocabulary_file=None, kind=MOSES, model_file=None, lowercase=False, name=None):
        super().__init__(name=name)
        if kind not in KINDS:
            raise ValueError(f"codec kind must be one of {KINDS}, got {kind!r}")
        if (kind == SENTENCEPIECE) != (model_file is not None):
            raise ValueError(f"a {kind} codec takes {'a' if kind == SENTENCEPIECE else 'no'} model_file")
        self.language = languages.check(language)
        self.kind = kind
        self.model_file = None if model_file is None else os.fspath(model_file)
        self.lowercase = bool(lowercase)
        self.vocabulary = None if vocabulary_file is None else Vocabulary(vocabulary_file)
        # Both have tokenize (`[batch]` text -> ragged tokens) and detokenize (ragged tokens -> text).
        if kind == SENTENCEPIECE:
            self._tokenizer = _load_sentencepiece(self.model_file, self.vocabulary)
        else:
            self._tokenizer = MosesTokenizer(language)

    @classmethod
    def from_description(cls, description, folder):
        """The codec `description()` describes, its files in `folder` (a data or model directory)."""
        model = description.get("model")
        return cls(
            description["language"],
            os.path.join(folder, description["vocabulary"]),
            description.get("kind", MOSES),
            os.path.join(folder, model) if model else None,
            description.get("lowercase", False),
        )

    @staticmethod
    def moses_description(language, vocabulary_file_name):
        """The description of a word-level codec (what a data folder without one has)."""
        return {"kind": MOSES, "language": language, "vocabulary": vocabulary_file_name}

    def description(self):
        """`{"kind", "language", "vocabulary"[, "model"][, "lowercase"]}`: file names relative to the folder
        holding them; "lowercase" only where true, so a cased codec's description is as before the option."""
        description = self.moses_description(self.language, os.path.basename(self.vocabulary.vocabulary_file))
        description["kind"] = self.kind
        if self.model_file:
            description["model"] = os.path.basename(self.model_file)
        if self.lowercase:
            description["lowercase"] = True
        return description

    @property
    def files(self):
        """The files this codec reads (copied with it into a model directory)."""
        return [self.vocabulary.vocabulary_file] + ([self.model_file] if self.model_file else [])

    @property
    def is_subword(self):
        """Whether a token may be part of a word (tokens and words differ)."""
        return self.kind != MOSES

    @property
    def has_unknown(self):
        """Whether text can become `<unk>` (a word outside the vocabulary); SentencePiece's byte fallback
        spells every character."""
        return self.kind == MOSES

    def tokenize(self, text):
        """tf.string `[batch]` raw sentences -> tf.RaggedTensor of tf.string `[batch, None]` tokens.

        The text is `normalized` first: valid UTF-8, lower-cased by a lower-casing codec, and for SentencePiece
        its tabs and line breaks made spaces, as the model was learned.
        """
        return self._tokenizer.tokenize(normalized(text, self.kind, self.lowercase))

    def tokenize_prefix(self, text):
        """`tokenize` for the start of a translation typed by a person: the text `<unk>` in a word-level
        prefix stays the one token `<unk>` (which the Moses rules would split at its brackets), so that a
        translation's tokens can be sent back as a prefix."""
        if self.is_subword:
            return self.tokenize(text)
        text = tf.strings.regex_replace(valid_utf8(text), constants.UNK_TOKEN, f" {_UNK_PLACEHOLDER} ")
        tokens = self.tokenize(text)  # [batch, None]
        return tf.ragged.map_flat_values(
            lambda flat: tf.where(tf.equal(flat, _UNK_PLACEHOLDER), constants.UNK_TOKEN, flat), tokens
        )

    def lookup(self, tokens):
        """Tokens (any shape, dense or ragged) -> int32 ids; outside the vocabulary -> `UNK_ID`."""
        return self.vocabulary.lookup(tokens)

    def encode(self, text):
        """tf.string `[batch]` raw sentences -> int32 tf.RaggedTensor `[batch, None]` ids (no `</s>`)."""
        return self.lookup(self.tokenize(text))

    def tokens(self, ids):
        """Ids (any shape) -> tokens; outside the vocabulary -> `<unk>`."""
        return self.vocabulary.tokens(ids)

    def detokenize(self, tokens):
        """tf.RaggedTensor of tf.string `[batch, None]` tokens -> tf.string `[batch]` text."""
        return self._tokenizer.detokenize(tokens)

    def segmentation_sampler(self, alpha):
        """SentencePiece's subword regularisation (Kudo 2018), for training: a function from the int32 ids
        `[length]` of one sentence (no `</s>`) to the ids of the same text cut into pieces sampled anew at each
        call. A unigram model samples a segmentation from all of them, their probabilities raised to the
        power `alpha` (the smoothing: small is closer to uniform); a BPE model drops each merge with
        probability `alpha` (BPE-dropout, Provilkov et al. 2020), which SentencePiece does for a BPE model
        given the same arguments. The random numbers are SentencePiece's own, not seeded by TensorFlow.

        Args:
            alpha: > 0 (0 would be the fixed segmentation the shards hold).
        """
        import tensorflow_text

        if self.kind != SENTENCEPIECE:
            raise ValueError(f"subword sampling needs a SentencePiece codec; the {self.language} codec is {self.kind}")
        if not alpha > 0:
            raise ValueError(f"subword sampling takes alpha > 0, got {alpha}")
        with open(self.model_file, "rb") as stream:
            sampler = tensorflow_text.SentencepieceTokenizer(model=stream.read(), out_type=tf.int32, nbest_size=-1,
                                                             alpha=alpha)
        return lambda ids: sampler.tokenize(self._tokenizer.detokenize(ids))  # ids [length] -> text [] -> ids

    def starts_word(self, tokens):
        """tf.string tokens (any shape) -> bool: whether each token starts a word a person sees (a Moses
        token always; a piece with "▁", or a reserved token). In a language written without spaces
        (`languages.writes_words_apart`) a sentence has one "▁", so each piece is a word of its own there, but
        for a piece that goes on a word of a script written with spaces ("thon" of "Python")."""
        if not self.is_subword:
            return tf.ones_like(tokens, tf.bool)
        starts = tf.logical_or(tf.strings.regex_full_match(tokens, WORD_START + ".*"), _is_reserved(tokens))
        if languages.writes_words_apart(self.language):
            return starts
        return tf.logical_or(starts, tf.logical_not(tf.strings.regex_full_match(tokens, _SPACED_SCRIPT_START)))

    def continues_word(self, tokens):
        """tf.string tokens (any shape) -> bool: whether each token glues itself to the word before it, so that a
        word (a glossary term, a constraint) cannot end before it: a piece that does not start a word and starts
        with a letter or digit ("s" after "▁dog"; not "," or "'"); never a Moses token. The one rule of where a
        subword word goes on: the glossary's matches and the constrained search's phrases both ask it."""
        if not self.is_subword:
            return tf.zeros_like(tokens, tf.bool)
        return tf.logical_not(self.starts_word(tokens)) & tf.strings.regex_full_match(tokens, r"[\pL\pN].*")

    def token_text(self, tokens):
        """tf.string tokens (any shape) -> the text each adds to a text before it: a Moses token itself
        (words are joined with spaces), a piece with its "▁" written as a space."""
        if not self.is_subword:
            return tokens
        return tf.strings.regex_replace(tokens, WORD_START, " ")

    def words(self, tokens):
        """Groups padded tokens into the words a person sees.

        Args:
            tokens: tf.string `[batch, length]`, each row's tokens then "" padding.

        Returns:
            (words tf.string `[batch, max_words]`, each row's words then "", word index int32
            `[batch, length]` of each token, -1 for padding). A word's text is its tokens detokenized; a
            reserved token (`</s>`) is a word of its own, as written.
        """
        present = tf.not_equal(tokens, "")  # [batch, length]
        starts = tf.logical_and(self.starts_word(tokens), present)
        starts = tf.logical_or(starts, tf.logical_and(present, tf.range(tf.shape(tokens)[1]) == 0))
        word_index = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1  # [batch, length]
        word_index = tf.where(present, word_index, -1)
        max_words = tf.reduce_max(tf.concat([word_index + 1, tf.zeros([tf.shape(tokens)[0], 1], tf.int32)], 1))
        rows = tf.cast(tf.range(tf.shape(tokens)[0])[:, None] * max_words + word_index, tf.int64)  # [batch, length]
        pieces = tf.RaggedTensor.from_value_rowids(
            tf.boolean_mask(tokens, present), tf.boolean_mask(rows, present),
            nrows=tf.cast(tf.shape(tokens)[0] * max_words, tf.int64),
        )  # [batch * max_words, None]
        values = tf.concat([pieces.values, [""]], axis=0)  # a row's start is in range for an empty last row
        first = tf.where(pieces.row_lengths() > 0, tf.gather(values, pieces.row_starts()), "")  # [batch * max_words]
        text = tf.where(_is_reserved(first), first, self.detokenize(pieces))  # [batch * max_words]
        return tf.reshape(text, [tf.shape(tokens)[0], max_words]), word_index


def _is_reserved(tokens):
    """tf.string tokens (any shape) -> bool: whether each is one of `constants.RESERVED_TOKENS`."""
    return tf.reduce_any(tf.stack([tf.equal(tokens, token) for token in constants.RESERVED_TOKENS]), axis=0)


def codec_descriptions(data_info):
    """`{"source": description, "target": description}` of a data folder's metadata.json or a model folder's
    data.json (`data_info`); a folder written before text codecs were described is word-level (Moses)."""
    if "codec" in data_info:
        return data_info["codec"]
    return {side: TextCodec.moses_description(data_info.get(f"{side}_language"), constants.VOCABULARY_FILES[side])
            for side in ("source", "target")}


def counting_tokens(text, language):
    """The units text of `language` is counted and modelled in outside a model (length bins, data selection's
    language models): tf.string `[batch]` -> tf.RaggedTensor `[batch, None]` of Moses words, or for a language
    written without spaces (`languages.writes_words_apart`) its characters other than spaces."""
    if languages.writes_words_apart(language):
        return word_codec(language).tokenize(text)
    characters = tf.strings.unicode_split(valid_utf8(text), "UTF-8")  # [batch, None]
    return tf.ragged.boolean_mask(characters, tf.logical_not(tf.strings.regex_full_match(characters, r"\s")))


@functools.lru_cache(maxsize=None)
def word_codec(language):
    """The word-level (Moses) codec of `language` without a vocabulary, made once per language: what
    `counting_tokens` cuts text with and `phrase_table.moses_text` joins tokens with (callers loop over batches)."""
    return TextCodec(language)


def normalized(text, kind, lowercased=False):
    """tf.string `[batch]` raw text -> the text a codec of `kind` cuts into tokens: invalid UTF-8 bytes made U+FFFD
    (`valid_utf8`), lower-cased with `lowercased` (`lowercase`), and for SentencePiece the `_SEPARATING_WHITESPACE`
    made spaces. The one normalisation of a codec's text, at build time (SentencePiece learns from this text)
    and in every command and export, so that they cut text alike."""
    text = valid_utf8(text)
    if lowercased:
        text = lowercase(text)
    if kind == SENTENCEPIECE:
        text = tf.strings.regex_replace(text, _SEPARATING_WHITESPACE, " ")
    return text


def lowercase(text):
    """tf.string `[batch]` -> the same text lower-cased in every script (Unicode's lower-case mapping, as
    Python's `str.lower`: "Über" -> "über", "ΣΟΦΟΣ" -> "σοφος"); the one lower-casing of a `TextCodec`'s text, at
    build time (SentencePiece learns from it) and in every command and export."""
    return tf.strings.lower(text, encoding="utf-8")


def valid_utf8(text):
    """Replaces every invalid UTF-8 byte sequence with U+FFFD."""
    return tf.strings.unicode_transcode(
        text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD, replace_control_characters=False
    )


def _load_sentencepiece(model_file, vocabulary):
    """tensorflow-text's tokenizer of `model_file`, checked against the vocabulary: one line naming the
    file when it is missing, not a SentencePiece model, or numbers its pieces otherwise."""
    import sentencepiece
    import tensorflow_text

    try:
        with open(model_file, "rb") as stream:
            model = stream.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{model_file} is missing: the SentencePiece model of this data; rebuild the data "
                                "with `rnnsearch build-data`, or copy the file back") from None
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(model)
    except (RuntimeError, OSError) as error:
        raise ValueError(f"{model_file} is not a SentencePiece model ({error}): rebuild the data with "
                         "`rnnsearch build-data`") from None
    if vocabulary is not None:
        pieces = [token for token, _ in Vocabulary.read_entries(vocabulary.vocabulary_file)]
        if pieces != _pieces(processor):
            raise ValueError(f"{vocabulary.vocabulary_file} does not list the pieces of {model_file} in its order: "
                             "both must come from the same `rnnsearch build-data`")
    return tensorflow_text.SentencepieceTokenizer(model=model, out_type=tf.string)


def learn_sentencepiece(text_files, model_file, model_type, vocabulary_size, seed):
    """Trains a SentencePiece model on raw text (one sentence per line) with the `sentencepiece` package.

    The pieces' ids are the model's: the reserved tokens first (`<pad>` 0, `<s>` 1, `</s>` 2, `<unk>` 3,
    as in every vocabulary file); `SENTENCEPIECE_OPTIONS` (byte fallback, digits). At most
    `INPUT_SENTENCES` sentences are read, sampled with `seed`, so memory stays bounded on any corpus.

    Args:
        text_files: files of raw sentences (a joint model: both languages' training sides).
        model_file: the `.model` file to write.
        model_type: "bpe" or "unigram".
        vocabulary_size: pieces, reserved ones and the 256 bytes included; fewer when the text has fewer.
        seed: seed of SentencePiece's sampling.

    Raises:
        ValueError: `vocabulary_size` is smaller than the text's characters and the fixed pieces need; the
            message names --subword_vocabulary_size and the size this text needs.
    """
    import io

    import sentencepiece

    sentencepiece.set_random_generator_seed(seed)
    model = io.BytesIO()
    try:
        sentencepiece.SentencePieceTrainer.train(
            input=[os.fspath(path) for path in text_files], model_writer=model, model_type=model_type,
            vocab_size=vocabulary_size, hard_vocab_limit=False, **SENTENCEPIECE_OPTIONS,
            input_sentence_size=INPUT_SENTENCES, shuffle_input_sentence=True,
            pad_id=constants.PAD_ID, bos_id=constants.BOS_ID, eos_id=constants.EOS_ID, unk_id=constants.UNK_ID,
            pad_piece=constants.PAD_TOKEN, bos_piece=constants.BOS_TOKEN, eos_piece=constants.EOS_TOKEN,
            unk_piece=constants.UNK_TOKEN, num_threads=os.cpu_count() or 1, minloglevel=2,
        )
    except RuntimeError as error:
        needed = _TOO_FEW_PIECES.search(str(error))
        if needed is None:
            raise
        raise ValueError(f"--subword_vocabulary_size={vocabulary_size} is too small for this text: its characters "
                         f"and the reserved, byte and digit pieces need at least {needed.group(1)}") from None
    with open(model_file, "wb") as stream:
        stream.write(model.getvalue())


def sentencepiece_pieces(model_file):
    """The pieces of a SentencePiece model, in id order."""
    import sentencepiece

    return _pieces(sentencepiece.SentencePieceProcessor(model_file=os.fspath(model_file)))


def _pieces(processor):
    """A loaded `sentencepiece.SentencePieceProcessor`'s pieces, in id order."""
    return [processor.IdToPiece(i) for i in range(processor.GetPieceSize())]
