"""rnnsearch_tf/evaluation/plots.py: the figures show the numbers given. Line plots are read back from SVG
(text kept as text): each line's vertices lie where its values put them on the axes; the alignment heatmap is
read back from its PNG pixels."""

import re
import subprocess
import sys

import matplotlib
import matplotlib.image
import numpy as np
import pytest

from rnnsearch_tf.evaluation.plots import plot_alignment, plot_bleu_by_length, plot_learning_curves

BLUE, ORANGE, GREEN = "#1f77b4", "#ff7f0e", "#2ca02c"  # matplotlib's first colours, one per model drawn


def _svg(plot, *arguments, tmp_path):
    path = tmp_path / "figure.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        plot(*arguments, path)
    return path.read_text(encoding="utf-8")


def _data_lines(svg):
    """{colour: [vertices [points, 2], ...]} of the plotted lines (clipped to their axes, unlike legend lines)."""
    lines = {}
    pattern = r'<path d="([^"]*)" clip-path="[^"]*" style="fill: none; stroke: (#[0-9a-f]{6}); stroke-width: 1.5'
    for path, colour in re.findall(pattern, svg):
        points = np.array(re.findall(r"[ML] ([-\d.]+) ([-\d.]+)", path), dtype=float)
        lines.setdefault(colour, []).append(points)
    return lines


def _texts(svg):
    """{text: (x, y)} of the text elements, rotated ones (placed by a translation) too."""
    texts = {}
    for attributes, text in re.findall(r"<text ([^>]*)>([^<]*)</text>", svg):
        place = re.search(r'x="([-\d.]+)" y="([-\d.]+)"', attributes) or re.search(
            r'translate\(([-\d.]+) ([-\d.]+)\)', attributes)
        texts[text] = (float(place.group(1)), float(place.group(2)))
    return texts


def _assert_affine(values, coordinates):
    """The coordinates are one affine function of the values (a linear axis)."""
    slope, intercept = np.polyfit(values, coordinates, 1)
    np.testing.assert_allclose(coordinates, slope * np.asarray(values) + intercept, atol=0.01)
    return slope


def test_bleu_by_length_draws_each_model_at_its_bins_skipping_empty_ones(tmp_path):
    bins = ["0-10", "10-20", "20+"]
    curves = {"rnnsearch": [dict(bin=b, bleu=v) for b, v in zip(bins, [10.0, None, 30.0])],
              "rnnencdec": [dict(bin=b, bleu=v) for b, v in zip(bins, [20.0, 25.0, 5.0])]}
    svg = _svg(plot_bleu_by_length, curves, tmp_path=tmp_path)
    lines, texts = _data_lines(svg), _texts(svg)
    assert sorted(lines) == sorted([BLUE, ORANGE]) and all(len(paths) == 1 for paths in lines.values())
    search, encdec = lines[BLUE][0], lines[ORANGE][0]
    assert len(search) == 2 and len(encdec) == 3  # the bin without sentences has no point
    np.testing.assert_allclose(encdec[:, 0], [texts[b][0] for b in bins], atol=0.01)  # under their tick labels
    np.testing.assert_allclose(search[:, 0], [texts["0-10"][0], texts["20+"][0]], atol=0.01)
    slope = _assert_affine([20.0, 25.0, 5.0, 10.0, 30.0], np.concatenate([encdec[:, 1], search[:, 1]]))
    assert slope < 0  # SVG y grows downwards: a higher BLEU is drawn higher
    assert {"rnnsearch", "rnnencdec", "Sentence length (source Moses tokens)", "BLEU score"} <= set(texts)


def test_learning_curves_by_updates_and_by_hours_share_the_bleu_axis(tmp_path):
    trained = [dict(step=100, hours=0.1, dev_bleu=5.0), dict(step=200, hours=0.3, dev_bleu=9.0),
               dict(step=400, hours=0.35, dev_bleu=8.0)]
    other = [dict(step=150, hours=0.2, dev_bleu=7.0)]
    svg = _svg(plot_learning_curves, {"not validated": [], "trained": trained, "other": other}, tmp_path=tmp_path)
    lines, texts = _data_lines(svg), _texts(svg)
    assert sorted(lines) == sorted([BLUE, ORANGE])  # the model without validations is skipped, not drawn empty
    by_updates, by_hours = sorted(lines[BLUE], key=lambda points: points[0, 0])  # left panel first
    assert len(by_updates) == len(by_hours) == 3
    assert by_updates[:, 0].max() < by_hours[:, 0].min()  # side by side
    _assert_affine([entry["step"] for entry in trained], by_updates[:, 0])
    _assert_affine([entry["hours"] for entry in trained], by_hours[:, 0])
    np.testing.assert_array_equal(by_updates[:, 1], by_hours[:, 1])  # one BLEU axis for both
    bleu = [entry["dev_bleu"] for entry in trained] + [other[0]["dev_bleu"]] * 2
    _assert_affine(bleu, np.concatenate([by_updates[:, 1]] + [points[:, 1] for points in lines[ORANGE]]))
    assert {"trained", "other", "Updates", "Dev BLEU"} <= set(texts) and "not validated" not in texts


@pytest.fixture(scope="module")
def heatmap(tmp_path_factory):
    """The pixels of a 2 x 3 alignment whose weights all differ, none of them 1."""
    alignment = np.array([[0.75, 0.0, 0.25], [0.0, 0.5, 0.0]])  # [target, source]
    path = tmp_path_factory.mktemp("heatmap") / "alignment.png"
    plot_alignment(["the", "cat", "</s>"], ["le", "chat"], alignment, path)
    return matplotlib.image.imread(path)[:, :, :3]  # RGB in [0, 1]


