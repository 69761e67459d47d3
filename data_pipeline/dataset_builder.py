"""Builds a corpus once: raw text -> tokens (the `TextCodec`) -> vocabularies -> TFRecord shards + metadata."""

import collections
import concurrent.futures
import contextlib
import itertools
import json
import os
import pathlib
import shutil

import numpy as np
from absl import logging
import tensorflow as tf

from data_pipeline import constants, corpus_registry, languages
from data_pipeline import pair_reader
from data_pipeline.build_config import BuildConfig
from data_pipeline.copy_pairs import copied_words, copy_pairs
from data_pipeline.data_dir import DataDir
from data_pipeline.external_shuffle import BUCKET_LINES, ExternalShuffle
from data_pipeline.line_batches import batched
from data_pipeline import text_codec
from data_pipeline.progress_line import ProgressLine
from data_pipeline.sentence_joiner import SentenceJoiner
from data_pipeline.text_codec import TextCodec
from data_pipeline.token_pair_file import TokenPairFile, line_pair, pair_line
from data_pipeline.vocabulary import Vocabulary
from data_pipeline.vocabulary_folder import VocabularyFolder

_SIDES = ("source", "target")
_TOKENIZE_BATCH = 256  # pairs tokenized at a time
_WRITE_BATCH = 4096  # records handed to the shard writer's thread at a time


