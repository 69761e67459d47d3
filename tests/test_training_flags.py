"""bench/training_flags.py: a model directory's sampling alpha is read from its flags.txt."""

from bench.training_flags import sampling_alpha


def test_the_alpha_is_the_last_one_given_and_0_without_one():
    assert sampling_alpha(["--model=rnnsearch", "--subword_sampling_alpha=0.1", "--seed=1"]) == 0.1
    assert sampling_alpha(["--subword_sampling_alpha=0.1", "--subword_sampling_alpha=0.3"]) == 0.3
    assert sampling_alpha(["--model=rnnsearch"]) == 0.0
