"""rnnsearch_tf/utils/text_files.py: the lines the command-line tools read, and what they write."""

import os

import pytest

from rnnsearch_tf.utils.text_files import (check_line_for_line, check_not_inputs, check_writable,
                                          check_writable_folder, each_line, input_name, line_numbers, numbered_lines,
                                          open_output, read_lines, replaced_files)


def test_lines_end_at_newline_only_and_bad_bytes_are_replaced(tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"dos line\r\nunix line\nin\xe2\x80\xa8side\x0bone\n\ncaf\xc3 \xff\nlast without end")
    assert read_lines(str(path)) == [
        "dos line", "unix line", "in\u2028side\x0bone", "", "caf\ufffd \ufffd", "last without end"]
    lines = each_line(str(path))  # the same lines, one at a time
    assert next(lines) == "dos line" and list(lines) == read_lines(str(path))[1:]
    (tmp_path / "empty.txt").write_bytes(b"")
    assert read_lines(str(tmp_path / "empty.txt")) == []


def test_output_is_utf8_with_newline_ends(tmp_path):
    path = tmp_path / "output.txt"
    with open_output(str(path)) as stream:
        stream.write("le café\nest là\n")
    assert path.read_bytes() == "le café\nest là\n".encode("utf-8")
    assert read_lines(str(path)) == ["le café", "est là"]


def test_line_numbers_name_one_line_several_or_the_first_twenty_and_the_count():
    assert line_numbers([4]) == "line 4"
    assert line_numbers([1, 7]) == "lines 1, 7"
    assert line_numbers(list(range(1, 26))) == f"lines {', '.join(map(str, range(1, 21)))}, ... (25 lines)"


def test_an_input_is_named_by_its_path_and_standard_input_as_stdin():
    assert input_name("-") == "stdin" and input_name("data/test.en") == "data/test.en"


def test_a_file_of_one_line_per_line_of_another_is_refused_naming_both_when_the_counts_differ():
    check_line_for_line(("--target", "t.txt", ["a", ""]), ("--source", "s.txt", ["b", "c"]), "target line")
    check_line_for_line(("--target", "t.txt", []), ("--source", "-", []), "target line")
    with pytest.raises(ValueError) as error:
        check_line_for_line(("--target", "t.txt", ["a"]), ("--source", "-", ["b", "c"]), "target line")
    assert str(error.value) == ("--target t.txt has 1 line but --source stdin has 2: give one target line per "
                                "source line")
    with pytest.raises(ValueError, match=r"^--prefix_file p.txt has 3 lines but --input i.txt has 2: give one prefix "
                                         r"line \(possibly empty\) per input line$"):
        check_line_for_line(("--prefix_file", "p.txt", ["", "", ""]), ("--input", "i.txt", ["x", "y"]),
                            "prefix line (possibly empty)")


def test_an_output_that_cannot_be_written_is_named_before_any_work(tmp_path):
    check_writable("-", "--output")
    check_writable(str(tmp_path / "new.txt"), "--output")
    (tmp_path / "old.txt").write_text("kept", encoding="utf-8")
    check_writable(str(tmp_path / "old.txt"), "--output")
    assert (tmp_path / "old.txt").read_text(encoding="utf-8") == "kept"  # checked, not opened
    with pytest.raises(FileNotFoundError, match=rf"--output={tmp_path}/missing/x.fr: the folder {tmp_path}/missing does"):
        check_writable(str(tmp_path / "missing" / "x.fr"), "--output")
    with pytest.raises(IsADirectoryError, match=rf"--best_output={tmp_path} is a folder"):
        check_writable(str(tmp_path), "--best_output")


def test_an_output_folder_that_cannot_be_made_is_named_before_any_work(tmp_path):
    check_writable_folder(str(tmp_path), "--output_dir")
    check_writable_folder(str(tmp_path / "new" / "deeper"), "--output_dir")  # made with its parents
    assert not (tmp_path / "new").exists()  # checked, not made
    (tmp_path / "afile").write_text("kept", encoding="utf-8")
    for folder in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        with pytest.raises(NotADirectoryError, match=rf"^--output_dir={folder}: {tmp_path}/afile is a file, not a "
                                                      "folder$"):
            check_writable_folder(str(folder), "--output_dir")
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "kept"