class DatasetBuilder:
    """Turns a `ParallelCorpus` into what training reads: vocabularies, TFRecord shards, `metadata.json`.

    Bahdanau et al. 2014, Section 4.1: sentences are Moses-tokenized, each language keeps a vocabulary of
    its most frequent words (every other word is `<unk>`), and training pairs with more than
    `max_length` words on either side are dropped (30 for RNNsearch-30, 50 for RNNsearch-50; counted
    without the `</s>` every sequence ends with). Dev and test splits are not length-filtered. With
    `subwords="sentencepiece"` a SentencePiece model learned from the raw train split replaces the Moses
    tokenizer and the word vocabulary (`TextCodec`), and `max_length` counts pieces.

    Output, in `output_dir`:
      - `source_vocab.tsv`, `target_vocab.tsv`: `Vocabulary` files learned from the train split (the
        pieces of the SentencePiece model, in its id order, with their counts in the train split).
      - with subwords, `spm.model` (joint) or `source_spm.model` and `target_spm.model`.
      - `{split}-{i:05d}-of-{n:05d}.tfrecord.gz`: GZIP TFRecords of `tf.train.Example` with int64
        features `source_ids` and `target_ids`, both ending with `EOS_ID`, no `BOS_ID`. The train split
        is shuffled once with `seed` (the paper shuffles once, then reads sequentially) and cut into
        `num_shards` shards of equal size (to one record); other splits keep the corpus order in one shard.
      - `{split}.source.txt`, `{split}.target.txt` for every split but train: its kept raw sentences
        (repaired UTF-8), line-aligned with its records, for translating and scoring BLEU.
      - `metadata.json`: per split the pairs read, kept and dropped per reason, repairs, and shards
        (records, sha256); vocabulary sizes and coverage; the filters; input files with sha256; `codec`:
        per side the `TextCodec.description()` every command reads the text codec from.

    Memory does not grow with the corpus, so a corpus of millions of pairs builds in the memory of a small
    one (docs/data.md, "Building corpora of millions of pairs"): pairs are read, tokenized and filtered
    `_TOKENIZE_BATCH` at a time into a scratch file of tokens per split (`TokenPairFile`); the vocabularies
    count token types; SentencePiece learns from a bounded sample; joined pairs are drawn from the scratch
    file read by index. The one-time shuffle of the train split is a two-pass scatter shuffle
    (`ExternalShuffle`): each kept pair goes to one of `ceil(pairs / shuffle_bucket_pairs)` bucket files
    drawn at random (seeded), then bucket after bucket is put in a random order in memory alone, mapped to
    ids and written to the shards, which are cut from that stream at equal counts. It gives a uniformly
    random order, as shuffling in memory did, with one bucket in memory instead of the split; a shuffle
    buffer would not (a pair would move at most a buffer's length) and an external sort by random keys
    would take more passes over the disk. The same `seed` gives byte-identical shards.

    Args:
        corpus: the `ParallelCorpus` to build.
        output_dir: folder to write (created if missing).
        data_root: data folder holding the corpus files (`RNNSEARCH_DATA`), or None.
        show_progress: print a progress line per split on stderr.
        shuffle_bucket_pairs: train pairs per bucket of the one-time shuffle, on average: what it holds in
            memory (200,000 pairs: ~40 MB of tokens at 25 words a side).
        **options: the fields of `BuildConfig` (their defaults there): vocabulary size, length filter,
            shards, seed, subwords, a model's vocabularies (`vocabulary_from`), joined and copy pairs. Joined
            pairs are 2 to `max_joined_sentences` consecutive kept pairs (corpus order) joined into one, both
            sides within `max_length` (`SentenceJoiner.sample_joined_pairs`), so that a model trained on short
            sentences also sees long inputs, as the paper's -50 models saw real ones; copy pairs
            (`copy_pairs`) need a subword codec. The vocabularies count the kept pairs only.
    """

    def __init__(self, corpus, output_dir, data_root=None, show_progress=True, shuffle_bucket_pairs=BUCKET_LINES,
                 **options):
        self.config = BuildConfig(**options)
        if shuffle_bucket_pairs < 1:
            raise ValueError(f"shuffle_bucket_pairs must be at least 1, got {shuffle_bucket_pairs}")
        if self.config.subwords is None and self.config.vocabulary_from is None:  # Moses words: refused first
            for side in _SIDES:  # a registered corpus's languages are its own, not the flags'
                field = (f"corpus {corpus.name}'s {side} language" if corpus.name in corpus_registry.CORPORA
                         else f"--{side}_language")
                languages.check_words_apart(getattr(corpus, f"{side}_language"), field)
        self.corpus = corpus
        self.output_dir = pathlib.Path(output_dir).resolve()
        self.data_root = data_root
        self.show_progress = show_progress
        vocabulary_from = self.config.vocabulary_from
        self.vocabulary_from = VocabularyFolder(os.path.abspath(vocabulary_from)) if vocabulary_from else None
        self.shuffle_bucket_pairs = shuffle_bucket_pairs
        self._codecs = None  # per side, the `TextCodec` tokenizing the corpus (`_make_codecs`)

    def build(self):
        """Builds everything; returns the metadata dict also written to `metadata.json`.

        The folder is written beside `output_dir` (`.NAME.incomplete`) and renamed into place when
        complete, so a build killed at any moment leaves an earlier `output_dir` as it was, or, killed between
        the two renames that put the new one in its place, beside it (`DataDir.replaced_folder`, which a command
        reading the missing folder names). A build that fails (an error, Ctrl-C) removes its `.NAME.incomplete`,
        which can hold a copy of the training text; one killed leaves it to the next build, which removes it.
        """
        if "train" not in self.corpus.splits:
            raise ValueError(f"corpus {self.corpus.name} has no train split to learn vocabularies from")
        copied = self._check_vocabulary_from() if self.vocabulary_from else None
        readers = self._readers()  # resolves every file and checks line counts before any work
        _check_replaceable(self.output_dir, [path for parts in readers.values() for reader in parts
                                             for path in reader.paths])
        self._work_dir = self.output_dir.parent / f".{self.output_dir.name}.incomplete"
        if self._work_dir.exists():
            logging.warning("removing %s, left by a build that did not finish", self._work_dir)
            shutil.rmtree(self._work_dir, ignore_errors=True)
        self._work_dir.mkdir(parents=True)
        try:
            metadata = self._build(readers, copied)
        except BaseException:
            shutil.rmtree(self._work_dir, ignore_errors=True)
            raise
        _replace_folder(self._work_dir, self.output_dir)
        return metadata

    def _build(self, readers, copied):
        """Writes the whole build in `_work_dir`; returns its metadata."""
        self._codecs = self._make_codecs(readers["train"], copied)
        if self.config.copy_share and not self._codecs["source"].is_subword:
            raise ValueError("copy_share needs a subword codec (--subwords): a word-level model reads a made-up "
                             "word as <unk>")
        split_counts, splits = {}, {}
        # The small splits first, so that a bad dev or test file is found before the long training split.
        for split in sorted(readers, key=lambda name: name == "train"):
            if split == "train" or self.vocabulary_from:  # every split's words outside a copied vocabulary
                split_counts[split] = (collections.Counter(), collections.Counter())
            splits[split] = self._tokenize_split(split, readers[split], split_counts.get(split))
            _check_usable(split, readers[split], splits[split])
        splits = {split: splits[split] for split in readers}  # metadata.json and summaries: the corpus's order
        split_counts = {split: split_counts[split] for split in readers if split in split_counts}
        source_counts, target_counts = split_counts["train"]
        vocabularies, ids = self._write_vocabularies(source_counts, target_counts, splits["train"]["kept"])
        if self.vocabulary_from:
            self._count_outside_vocabularies(vocabularies, ids, split_counts)
        wanted_joined, wanted_copies = self.config.added_records(splits["train"]["kept"])
        joined = self._append_joined_pairs(wanted_joined) if wanted_joined else 0
        copies = self._append_copy_pairs(readers["train"], wanted_copies) if wanted_copies else 0
        for split, summary in splits.items():
            added = joined + copies if split == "train" else 0
            summary["shards"] = self._write_shards(split, ids, summary["kept"] + added)
        splits["train"]["joined"] = joined
        if self.config.copy_share:
            splits["train"]["copy_pairs"] = copies
        metadata = self._metadata(splits, vocabularies, readers)
        with open(self._work_dir / constants.METADATA_FILE, "w") as out:
            json.dump(metadata, out, indent=2)
        return metadata

    def _make_codecs(self, train_readers, copied):
        """Each side's `TextCodec` as it tokenizes the corpus (its vocabulary comes later): the codec of
        `vocabulary_from` (its files copied here; `copied` is its data.json or metadata.json), SentencePiece
        models learned from the raw train split, or Moses."""
        languages = {side: getattr(self.corpus, f"{side}_language") for side in _SIDES}
        if copied is not None:
            descriptions = text_codec.codec_descriptions(copied)
            models = {side: descriptions[side].get("model") for side in _SIDES}
            for name in set(models.values()) - {None}:
                shutil.copyfile(self.vocabulary_from.file(name), self._work_dir / name)
            return {side: TextCodec(languages[side], None, descriptions[side]["kind"],
                                    models[side] and self._work_dir / models[side],
                                    descriptions[side].get("lowercase", False)) for side in _SIDES}
        lowercase = self.config.lowercase
        if not self.config.subwords:
            return {side: TextCodec(languages[side], lowercase=lowercase) for side in _SIDES}
        models = self._learn_sentencepiece(train_readers)
        return {side: TextCodec(languages[side], None, self.config.subwords, models[side], lowercase)
                for side in _SIDES}

    def _learn_sentencepiece(self, train_readers):
        """SentencePiece model file(s) learned from the raw train split: {side: path} (one joint model, or one
        per language). The text is read again by fresh readers (their counts are not the split's), normalised as
        the codecs will (`_training_text`)."""
        text_files = {side: self._work_dir / f".train.{side}.txt" for side in _SIDES}
        with contextlib.ExitStack() as stack:
            streams = {side: stack.enter_context(open(path, "w", encoding="utf-8")) for side, path in text_files.items()}
            for reader in train_readers:
                pairs = pair_reader.PairReader(reader.part, reader.paths, reader.max_line_chars)
                for batch in batched(pairs, _WRITE_BATCH):
                    for side, lines in zip(_SIDES, zip(*batch)):
                        streams[side].writelines(line + "\n" for line in self._training_text(lines))
        if self.config.joint_subwords:
            models = {side: self._work_dir / constants.JOINT_SUBWORD_MODEL_FILE for side in _SIDES}
            groups = [(models["source"], list(text_files.values()))]
        else:
            models = {side: self._work_dir / constants.SUBWORD_MODEL_FILES[side] for side in _SIDES}
            groups = [(models[side], [text_files[side]]) for side in _SIDES]
        for model_file, inputs in groups:
            text_codec.learn_sentencepiece(inputs, model_file, self.config.subword_model,
                                           self.config.subword_vocabulary_size, self.config.seed)
        for path in text_files.values():
            os.remove(path)
        return models

    def _training_text(self, lines):
        """Raw training lines as the SentencePiece codecs will see them (`text_codec.normalized`): lower-cased
        with --lowercase, tabs and line breaks made spaces."""
        text = text_codec.normalized(tf.constant(list(lines)), text_codec.SENTENCEPIECE, self.config.lowercase)
        return [line.decode("utf-8") for line in text.numpy()]

    def _subword_options(self):
        """The options the SentencePiece models were learned with (`vocabulary_size` the most pieces asked: each
        model's own count is its vocabulary's `size`, `text_codec.learn_sentencepiece`); None for words or a copied
        codec."""
        if not self.config.subwords:
            return None
        return {"kind": self.config.subwords, "model_type": self.config.subword_model,
                "vocabulary_size": self.config.subword_vocabulary_size, "joint": self.config.joint_subwords,
                **text_codec.SENTENCEPIECE_OPTIONS}

    def _described_codecs(self):
        """Each side's codec with the vocabulary written here (checks that they fit each other)."""
        return {side: TextCodec(codec.language, self._work_dir / constants.VOCABULARY_FILES[side], codec.kind,
                                codec.model_file, codec.lowercase) for side, codec in self._codecs.items()}

    def _readers(self):
        """{split: its `PairReader`s}: every corpus file resolved and its line counts checked."""
        return {
            split: [pair_reader.PairReader.of_part(part, self.data_root, self.config.max_line_chars,
                                                   self.config.allow_download)
                    for part in parts]
            for split, parts in self.corpus.splits.items()
        }

    def _metadata(self, splits, vocabularies, readers):
        """The dict written to metadata.json (see the class docstring)."""
        return {
            "corpus": self.corpus.name,
            "source_language": self.corpus.source_language,
            "target_language": self.corpus.target_language,
            "splits": splits,
            "vocabularies": vocabularies,
            "codec": {side: codec.description() for side, codec in self._described_codecs().items()},
            "filters": {
                "max_length": self.config.max_length,
                "max_length_counts": "tokens per side, without </s>",
                "length_filtered_splits": ["train"],
                "max_line_chars": self.config.max_line_chars,
                "joined_share": self.config.joined_share,
                "max_joined_sentences": self.config.max_joined_sentences,
                "copy_share": self.config.copy_share,
            },
            "subwords": self._subword_options(),
            "shuffle_seed": self.config.seed,
            "inputs": [
                {"path": str(path), "sha256": pair_reader.sha256(path)}
                for path in dict.fromkeys(p for rs in readers.values() for r in rs for p in r.paths)
            ],
        }

    def _write_vocabularies(self, source_counts, target_counts, training_pairs):
        """Writes both vocabularies; returns their metadata and their token -> id mappings by side."""
        vocabularies, ids = {}, {}
        for side, counts in (("source", source_counts), ("target", target_counts)):
            file_name = constants.VOCABULARY_FILES[side]
            language = getattr(self.corpus, f"{side}_language")
            path = self._work_dir / file_name
            codec = self._codecs[side]
            if self.vocabulary_from:
                shutil.copyfile(self.vocabulary_from.file(file_name), path)
            elif codec.is_subword:
                written = Vocabulary.write_pieces(
                    path, text_codec.sentencepiece_pieces(codec.model_file), counts, training_pairs
                )
            else:
                written = Vocabulary.write(path, counts, self.config.vocabulary_size, training_pairs)
            ids[side] = _token_ids(path)
            if self.vocabulary_from:  # how much of this corpus the copy covers
                running = sum(counts.values())
                covered = sum(count for token, count in counts.items() if token in ids[side])
                written = {"size": len(ids[side]), "coverage": covered / running if running else 1.0,
                           "from": self.vocabulary_from.path}
            vocabularies[side] = {
                "file": file_name, "language": language, "sha256": pair_reader.sha256(path), **written
            }
        return vocabularies, ids

    def _check_vocabulary_from(self):
        """Raises ValueError unless `vocabulary_from` holds both vocabularies, for the corpus's languages
        (read from a model directory's data.json or a data directory's metadata.json); returns that dict."""
        folder = self.vocabulary_from
        for name in (constants.SOURCE_VOCABULARY_FILE, constants.TARGET_VOCABULARY_FILE):
            if not os.path.isfile(folder.file(name)):
                raise FileNotFoundError(
                    f"{folder.file(name)} is missing: vocabulary_from must be a model directory written by "
                    "training (or a built data directory)"
                )
        for name in (constants.MODEL_DATA_FILE, constants.METADATA_FILE):
            if os.path.isfile(folder.file(name)):
                with open(folder.file(name), encoding="utf-8") as stream:
                    description = json.load(stream)
                break
        else:
            raise FileNotFoundError(
                f"{folder.path} has neither {constants.MODEL_DATA_FILE} (a model directory) nor "
                f"{constants.METADATA_FILE} (a data directory): its vocabularies' languages are unknown"
            )
        for side in ("source", "target"):
            theirs, ours = description.get(f"{side}_language"), getattr(self.corpus, f"{side}_language")
            if not languages.same_language(theirs, ours):  # a variety ("cmn") fits its language's ("zh")
                raise ValueError(
                    f"{folder.file(name)}: {side}_language is {theirs!r} but corpus {self.corpus.name}'s is "
                    f"{ours!r}: its vocabularies do not fit this corpus"
                )
        return description

    def _count_outside_vocabularies(self, vocabularies, ids, split_counts):
        """Adds to each vocabulary's metadata `outside`: per split, its running tokens and types outside it."""
        for column, side in enumerate(("source", "target")):
            outside = {}
            for split, counts in split_counts.items():
                unknown = {token: count for token, count in counts[column].items() if token not in ids[side]}
                outside[split] = {"tokens": sum(unknown.values()), "types": len(unknown),
                                  "running_tokens": sum(counts[column].values())}
            vocabularies[side]["outside"] = outside

    def _tokenize_split(self, split, readers, counts):
        """Tokenizes and filters one split into a scratch file of `source<TAB>target` token lines.

        Dev and test splits also keep their raw sentences, line-aligned with their records, in
        `{split}.source.txt` / `{split}.target.txt`: the references BLEU is computed against.

        Args:
            split: split name.
            readers: its `PairReader`s.
            counts: (source Counter, target Counter) to add token counts to, or None.

        Returns:
            the split's summary dict for the metadata (read, kept, dropped, repaired).
        """
        dropped, kept = collections.Counter(), 0
        progress = ProgressLine(f"[{split}]", unit="pairs") if self.show_progress else None
        text_files = {} if split == "train" else {side: DataDir.text_name(split, side) for side in ("source", "target")}
        with contextlib.ExitStack() as stack:
            scratch = stack.enter_context(open(self._scratch_file(split), "wb"))
            texts = [
                stack.enter_context(open(self._work_dir / text_files[side], "wb")) for side in text_files
            ]  # source, target: raw lines
            for reader in readers:
                for number, (raw_pair, (source, target)) in enumerate(self._tokenize(reader), start=1):
                    reason = self._drop_reason(source, target, split)
                    if reason:
                        dropped[reason] += 1
                    else:
                        kept += 1
                        if counts:
                            counts[0].update(source)
                            counts[1].update(target)
                        scratch.write(pair_line(source, target) + b"\n")
                        for stream, raw in zip(texts, raw_pair):
                            stream.write(raw + b"\n")
                    if progress and number % _TOKENIZE_BATCH == 0:
                        progress(sum(r.read for r in readers), f", {kept:,} kept")
                dropped.update(reader.dropped)
        if progress:
            dropped_detail = _dropped_detail(dropped)
            progress(sum(r.read for r in readers), f", {kept:,} kept" + (dropped_detail and f"; dropped {dropped_detail}"),
                     final=True)
        return self._split_summary(readers, kept, dropped, text_files)

    @staticmethod
    def _split_summary(readers, kept, dropped, text_files):
        """A split's summary for the metadata: read, kept, dropped and repaired pairs, its text files."""
        repaired = sum((reader.repaired for reader in readers), collections.Counter())
        repaired_lines = collections.defaultdict(list)
        for reader in readers:
            for reason, lines in reader.repaired_lines.items():
                repaired_lines[reason] += lines
        summary = {
            "read": sum(reader.read for reader in readers),
            "kept": kept,
            "dropped": dict(sorted(dropped.items())),
            "repaired": dict(sorted(repaired.items())),
            "first_repaired_lines": dict(sorted(repaired_lines.items())),
        }
        if text_files:
            summary["text_files"] = text_files
        return summary

    def _drop_reason(self, source, target, split):
        if not source:
            return "no_source_tokens"
        if not target:
            return "no_target_tokens"
        if split == "train" and len(source) > self.config.max_length:
            return "source_too_long"
        if split == "train" and len(target) > self.config.max_length:
            return "target_too_long"
        return None

    def _tokenize(self, pairs):
        """Yields ((raw source, raw target), (source tokens, target tokens)) of the (str, str) `pairs`: raw
        UTF-8 bytes, tokens as lists of bytes. One tf.data pipeline tokenizes `_TOKENIZE_BATCH` pairs at a
        time in parallel threads, ahead of the caller, while the pairs are read in another. An error of
        reading (a file's bad line) is raised here as it was raised there (tf.data would wrap it)."""
        failures = []

        def batches():
            try:
                for batch in batched(pairs, _TOKENIZE_BATCH):
                    yield tuple(zip(*batch))  # (sources, targets)
            except Exception as error:  # raised again below, in the caller's thread
                failures.append(error)

        strings = tf.TensorSpec([None], tf.string)
        dataset = (
            tf.data.Dataset.from_generator(batches, output_signature=(strings, strings))
            .map(
                lambda s, t: (s, t, self._codecs["source"].tokenize(s), self._codecs["target"].tokenize(t)),
                num_parallel_calls=tf.data.AUTOTUNE,
                deterministic=True,
            )
            .prefetch(tf.data.AUTOTUNE)
        )
        for raw_sources, raw_targets, source_batch, target_batch in dataset:
            yield from zip(zip(raw_sources.numpy().tolist(), raw_targets.numpy().tolist()),
                           zip(_rows(source_batch), _rows(target_batch)))
        if failures:
            raise failures[0]

    def _scratch_file(self, split):
        return self._work_dir / f".{split}.tokens"

    def _write_shards(self, split, ids, records):
        """Writes the `records` pairs of the split's token file (removed) as shards; returns their metadata.

        Train: shuffled once by `ExternalShuffle` (seeded) and cut into `num_shards` shards of equal size,
        written in turn; other splits: corpus order, one shard.
        """
        scratch = TokenPairFile(self._scratch_file(split))
        num_shards = self.config.num_shards if split == "train" else 1
        bounds = np.linspace(0, records, num_shards + 1).astype(np.int64)
        show_progress = self.show_progress and split == "train"  # the others are one short shard
        progress = ProgressLine(f"[{split} shards]", total=records, unit="pairs") if show_progress else None
        if split == "train":
            shuffle = ExternalShuffle(self._work_dir / f".{split}.buckets", records, self.config.seed,
                                      self.shuffle_bucket_pairs)
            shuffle.scatter(scratch.lines())
            os.remove(scratch.path)
            lines = iter(shuffle)
        else:
            lines = scratch.lines()
        with contextlib.closing(lines):
            shards = []
            for index in range(num_shards):
                shard_lines = itertools.islice(lines, int(bounds[index + 1] - bounds[index]))
                path = self._work_dir / DataDir.shard_name(split, index, num_shards)
                shards.append(self._write_shard(path, shard_lines, ids, progress, int(bounds[index])))
        if split != "train":
            os.remove(scratch.path)
        return shards

    def _append_joined_pairs(self, count):
        """Appends up to `count` joined pairs to the train split's token file; returns how many.

        `SentenceJoiner.sample_joined_pairs` draws them from the kept pairs, read by index from that file.
        """
        with TokenPairFile(self._scratch_file("train")) as pairs:
            joined = SentenceJoiner.sample_joined_pairs(
                pairs, count, self.config.max_length, self.config.max_joined_sentences, self.config.seed
            )
            return pairs.append(pair_line(source, target) for source, target in joined)

    def _append_copy_pairs(self, readers, count):
        """Appends about `count` copy pairs to the train split's token file; returns how many.

        The raw train split is read twice more by fresh readers: to count the pairs that copy a word, then
        to make the copy pairs from them (`copy_pairs`, seeded with `seed`), tokenized and filtered as
        training pairs are.
        """
        def raw_pairs():
            return itertools.chain.from_iterable(
                pair_reader.PairReader(reader.part, reader.paths, reader.max_line_chars) for reader in readers)

        candidates = sum(1 for source, target in raw_pairs() if copied_words(source, target))
        made = copy_pairs(raw_pairs(), candidates, count, self.config.seed)
        with TokenPairFile(self._scratch_file("train")) as pairs:
            return pairs.append(pair_line(source, target) for _, (source, target) in self._tokenize(made)
                                if not self._drop_reason(source, target, "train"))

    @staticmethod
    def _write_shard(path, lines, token_ids, progress=None, done=0):
        """Writes the pairs of token `lines` as a GZIP TFRecord shard of `tf.train.Example`s; returns its
        metadata. Records are serialized here while a thread compresses and writes the batch before."""
        example = tf.train.Example()
        features = example.features.feature
        source_ids, target_ids = features["source_ids"].int64_list.value, features["target_ids"].int64_list.value
        records = 0
        with tf.io.TFRecordWriter(str(path), options="GZIP") as writer, \
                concurrent.futures.ThreadPoolExecutor(max_workers=1) as thread:
            written = None  # the batch the thread writes
            for batch in batched(lines, _WRITE_BATCH):
                serialized = []
                for line in batch:
                    source, target = line_pair(line)
                    source_ids[:] = _to_ids(source, token_ids["source"])
                    target_ids[:] = _to_ids(target, token_ids["target"])
                    serialized.append(example.SerializeToString(deterministic=True))
                if written:
                    written.result()
                written = thread.submit(_write_records, writer, serialized)
                records += len(batch)
                if progress:
                    progress(done + records)
            if written:
                written.result()
        return {"file": path.name, "records": records, "sha256": pair_reader.sha256(path)}


