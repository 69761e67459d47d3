"""Builds a corpus once: raw text -> Moses tokens -> shortlist vocabularies -> TFRecord shards + metadata."""

import collections
import concurrent.futures
import contextlib
import json
import os
import pathlib
import shutil

import numpy as np
import tensorflow as tf

from data_pipeline import constants
from data_pipeline import data_files
from data_pipeline import pair_reader
from data_pipeline.data_dir import DataDir
from data_pipeline.moses_tokenizer import MosesTokenizer
from data_pipeline.progress_line import ProgressLine
from data_pipeline.sentence_joiner import MAX_JOINED_SENTENCES, SentenceJoiner
from data_pipeline.vocabulary import Vocabulary
from data_pipeline.vocabulary_folder import VocabularyFolder
from data_pipeline.wordpiece_tokenizer import WordPieceTokenizer

_CHUNK_PAIRS = 20000  # pairs tokenized per tf.data pass
_TOKENIZE_BATCH = 256


class DatasetBuilder:
    """Turns a `ParallelCorpus` into what training reads: vocabularies, TFRecord shards, `metadata.json`.

    Bahdanau et al. 2014, Section 4.1: sentences are Moses-tokenized, each language keeps a shortlist of
    its most frequent words (every other word is `<unk>`), and training pairs with more than
    `max_length` words on either side are dropped (30 for RNNsearch-30, 50 for RNNsearch-50; counted
    without the `</s>` every sequence ends with). Dev and test splits are not length-filtered.

    Output, in `output_dir`:
      - `source_vocab.tsv`, `target_vocab.tsv`: `Vocabulary` files learned from the train split.
      - `{split}-{i:05d}-of-{n:05d}.tfrecord.gz`: GZIP TFRecords of `tf.train.Example` with int64
        features `source_ids` and `target_ids`, both ending with `EOS_ID`, no `BOS_ID`. The train split
        is shuffled once with `seed` (the paper shuffles once, then reads sequentially) and cut into
        `num_shards` shards; other splits keep the corpus order in one shard.
      - `{split}.source.txt`, `{split}.target.txt` for every split but train: its kept raw sentences
        (repaired UTF-8), line-aligned with its records, for translating and scoring BLEU.
      - `metadata.json`: per split the pairs read, kept and dropped per reason, repairs, and shards
        (records, sha256); vocabulary sizes and coverage; the filters; input files with sha256.

    Args:
        corpus: the `ParallelCorpus` to build.
        output_dir: folder to write (created if missing).
        data_root: data folder holding the corpus files (`RNNSEARCH_DATA`), or None.
        shortlist_size: tokens kept per language, on top of the 4 reserved ones (the paper: 30000).
        max_length: longest training sentence kept, in tokens without `</s>`.
        max_line_chars: longest raw line kept, in characters; longer pairs are dropped and counted.
        num_shards: shards of the train split.
        seed: seed of the one-time shuffle of the train split.
        allow_download: fetch missing corpus files from their official URLs.
        show_progress: print a progress line per split on stderr.
        wordpiece_vocabulary_size: if set, the vocabularies are WordPiece vocabularies of about this
            size (`WordPieceTokenizer`), learned from the Moses-token counts, and the ids are pieces;
            `shortlist_size` is then unused and `max_length` still counts Moses tokens.
        vocabulary_from: a model directory (or a data directory) whose `source_vocab.tsv` and
            `target_vocab.tsv` are copied instead of learning vocabularies, so that the ids are that
            model's (to continue training it on this corpus, `rnnsearch train --init_from`); its
            languages must be the corpus's. `shortlist_size` is then unused; each vocabulary's metadata
            adds `from` and `outside`: per split, the running tokens and the types outside it.
        joined_share: share of the train split's records that are joined pairs, in [0, 1): 2 to
            `max_joined_sentences` consecutive kept pairs (corpus order) joined into one, both sides within
            `max_length` (`SentenceJoiner.sample_joined_pairs`, seeded with `seed`), added to the kept
            pairs so that a model trained on short sentences also sees long inputs, as the paper's -50
            models saw real ones. The vocabularies count the kept pairs only. 0 adds none.
        max_joined_sentences: most pairs in one joined pair.
    """

    def __init__(
        self,
        corpus,
        output_dir,
        data_root=None,
        shortlist_size=30000,
        max_length=50,
        max_line_chars=2000,
        num_shards=8,
        seed=1234,
        allow_download=False,
        show_progress=True,
        wordpiece_vocabulary_size=None,
        vocabulary_from=None,
        joined_share=0.0,
        max_joined_sentences=MAX_JOINED_SENTENCES,
    ):
        if not 0 <= joined_share < 1:
            raise ValueError(f"joined_share must be in [0, 1), got {joined_share}")
        if joined_share and max_joined_sentences < 2:
            raise ValueError(f"max_joined_sentences must be at least 2, got {max_joined_sentences}")
        self.corpus = corpus
        self.output_dir = pathlib.Path(output_dir).resolve()
        self.data_root = data_root
        self.shortlist_size = shortlist_size
        self.max_length = max_length
        self.max_line_chars = max_line_chars
        self.num_shards = num_shards
        self.seed = seed
        self.allow_download = allow_download
        self.show_progress = show_progress
        self.wordpiece_vocabulary_size = wordpiece_vocabulary_size
        self.vocabulary_from = VocabularyFolder(os.path.abspath(vocabulary_from)) if vocabulary_from else None
        if self.vocabulary_from and wordpiece_vocabulary_size:
            raise ValueError(
                "vocabulary_from copies a model's vocabularies: wordpiece_vocabulary_size cannot be given too"
            )
        self.joined_share = joined_share
        self.max_joined_sentences = max_joined_sentences
        self._source_tokenizer = MosesTokenizer(corpus.source_language)
        self._target_tokenizer = MosesTokenizer(corpus.target_language)

    def build(self):
        """Builds everything; returns the metadata dict also written to `metadata.json`.

        The folder is written beside `output_dir` (`.NAME.incomplete`) and renamed into place when
        complete, so a build killed at any moment leaves an earlier `output_dir` as it was.
        """
        if "train" not in self.corpus.splits:
            raise ValueError(f"corpus {self.corpus.name} has no train split to learn vocabularies from")
        if self.vocabulary_from:
            self._check_vocabulary_from()
        readers = {
            split: [
                pair_reader.PairReader(
                    part,
                    [data_files.resolve(f, self.data_root, self.allow_download) for f in part.files],
                    self.max_line_chars,
                )
                for part in parts
            ]
            for split, parts in self.corpus.splits.items()
        }  # resolves every file and checks line counts before any work
        self._work_dir = self.output_dir.parent / f".{self.output_dir.name}.incomplete"
        shutil.rmtree(self._work_dir, ignore_errors=True)
        self._work_dir.mkdir(parents=True)
        split_counts, splits = {}, {}
        for split, split_readers in readers.items():
            if split == "train" or self.vocabulary_from:  # every split's words outside a copied vocabulary
                split_counts[split] = (collections.Counter(), collections.Counter())
            splits[split] = self._tokenize_split(split, split_readers, split_counts.get(split))
        source_counts, target_counts = split_counts["train"]
        if not splits["train"]["kept"]:
            files = ", ".join(str(path) for reader in readers["train"] for path in reader.paths)
            raise ValueError(
                f"no usable training pair in {files}: {splits['train']['read']} read, "
                f"dropped {splits['train']['dropped']}"
            )
        vocabularies, ids = self._write_vocabularies(source_counts, target_counts, splits["train"]["kept"])
        if self.vocabulary_from:
            self._count_outside_vocabularies(vocabularies, ids, split_counts)
        for split, summary in splits.items():
            summary["shards"] = self._write_shards(split, ids)
        splits["train"]["joined"] = sum(shard["records"] for shard in splits["train"]["shards"]) - splits["train"]["kept"]
        metadata = {
            "corpus": self.corpus.name,
            "source_language": self.corpus.source_language,
            "target_language": self.corpus.target_language,
            "splits": splits,
            "vocabularies": vocabularies,
            "filters": {
                "max_length": self.max_length,
                "max_length_counts": "tokens per side, without </s>",
                "length_filtered_splits": ["train"],
                "max_line_chars": self.max_line_chars,
                "joined_share": self.joined_share,
                "max_joined_sentences": self.max_joined_sentences,
            },
            "shuffle_seed": self.seed,
            "inputs": [
                {"path": str(path), "sha256": pair_reader.sha256(path)}
                for path in dict.fromkeys(p for rs in readers.values() for r in rs for p in r.paths)
            ],
        }
        with open(self._work_dir / constants.METADATA_FILE, "w") as out:
            json.dump(metadata, out, indent=2)
        _replace_folder(self._work_dir, self.output_dir)
        return metadata

    def _write_vocabularies(self, source_counts, target_counts, training_pairs):
        """Writes both vocabularies; returns their metadata and their token -> id mappings by side."""
        vocabularies, ids = {}, {}
        for side, counts, file_name in (
            ("source", source_counts, constants.SOURCE_VOCABULARY_FILE),
            ("target", target_counts, constants.TARGET_VOCABULARY_FILE),
        ):
            language = getattr(self.corpus, f"{side}_language")
            path = self._work_dir / file_name
            if self.wordpiece_vocabulary_size:
                written = WordPieceTokenizer.learn(counts, self.wordpiece_vocabulary_size, path, training_pairs)
                ids[side] = _WordPieceIds(WordPieceTokenizer(language, path), path)
            elif self.vocabulary_from:
                shutil.copyfile(self.vocabulary_from.file(file_name), path)
                ids[side] = _token_ids(path)
                running = sum(counts.values())
                covered = sum(count for token, count in counts.items() if token in ids[side])
                written = {"size": len(ids[side]), "coverage": covered / running if running else 1.0,
                           "from": self.vocabulary_from.path}
            else:
                written = Vocabulary.write(path, counts, self.shortlist_size, training_pairs)
                ids[side] = _token_ids(path)
            vocabularies[side] = {
                "file": file_name, "language": language, "sha256": pair_reader.sha256(path), **written
            }
            if self.wordpiece_vocabulary_size:
                vocabularies[side]["subword"] = "wordpiece"
        return vocabularies, ids

    def _check_vocabulary_from(self):
        """Raises ValueError unless `vocabulary_from` holds both vocabularies, for the corpus's languages
        (read from a model directory's data.json or a data directory's metadata.json)."""
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
            if theirs != ours:
                raise ValueError(
                    f"{folder.file(name)}: {side}_language is {theirs!r} but corpus {self.corpus.name}'s is "
                    f"{ours!r}: its vocabularies do not fit this corpus"
                )

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
            texts = {
                side: stack.enter_context(open(self._work_dir / name, "w", encoding="utf-8", newline="\n"))
                for side, name in text_files.items()
            }
            for reader in readers:
                pairs = iter(reader)
                while chunk := list(zip(*[pair for _, pair in zip(range(_CHUNK_PAIRS), pairs)])):
                    for raw_source, raw_target, (source, target) in zip(*chunk, self._tokenize(*chunk)):
                        reason = self._drop_reason(source, target, split)
                        if reason:
                            dropped[reason] += 1
                            continue
                        kept += 1
                        if counts:
                            counts[0].update(source)
                            counts[1].update(target)
                        scratch.write(b" ".join(source) + b"\t" + b" ".join(target) + b"\n")
                        for side, raw in (("source", raw_source), ("target", raw_target)):
                            if side in texts:
                                texts[side].write(raw + "\n")
                    if progress:
                        progress(sum(r.read for r in readers), f", {kept:,} kept")
                dropped.update(reader.dropped)
        if progress:
            progress(sum(r.read for r in readers), f", {kept:,} kept", final=True)
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
        if split == "train" and len(source) > self.max_length:
            return "source_too_long"
        if split == "train" and len(target) > self.max_length:
            return "target_too_long"
        return None

    def _tokenize(self, sources, targets):
        """Yields (source tokens, target tokens) as lists of bytes, tokenized in parallel by tf.data."""
        dataset = (
            tf.data.Dataset.from_tensor_slices((list(sources), list(targets)))
            .batch(_TOKENIZE_BATCH)
            .map(
                lambda s, t: (self._source_tokenizer.tokenize(s), self._target_tokenizer.tokenize(t)),
                num_parallel_calls=tf.data.AUTOTUNE,
                deterministic=True,
            )
            .prefetch(tf.data.AUTOTUNE)
        )
        for source_batch, target_batch in dataset:
            yield from zip(source_batch.to_list(), target_batch.to_list())

    def _scratch_file(self, split):
        return self._work_dir / f".{split}.tokens"

    def _write_shards(self, split, ids):
        """Maps the split's tokens to ids, shuffles train once, writes its shards, removes the scratch file."""
        with open(self._scratch_file(split), "rb") as scratch:
            lines = [line.rstrip(b"\n").split(b"\t") for line in scratch]
        if split == "train" and self.joined_share:
            lines += self._joined_lines(lines)
        for side, column in (("source", 0), ("target", 1)):
            if isinstance(ids[side], _WordPieceIds):
                ids[side].add(token for line in lines for token in line[column].split(b" "))
        pairs = [(_to_ids(source, ids["source"]), _to_ids(target, ids["target"])) for source, target in lines]
        os.remove(self._scratch_file(split))
        num_shards = self.num_shards if split == "train" else 1
        order = np.random.default_rng(self.seed).permutation(len(pairs)) if split == "train" else range(len(pairs))
        order = np.asarray(order, dtype=np.int64)
        bounds = np.linspace(0, len(pairs), num_shards + 1).astype(np.int64)
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(num_shards, os.cpu_count() or 1)) as pool:
            shards = pool.map(
                lambda index: self._write_shard(
                    self._work_dir / DataDir.shard_name(split, index, num_shards),
                    (pairs[i] for i in order[bounds[index] : bounds[index + 1]]),
                ),
                range(num_shards),
            )
            return list(shards)

    def _joined_lines(self, lines):
        """`joined_share` of the train records as joined pairs: `[source tokens, target tokens]` lines."""
        pairs = [(source.split(b" "), target.split(b" ")) for source, target in lines]
        count = round(self.joined_share * len(pairs) / (1 - self.joined_share))
        joined = SentenceJoiner.sample_joined_pairs(
            pairs, count, self.max_length, self.max_joined_sentences, self.seed
        )
        return [[b" ".join(source), b" ".join(target)] for source, target in joined]

    @staticmethod
    def _write_shard(path, pairs):
        records = 0
        with tf.io.TFRecordWriter(str(path), options="GZIP") as writer:
            for source_ids, target_ids in pairs:
                example = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "source_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=source_ids)),
                            "target_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=target_ids)),
                        }
                    )
                )
                writer.write(example.SerializeToString())
                records += 1
        return {"file": path.name, "records": records, "sha256": pair_reader.sha256(path)}


