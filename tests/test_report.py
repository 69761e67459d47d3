"""rnnsearch_tf/evaluation/report.py: report.md shows each model's metrics in the paper's tables, with the
figures linked beside it."""

import pytest

from rnnsearch_tf.evaluation.report import TRAINING_COLUMNS, write_report

BINS = [dict(bin="0-10", minimum=0, maximum=10), dict(bin="10+", minimum=10, maximum=None)]


def _metrics(bleu, no_unk, replaced, bins, heatmaps, longest, training, signature="nrefs:1|case:mixed|tok:13a"):
    return dict(bleu=bleu, bleu_no_unk=no_unk, no_unk_sentences=4, bleu_unk_replaced=replaced, sentences=6,
                truncated_sentences=1, checkpoint="model/checkpoints/ckpt-7", signature=signature,
                bleu_by_length=[dict(item, sentences=count, bleu=score) for item, (count, score) in zip(BINS, bins)],
                heatmaps=heatmaps, longest_sentences=longest, training=training)


LONGEST = [dict(line=5, source_length=24, source="a | b", reference="le | la", translation="x | y", sentence_bleu=12.5),
           dict(line=1, source_length=7, source="the cat", reference="le chat", translation="chat", sentence_bleu=0.0)]
TRAINING = dict(step=1200, epoch=2.5, hours=0.75, train_nll_per_sentence=41.5, dev_nll_per_sentence=44.0,
                dev_bleu=3.1, best_step=1000, best_dev_bleu=3.4)
SIGNATURES = {"bleu": "nrefs:1|case:mixed|tok:13a", "chrf": "nrefs:1|case:mixed|nc:6|nw:0",
              "chrf_plus_plus": "nrefs:1|case:mixed|nc:6|nw:2", "ter": "nrefs:1|case:lc|tok:tercom"}
METRICS = {
    "rnnsearch": dict(_metrics(31.256, 35.0, 32.1049, [(5, 30.0), (1, 12.345)], ["alignment_1.png"], LONGEST, TRAINING),
                      chrf=55.123, chrf_plus_plus=52.0, ter=48.456, signatures=SIGNATURES,
                      shortlist="model's (10 per source word, 300 frequent)"),
    "rnnencdec": _metrics(20.0, None, 20.5, [(5, 18.0), (0, None)], [], LONGEST[1:], None,
                          signature="nrefs:1|case:lc|tok:13a"),
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.md"
    write_report(path, METRICS, "test.en", "test.fr", "bleu_by_length.png", "learning_curves.png")
    return path.read_text(encoding="utf-8")


def _section(report, heading):
    return report.split(f"## {heading}")[1].split("\n## ")[0]


def _rows(section):
    """The table rows of a Markdown section, as lists of cells (header and separator left out)."""
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]


def _number(value):
    return "–" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def test_the_heading_names_the_test_files(report):
    assert report.startswith("# Evaluation\n\nSource `test.en`, reference `test.fr`.\n")


def test_the_bleu_table_has_a_row_per_model(report):
    section = _section(report, "BLEU (Bahdanau et al. 2014, Table 1)")
    expected = [[name, _number(m["bleu"]), _number(m.get("chrf")), _number(m.get("chrf_plus_plus")),
                 _number(m.get("ter")), _number(m["bleu_no_unk"]), str(m["no_unk_sentences"]),
                 _number(m["bleu_unk_replaced"]), str(m["sentences"]), str(m["truncated_sentences"]),
                 f"`{m['checkpoint']}`", m.get("shortlist", "–")] for name, m in METRICS.items()]
    assert _rows(section) == expected
    assert expected[0][1:6] == ["31.26", "55.12", "52.00", "48.46", "35.00"]  # two decimals
    assert expected[1][2:6] == ["–", "–", "–", "–"]  # "–" for no value (a metrics.json without chrF and TER)
    assert [row[-1] for row in expected] == ["model's (10 per source word, 300 frequent)", "–"]  # nor the shortlist
    # each metric's signatures named, BLEU first (TER's came first, sorted, and none said which was which); the
    # rnnencdec metrics.json of before `signatures` has its BLEU one only
    assert (f"sacreBLEU signatures: BLEU of the detokenized translations `{SIGNATURES['bleu']}`, "
            f"`{METRICS['rnnencdec']['signature']}`; chrF `{SIGNATURES['chrf']}`; chrF++ "
            f"`{SIGNATURES['chrf_plus_plus']}`; TER `{SIGNATURES['ter']}`\n") in section


def test_the_length_table_shows_bleu_and_sentences_per_bin(report):
    section = _section(report, "BLEU by source sentence length (Figure 2)")
    assert "![BLEU by sentence length](bleu_by_length.png)" in section
    assert "| Model | 0-10 | 10+ |" in section
    assert _rows(section) == [
        [name] + [f"{_number(item['bleu'])} ({item['sentences']})" for item in m["bleu_by_length"]]
        for name, m in METRICS.items()]
    assert _rows(section)[1][2] == "– (0)"


def test_heatmaps_are_linked_in_their_models_folder(report):
    section = _section(report, "Alignments (Figure 3)")
    assert [line for line in section.splitlines() if line.startswith("![")] == [
        "![rnnsearch alignment_1.png](rnnsearch/alignment_1.png)"]


