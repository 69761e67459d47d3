"""bench/long_sentences.py: the sentences each joined line holds, read from join-sentences' lines.txt."""

from bench.long_sentences import line_sizes


def test_line_sizes_count_the_sentences_a_line_holds_where_lines_were_dropped(tmp_path):
    lines_file = tmp_path / "lines.txt"
    lines_file.write_text("1-2\n1-2,4-4\n5-9\n", encoding="utf-8")  # line 3 dropped: its pair had an empty side
    assert line_sizes(lines_file) == [2, 3, 5]
