"""PhraseTableScorer and `rnnsearch score --phrase_table`: Cho et al. 2014's phrase-pair feature."""

import gzip
import io
import math
import os
import sys

import pytest

from conftest import REPO_ROOT
from rnnsearch_tf.inference.batch_translator import BatchTranslator
from rnnsearch_tf.inference.phrase_table import (
    BadPhraseTableLine, PhraseTableScorer, comparison_table, moses_text, table_candidates,
)
from helpers.serving_test_utils import write_model_dir
from helpers import preimported

# Each line as (before the new scores, after them, source phrase, target phrase): the output line must be
# exactly before + " LOG_PROB PER_WORD" + after. Spacing, extra fields, a CRLF and a last line without
# its line end are kept; line 3 and line 6 have fewer than 3 fields.
LINES = [
    (b"the cat ||| le chat ||| 0.5 0.25 0.5 0.125", b" ||| 0-0 1-1 ||| 2 2 1\n", "the cat", "le chat"),
    (b"dog|||chien|||1", b"|||0-0\n", "dog", "chien"),
    (b"a house ||| une maison\n", None, None, None),
    (b"  big dog  |||  grand chien  |||  0.1 0.2", b"  ||| 1-0 0-1 ||| 3 3 1 ||| extra\r\n", "big dog", "grand chien"),
    (b"the ||| le ||| 0.0111111", b" |||\n", "the", "le"),
    (b"\n", None, None, None),
    (b"sees ||| voit ||| 1 1 1 1", b"", "sees", "voit"),
]
INPUT = b"".join(before + (after or b"") for before, after, _, _ in LINES)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_model_dir(tmp_path_factory.mktemp("phrase_table") / "model")


@pytest.fixture(scope="module")
def expected_output(model_dir):
    """INPUT with the model's two scores after each good line's scores, computed with BatchTranslator.score."""
    pairs = [(source, target) for _, _, source, target in LINES if source is not None]
    scores = iter(BatchTranslator.from_model_dir(model_dir).score(*map(list, zip(*pairs))))
    output = b""
    for before, after, source, _ in LINES:
        if source is None:
            output += before
            continue
        score = next(scores)
        per_word = score["log_prob"] / len(score["tokens"])
        output += before + f" {score['log_prob']:g} {per_word:g}".encode() + after
    return output


class RecordingScorer:
    """A stand-in for BatchTranslator: log p = -(number of target words + 1), and a record of the calls."""

    source_language, target_language = "en", "fr"

    def __init__(self, output):
        self.output = output
        self.calls = []

    def score(self, sources, targets):
        self.calls.append((list(sources), self.output.getvalue().count(b"\n")))
        return [dict(log_prob=-float(len(target.split()) + 1), tokens=target.split() + ["</s>"], source_truncated=False,
                     target_truncated=False) for target in targets]


def _run(args):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    return preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.score", "--noprogress", *args],
        capture_output=True, env=environment, cwd=REPO_ROOT,
    )


def test_only_the_model_scores_are_added(model_dir, expected_output, tmp_path):
    (tmp_path / "table").write_bytes(INPUT)
    messages = []
    scorer = PhraseTableScorer(BatchTranslator.from_model_dir(model_dir), lines_per_chunk=3, report=messages.append)
    counts = scorer.score_file(tmp_path / "table", tmp_path / "scored")
    assert (tmp_path / "scored").read_bytes() == expected_output
    assert counts == dict(lines=7, scored=5, bad_lines=2, cut_lines=[])
    assert [message.split(": ")[0] for message in messages] == [f"{tmp_path / 'table'}:3", f"{tmp_path / 'table'}:6"]