def test_a_model_without_attention_has_no_heatmaps_and_no_unk_replaced_score_and_says_why(tmp_path):
    """RNNencdec's heatmaps were black squares, listed as Figure 3, and its "UNK replaced" score a copy of the
    first source word for every <unk>."""
    metrics = {"rnnsearch": METRICS["rnnsearch"],
               "rnnencdec": dict(METRICS["rnnencdec"], uses_attention=False, bleu_unk_replaced=None)}
    write_report(tmp_path / "report.md", metrics, "s", "r", "b.png", "l.png")
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = _section(report, "Alignments (Figure 3)")
    assert [line for line in section.splitlines() if line.startswith(("![", "rnn"))] == [
        "![rnnsearch alignment_1.png](rnnsearch/alignment_1.png)",
        "rnnencdec: none, the model has no attention (RNNencdec: one fixed-length context vector, no alignment)."]
    section = _section(report, "BLEU (Bahdanau et al. 2014, Table 1)")
    assert _rows(section)[1][7] == "–" and "none (–) for a model without attention" in section


def test_long_sentences_of_the_first_model_with_every_models_translation(report):
    section = _section(report, "Long sentences (Appendix C, Table 3)")
    blocks = section.split("### ")[1:]
    assert [block.splitlines()[0] for block in blocks] == ["Line 5 (24 source tokens)", "Line 1 (7 source tokens)"]
    first = blocks[0]
    assert "| Source | a \\| b | |" in first and "| Reference | le \\| la | |" in first  # `|` escaped in a cell
    assert "| rnnsearch | x \\| y | 12.50 |" in first
    assert "| rnnencdec |" not in first  # not among its longest sentences
    assert "| rnnsearch | chat | 0.00 |" in blocks[1] and "| rnnencdec | chat | 0.00 |" in blocks[1]


def test_the_training_table_and_the_models_without_a_training_state(report):
    section = _section(report, "Training (Table 2)")
    assert _rows(section) == [["rnnsearch"] + [_number(TRAINING[key]) for _, key in TRAINING_COLUMNS],
                              ["rnnencdec"] + ["–"] * len(TRAINING_COLUMNS)]
    assert _rows(section)[0][1:3] == ["1200", "2.50"]  # ints as they are, floats with two decimals
    assert "No `training_state.json` in the model directory of rnnencdec:" in section
    assert report.rstrip("\n").endswith("![Learning curves](learning_curves.png)")


def test_no_long_sentences_section_without_them(tmp_path):
    metrics = {"rnnsearch": dict(METRICS["rnnsearch"], longest_sentences=[], training=TRAINING)}
    write_report(tmp_path / "report.md", metrics, "s", "r", "b.png", "l.png")
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Long sentences" not in report and "No `training_state.json`" not in report


def test_an_ensemble_has_no_training_row_and_is_named_as_one(tmp_path):
    """An ensemble's members each have a training_state.json: the report said none was there."""
    metrics = {"qs": dict(METRICS["rnnsearch"], model_dir="runs/qs"),
               "qs+qs2": dict(METRICS["rnnsearch"], model_dir="runs/qs+runs/qs2", training=None)}
    write_report(tmp_path / "report.md", metrics, "s", "r", "b.png", "l.png")
    section = _section((tmp_path / "report.md").read_text(encoding="utf-8"), "Training (Table 2)")
    assert [row[0] for row in _rows(section)] == ["qs"]
    assert "No `training_state.json`" not in section
    assert "qs+qs2: an ensemble of models trained apart, with no row here" in section
    write_report(tmp_path / "report.md", {"qs+qs2": metrics["qs+qs2"]}, "s", "r", "b.png", "l.png")
    section = _section((tmp_path / "report.md").read_text(encoding="utf-8"), "Training (Table 2)")
    assert not _rows(section) and "| Model |" not in section  # no empty table


def test_a_model_without_a_no_unk_subset_shows_a_dash(tmp_path):
    metrics = {"subwords": dict(METRICS["rnnsearch"], bleu_no_unk=None, no_unk_sentences=None)}
    write_report(tmp_path / "report.md", metrics, "s", "r", "b.png", "l.png")
    section = _section((tmp_path / "report.md").read_text(encoding="utf-8"), "BLEU (Bahdanau et al. 2014, Table 1)")
    assert _rows(section)[0][5:7] == ["–", "–"]


SEARCH = dict(beam_size=12, num_hypotheses=1, length_normalization="gnmt", length_penalty_alpha=0.6,
              maximum_length_a=2.0, maximum_length_b=10, maximum_source_length=100, early_stopping=False,
              forbid_unk=False, sampling=False, num_samples=1, sampling_temperature=1.0, sampling_seed=0,
              shortlist=None)


def test_the_search_and_the_weights_of_each_model_are_shown(tmp_path):
    metrics = {"beam": dict(METRICS["rnnsearch"], search=SEARCH, precision="float32", quantize="none"),
               "sampled": dict(METRICS["rnnsearch"], search=dict(SEARCH, sampling=True, num_samples=5,
                                                                  length_normalization="none"),
                               precision="bfloat16", quantize="int8"),
               "older": METRICS["rnnencdec"]}  # a metrics.json written before the search was recorded
    write_report(tmp_path / "report.md", metrics, "s", "r", "b.png", "l.png")
    section = _section((tmp_path / "report.md").read_text(encoding="utf-8"), "BLEU (Bahdanau et al. 2014, Table 1)")
    rows = [row for row in _rows(section) if len(row) == 7][1:]  # the header of the second table left out
    assert rows == [
        ["beam", "beam 12", "gnmt (α 0.6)", "2 × source + 10", "100", "float32", "none"],
        ["sampled", "sampling: 5 per sentence, temperature 1.0, seed 0", "none", "2 × source + 10", "100",
         "bfloat16", "int8"],
    ]


def test_lengths_are_named_in_the_unit_they_were_counted_in(tmp_path):
    metrics = {"zh-en": dict(METRICS["rnnsearch"], source_length_unit="characters")}
    write_report(tmp_path / "report.md", metrics, "s", "r", "b.png", "l.png")
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "per bin of source length in characters" in _section(report, "BLEU by source sentence length (Figure 2)")
    assert "### Line 5 (24 source characters)" in report