def _cell(pixels, value):
    """(row, column) centre and (height, width) of the block drawn in gray `value` (rows and columns holding more
    than 10 such pixels: not the anti-aliased edges of letters)."""
    drawn = np.all(np.abs(pixels - value) < 0.006, axis=-1)
    rows, columns = np.nonzero(drawn.sum(axis=1) > 10)[0], np.nonzero(drawn.sum(axis=0) > 10)[0]
    assert rows.size > 10 and columns.size > 10, f"no cell drawn in gray {value}"
    centre = ((rows[0] + rows[-1]) / 2, (columns[0] + columns[-1]) / 2)
    return centre, (rows[-1] - rows[0] + 1, columns[-1] - columns[0] + 1)


def test_the_heatmap_shows_each_weight_in_gray_targets_down_sources_across(heatmap):
    (row_05, column_05), (height, width) = _cell(heatmap, 0.5)  # target 1, source 1
    (row_025, column_025), size = _cell(heatmap, 0.25)  # target 0, source 2: fixed 0..1 scale, not the data's
    (row_075, column_075), _ = _cell(heatmap, 0.75)  # target 0, source 0
    np.testing.assert_allclose(size, (height, width), atol=1)
    np.testing.assert_allclose([row_05 - row_025, column_025 - column_05], [height, width], atol=1.5)
    np.testing.assert_allclose([row_075, column_075], [row_025, column_05 - width], atol=1.5)
    for row, column in [(row_025, column_05), (row_05, column_05 - width), (row_05, column_025)]:
        np.testing.assert_allclose(heatmap[int(row), int(column)], 0.0, atol=0.006)  # weight 0: black


def test_the_heatmap_labels_sources_across_the_top_and_targets_down(tmp_path):
    alignment = np.full([2, 3], 1.0 / 3.0)
    svg = _svg(plot_alignment, ["the", "cat", "</s>"], ["le", "chat"], alignment, tmp_path=tmp_path)
    texts = _texts(svg)
    the, cat, end = texts["the"], texts["cat"], texts["&lt;/s&gt;"]  # escaped in SVG
    assert the[0] < cat[0] < end[0]  # across, in order
    le, chat = texts["le"], texts["chat"]
    assert le[1] < chat[1] and le[0] == chat[0]  # down, in order, in one column
    assert the[1] < le[1]  # the sources on top


def test_bleu_by_length_prints_each_bins_sentence_count_under_its_label(tmp_path):
    curves = {"rnnsearch50": [dict(bin="0-10", bleu=30.0, sentences=12), dict(bin="10-20", bleu=None, sentences=0),
                              dict(bin="20+", bleu=25.0, sentences=345)]}
    texts = _texts(_svg(plot_bleu_by_length, curves, tmp_path=tmp_path))
    labels = {"0-10": "(12)", "10-20": "(0)", "20+": "(345)"}
    for label, count in labels.items():
        nearest = min(labels, key=lambda other: abs(texts[other][0] - texts[count][0]))
        assert nearest == label and texts[count][1] > texts[label][1]  # under its own label
    assert "Sentence length (source Moses tokens), sentences per bin in parentheses" in texts


def test_bleu_by_length_names_the_unit_of_the_source_lengths(tmp_path):
    curves = {"zh-en": [dict(bin="0-10", bleu=30.0, sentences=2), dict(bin="10+", bleu=20.0, sentences=1)]}
    texts = _texts(_svg(lambda *arguments: plot_bleu_by_length(*arguments, unit="characters"), curves,
                        tmp_path=tmp_path))
    assert "Sentence length (source characters), sentences per bin in parentheses" in texts


def test_learning_curves_without_any_history_draw_no_legend_and_warn_nothing(tmp_path):
    """matplotlib warned "No artists with labels found to put in legend" for models never validated."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        svg = _svg(plot_learning_curves, {"averaged": [], "ensemble": []}, tmp_path=tmp_path)
    assert not _data_lines(svg) and "averaged" not in _texts(svg)


def test_drawing_chinese_labels_logs_nothing_on_stderr(tmp_path):
    """A fresh process (matplotlib looks a font up once per process): the CJK fallback font has one weight, and
    matplotlib logged "findfont: Failed to find font weight normal for WenQuanYi Zen Hei" at every command."""
    from conftest import REPO_ROOT
    from rnnsearch_tf.evaluation import plots

    if len(plots.plt.rcParams["font.family"]) < 2:
        pytest.skip("no CJK font installed (scripts/install_browser.sh installs fonts-wqy-zenhei)")
    script = ("import numpy as np; from rnnsearch_tf.evaluation.plots import plot_alignment; "
              f"plot_alignment(['他们', '在哪里'], ['Where'], np.full((1, 2), 0.5), {str(tmp_path / 'zh.png')!r})")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "MPLCONFIGDIR": str(tmp_path / "matplotlib"),
                                 "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0 and (tmp_path / "zh.png").stat().st_size > 0
    assert "findfont" not in result.stderr and "Warning" not in result.stderr, result.stderr


def test_chinese_labels_are_drawn_from_an_installed_cjk_font(tmp_path):
    import warnings

    from rnnsearch_tf.evaluation import plots

    if len(plots.plt.rcParams["font.family"]) < 2:
        pytest.skip("no CJK font installed (scripts/install_browser.sh installs fonts-wqy-zenhei)")
    alignment = np.full((2, 3), 1 / 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_alignment(["他们", "在哪里", "</s>"], ["Where", "are"], alignment, tmp_path / "zh.png")
    assert not [warning for warning in caught if "missing from font" in str(warning.message)]
    assert (tmp_path / "zh.png").stat().st_size > 0