def test_phrases_are_read_as_moses_tokens(model_dir):
    """A phrase table holds tokenizer.perl's escaped tokens: "l&apos; homme" is scored as the text "l'homme" the
    model's codec tokenizes (`l'` `homme`, as translate writes it), not as `l & apos ; homme`."""
    assert moses_text(["l&apos; homme", "a &amp;apos; &#124; &lt;b&gt; &#91;c&#93; &quot;d&quot;"], "fr") == [
        "l'homme", 'a &apos; | <b> [c] "d"']
    joined = moses_text(["it &apos;s"], "en") + moses_text(["北京 欢迎 你"], "zh") + moses_text(["a &amp; b"], None)
    assert joined == ["it's", "北京欢迎你", "a & b"]
    output = io.BytesIO()
    scorer = BatchTranslator.from_model_dir(model_dir)
    PhraseTableScorer(scorer).score_lines(iter([b"the big dog ||| l&apos; homme &amp; le chien ||| 1\n"]), output)
    expected = scorer.score(["the big dog"], ["l'homme & le chien"])[0]
    assert expected["tokens"][:2] == ["l'", "homme"]
    per_word = expected["log_prob"] / len(expected["tokens"])
    scores = f"{expected['log_prob']:g} {per_word:g}"
    assert output.getvalue().decode() == f"the big dog ||| l&apos; homme &amp; le chien ||| 1 {scores}\n"


def test_scores_are_log_probabilities_per_pair_and_per_word(tmp_path):
    output = io.BytesIO()
    PhraseTableScorer(RecordingScorer(output)).score_lines(iter([b"a b ||| x y z ||| 0.5\n"]), output)
    assert output.getvalue() == b"a b ||| x y z ||| 0.5 -4 -1\n"
    output = io.BytesIO()
    lines = [b"a ||| x |||\n", b"a ||| x ||| ||| 0-0\n"]  # no scores yet
    PhraseTableScorer(RecordingScorer(output), probabilities=True).score_lines(iter(lines), output)
    probabilities = f"{math.exp(-2):g} {math.exp(-1):g}"
    assert output.getvalue().decode() == f"a ||| x ||| {probabilities}\na ||| x ||| {probabilities} ||| 0-0\n"


def test_a_table_larger_than_a_chunk_streams():
    output = io.BytesIO()
    scorer = RecordingScorer(output)
    counts = PhraseTableScorer(scorer, lines_per_chunk=2, report=lambda message: None).score_lines(
        iter(INPUT.splitlines(keepends=True)), output
    )
    assert counts == dict(lines=7, scored=5, bad_lines=2, cut_lines=[])
    # Chunks of 2 lines (the bad lines 3 and 6 unscored): each scored after the one before was written.
    assert scorer.calls == [
        (["the cat", "dog"], 0), (["big dog"], 2), (["the"], 4), (["sees"], 6)
    ]
    assert output.getvalue().count(b"\n") == 6  # the last line has no line end, as in the input


def test_bad_line_stops_the_run_when_asked():
    output = io.BytesIO()
    scorer = PhraseTableScorer(RecordingScorer(output), lines_per_chunk=2, on_bad_line="stop")
    with pytest.raises(BadPhraseTableLine, match=r"<phrase table>:3: not a phrase-table line"):
        scorer.score_lines(iter(INPUT.splitlines(keepends=True)), output)
    with pytest.raises(ValueError, match="on_bad_line must be one of"):
        PhraseTableScorer(scorer, on_bad_line="skip")


def test_command_scores_a_gzip_table(model_dir, expected_output, tmp_path):
    with gzip.open(tmp_path / "phrase-table", "wb") as stream:  # gzip told by its content, not its name
        stream.write(INPUT)
    result = _run([f"--model_dir={model_dir}", f"--phrase_table={tmp_path / 'phrase-table'}",
                   f"--output={tmp_path / 'scored.gz'}", "--lines_per_chunk=2", "--batch_size=2"])
    assert result.returncode == 0, result.stderr.decode()
    with gzip.open(tmp_path / "scored.gz", "rb") as stream:
        assert stream.read() == expected_output
    stderr = result.stderr.decode()
    assert f"{tmp_path / 'phrase-table'}:3: not a phrase-table line" in stderr
    assert f"{tmp_path / 'phrase-table'}:6: not a phrase-table line" in stderr
    assert "5 phrase pairs scored, 2 bad lines written unscored" in stderr