def _token_ids(vocabulary_file):
    """token bytes -> [id], as the in-graph `Vocabulary` maps them (line number)."""
    with open(vocabulary_file, "rb") as lines:
        return {line.split(b"\t")[0]: [index] for index, line in enumerate(lines)}


class _WordPieceIds(dict):
    """Moses token bytes -> its WordPiece ids, filled by `add` with `WordPieceTokenizer.split_words`."""

    def __init__(self, tokenizer, vocabulary_file):
        super().__init__()
        self._tokenizer = tokenizer
        self._piece_ids = {token: ids[0] for token, ids in _token_ids(vocabulary_file).items()}

    def add(self, tokens):
        new = list({token for token in tokens if token and token not in self})
        for start in range(0, len(new), 100_000):
            batch = new[start : start + 100_000]
            for token, pieces in zip(batch, self._tokenizer.split_words(tf.constant(batch)).to_list()):
                self[token] = [self._piece_ids.get(piece, constants.UNK_ID) for piece in pieces]


def _to_ids(tokens, token_ids):
    """Space-joined tokens -> ids (each token -> one or more ids), unknown -> UNK_ID, then EOS_ID."""
    ids = []
    for token in tokens.split(b" "):
        if token:
            ids.extend(token_ids.get(token, [constants.UNK_ID]))
    return ids + [constants.EOS_ID]


def _replace_folder(new, final):
    """Puts the folder `new` in the place of `final` (a folder or nothing), each rename atomic."""
    replaced = final.parent / f".{final.name}.replaced"
    shutil.rmtree(replaced, ignore_errors=True)
    if final.exists():
        final.rename(replaced)
    new.rename(final)
    shutil.rmtree(replaced, ignore_errors=True)