def _rows(tokens):
    """The rows of a `[batch, None]` tf.string RaggedTensor as lists of bytes."""
    values, splits = tokens.flat_values.numpy().tolist(), tokens.row_splits.numpy().tolist()
    return [values[start:stop] for start, stop in zip(splits, splits[1:])]


def _token_ids(vocabulary_file):
    """token bytes -> id, as the in-graph `Vocabulary` maps them (line number)."""
    return {token.encode("utf-8"): index for index, (token, _) in enumerate(Vocabulary.read_entries(vocabulary_file))}


def _to_ids(tokens, token_ids):
    """Tokens (bytes) -> ids, unknown -> UNK_ID, then EOS_ID."""
    lookup, unknown = token_ids.get, constants.UNK_ID
    return [lookup(token, unknown) for token in tokens if token] + [constants.EOS_ID]


def _write_records(writer, records):
    for record in records:
        writer.write(record)


def _check_replaceable(output_dir, inputs):
    """Raises, naming `output_dir`, where replacing it whole (`_replace_folder`) would lose what it holds: a file,
    a folder of files that no build wrote (no metadata.json), or a folder holding one of the `inputs`."""
    if output_dir.exists() and not output_dir.is_dir():
        raise NotADirectoryError(f"--output_dir={output_dir} is a file: give a folder (build-data writes a folder)")
    inside = [str(path) for path in inputs if pathlib.Path(path).resolve().is_relative_to(output_dir)]
    if inside:
        raise ValueError(f"--output_dir={output_dir} holds the input {inside[0]}: build-data replaces its output "
                         "folder whole; give another folder")
    if output_dir.is_dir() and any(output_dir.iterdir()) and not (output_dir / constants.METADATA_FILE).exists():
        raise FileExistsError(f"--output_dir={output_dir} holds files but no {constants.METADATA_FILE}, so no build "
                              "wrote it: build-data replaces its output folder whole; give a new or empty folder, or "
                              "an earlier build's")


def _replace_folder(new, final):
    """Puts the folder `new` in the place of `final` (a folder or nothing), each rename atomic."""
    replaced = pathlib.Path(DataDir.replaced_folder(final))
    shutil.rmtree(replaced, ignore_errors=True)
    if final.exists():
        final.rename(replaced)
    new.rename(final)
    shutil.rmtree(replaced, ignore_errors=True)


def _check_usable(split, readers, summary):
    """Raises, naming the split's files and why their lines were dropped, where `split` kept no pair: a training
    split has nothing to learn from, and a dev or test split of none fails training's validation or a test."""
    if summary["kept"]:
        return
    files = ", ".join(str(path) for reader in readers for path in reader.paths)
    dropped = _dropped_detail(summary["dropped"])
    raise ValueError(f"no usable {'training' if split == 'train' else split} pair in {files}: {summary['read']} read"
                     + (f", dropped {dropped}" if dropped else ""))


def _dropped_detail(dropped):
    """How the progress line and the errors say what was dropped: "empty_source 3, too_long 1,024"."""
    return ", ".join(f"{reason} {count:,}" for reason, count in sorted(dropped.items()))