def test_command_names_the_lines_scored_from_cut_phrases(model_dir, tmp_path):
    (tmp_path / "table").write_bytes(INPUT)
    result = _run([f"--model_dir={model_dir}", f"--phrase_table={tmp_path / 'table'}",
                   f"--output={tmp_path / 'scored'}", "--maximum_source_length=1"])
    assert result.returncode == 0, result.stderr.decode()
    # "the cat" (line 1) and "big dog" (line 4) are two source tokens; "dog", "the", "sees" one.
    assert ("--phrase_table lines 1, 4 scored from their phrases' first tokens only: a source phrase is cut to "
            "--maximum_source_length (1) tokens") in result.stderr.decode()


def test_command_stops_at_a_bad_line_when_asked(model_dir, tmp_path):
    (tmp_path / "table").write_bytes(INPUT)
    result = _run([f"--model_dir={model_dir}", f"--phrase_table={tmp_path / 'table'}",
                   f"--output={tmp_path / 'scored'}", "--on_bad_line=stop"])
    assert result.returncode == 1
    assert f"error: {tmp_path / 'table'}:3: not a phrase-table line" in result.stderr.decode()


TABLE_2 = (
    b"the cat ||| le chat ||| 0.1 0.1 0.5 0.1\n"
    b"the cat ||| chat ||| 0.1 0.1 0.25 0.1\n"
    b"the cat ||| un chat ||| 0.1 0.1 0.75 0.1\n"
    b"the cat ||| la maison\n"
    b"dog ||| chien ||| 1 1 1 1\n"
    b"the dog ||| le chien ||| 1 1 1 1\n"
)


def test_table_candidates_of_given_phrases(tmp_path):
    with gzip.open(tmp_path / "table.gz", "wb") as stream:
        stream.write(TABLE_2)
    candidates = table_candidates(tmp_path / "table.gz", [" the cat", "dog", "house"])
    assert candidates == {
        "the cat": [("un chat", 0.75), ("le chat", 0.5), ("chat", 0.25)], "dog": [("chien", 1.0)], "house": []
    }
    assert table_candidates(tmp_path / "table.gz", ["the cat"], table_score=5) == {"the cat": []}


def test_comparison_table_is_cho_et_al_table_2():
    text = comparison_table("the cat", 2, [("le chat", 0.5), ("un chat", 0.75)], [("le chat", -3.0)],
                            [("le chat", -1.5), ("le | chien", -2.0)])
    assert text == (
        "### the cat\n\n"
        "| Rank | Table, by its score | Table, by the model's log p | The model's n-best |\n"
        "|---|---|---|---|\n"
        "| 1 | un chat (0.75) | le chat (-3) | le chat (-1.5) |\n"
        "| 2 | le chat (0.5) |  | le \\| chien (-2) |\n\n"
    )


def test_command_shows_table_2(model_dir, tmp_path):
    (tmp_path / "table").write_bytes(TABLE_2)
    (tmp_path / "phrases").write_text("the cat\ndog\n", encoding="utf-8")
    result = _run([f"--model_dir={model_dir}", f"--phrase_table={tmp_path / 'table'}",
                   f"--source={tmp_path / 'phrases'}", "--phrase_table_top=2", "--beam_size=2",
                   f"--output={tmp_path / 'table2.md'}"])
    assert result.returncode == 0, result.stderr.decode()
    scorer = BatchTranslator.from_model_dir(model_dir, beam_size=2, num_hypotheses=2)
    targets = ["un chat", "le chat", "chat"]
    by_model = [(target, score["log_prob"]) for target, score in zip(targets, scorer.score(["the cat"] * 3, targets))]
    dog = [("chien", scorer.score(["dog"], ["chien"])[0]["log_prob"])]
    generated = scorer.translate(["the cat", "dog"])
    expected = comparison_table(
        "the cat", 2, [("un chat", 0.75), ("le chat", 0.5), ("chat", 0.25)], by_model, generated[0]["nbest"]
    ) + comparison_table("dog", 2, [("chien", 1.0)], dog, generated[1]["nbest"])
    assert (tmp_path / "table2.md").read_text(encoding="utf-8") == expected