def test_an_output_file_that_is_an_input_is_refused_by_any_path(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "train.en").write_text("general\n", encoding="utf-8")
    (tmp_path / "link.en").symlink_to(tmp_path / "out" / "train.en")
    (tmp_path / "other.en").write_text("other\n", encoding="utf-8")
    names = ["train.en", "train.fr", "scores.tsv"]
    check_not_inputs(str(tmp_path / "out"), names, [tmp_path / "other.en"], "--output_dir")
    check_not_inputs(str(tmp_path / "new"), names, [tmp_path / "other.en"], "--output_dir")
    for given in (tmp_path / "out" / "train.en", tmp_path / "link.en", tmp_path / "out" / ".." / "out" / "train.en"):
        with pytest.raises(ValueError, match=rf"^--output_dir={tmp_path}/out: its train.en is the input {given}, "
                                             "which writing it would empty: give another folder$"):
            check_not_inputs(str(tmp_path / "out"), names, [tmp_path / "other.en", given], "--output_dir")
    assert (tmp_path / "out" / "train.en").read_text(encoding="utf-8") == "general\n"


def test_numbered_lines_name_the_line_that_is_not_utf8_and_skip_a_bom_only_when_asked(tmp_path):
    path = tmp_path / "table.tsv"
    path.write_bytes(b"\xef\xbb\xbfchat\tcat\r\ndog\n")
    assert list(numbered_lines(path, ValueError, bom=True)) == [(1, "chat\tcat"), (2, "dog")]
    assert list(numbered_lines(path, ValueError))[0] == (1, "\ufeffchat\tcat")
    path.write_bytes(b"chat\tcat\nl\xe9\tthe\n")
    with pytest.raises(LookupError, match=r"^line 2: not UTF-8 \(invalid continuation byte at byte 1\)$"):
        list(numbered_lines(path, lambda number, problem: LookupError(f"line {number}: {problem}")))


def test_a_byte_order_mark_opening_the_input_is_skipped_as_build_data_skips_it(tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"\xef\xbb\xbfHello, world.\n\xef\xbb\xbfsecond\n")
    assert read_lines(str(path)) == ["Hello, world.", "\ufeffsecond"]  # only the mark opening the input
    assert next(each_line(str(path))) == "Hello, world."


def test_replaced_files_are_renamed_into_place_whole_or_left_as_they_were(tmp_path):
    names = ["train.en", "scores.tsv", "selection.json"]
    for name in names:
        (tmp_path / name).write_text(f"old {name}", encoding="utf-8")
    with pytest.raises(RuntimeError, match="failed while writing"):
        with replaced_files(tmp_path, names) as paths:
            assert [path.name for path in paths] == [f".{name}.incomplete" for name in names]
            paths[0].write_text("half", encoding="utf-8")
            raise RuntimeError("failed while writing")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(names)  # no temporary file left
    assert [(tmp_path / name).read_text(encoding="utf-8") for name in names] == [f"old {name}" for name in names]
    with replaced_files(tmp_path, names) as paths:
        for path, name in zip(paths, names):
            path.write_text(f"new {name}", encoding="utf-8")
        assert [(tmp_path / name).read_text(encoding="utf-8") for name in names] == [f"old {name}" for name in names]
    assert [(tmp_path / name).read_text(encoding="utf-8") for name in names] == [f"new {name}" for name in names]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(names)
    with replaced_files(tmp_path / "made", names[:1]) as paths:  # a folder made for them
        paths[0].write_text("made", encoding="utf-8")
    assert (tmp_path / "made" / "train.en").read_text(encoding="utf-8") == "made"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_folder_where_nothing_can_be_made_is_refused_whoever_runs_the_command(tmp_path):
    """/proc lets no folder be made in it, which its permission bits do not say to root: the check makes one."""
    with pytest.raises(PermissionError, match=r"^--output_dir=/proc/x cannot be written: no folder can be made in "
                                              r"/proc$"):
        check_writable_folder("/proc/x", "--output_dir")
    with pytest.raises(PermissionError, match="no folder can be made in /proc$"):  # a folder written beside it
        check_writable_folder("/proc/x", "--output_dir", beside=True)
    (tmp_path / "built").mkdir()
    check_writable_folder(str(tmp_path / "built"), "--output_dir", beside=True)
    assert [path.name for path in tmp_path.iterdir()] == ["built"]  # the folder made to try is gone
    (tmp_path / "link").symlink_to("/proc/x")  # written through the link, beside its target
    with pytest.raises(PermissionError, match="no folder can be made in /proc$"):
        check_writable_folder(str(tmp_path / "link"), "--output_dir", beside=True)
