"""bench/train_throughput.py: the flags a preset's own process gets."""

from bench.train_throughput import _child_arguments


def test_a_presets_process_gets_every_flag_but_preset_and_output_in_either_spelling():
    argv = ["--preset=a,b", "--steps=5", "--output", "out.json", "--preset", "c", "--output=x.json", "--nojit"]
    assert _child_arguments(argv) == ["--steps=5", "--nojit"]
