"""bench/training_flags.py: a model directory's sampling alpha and seed are read from its flags.txt."""

from bench.training_flags import sampling_alpha, training_seed


def test_the_alpha_is_the_last_one_given_and_0_without_one():
    assert sampling_alpha(["--model=rnnsearch", "--subword_sampling_alpha=0.1", "--seed=1"]) == 0.1
    assert sampling_alpha(["--subword_sampling_alpha=0.1", "--subword_sampling_alpha=0.3"]) == 0.3
    assert sampling_alpha(["--model=rnnsearch"]) == 0.0


def test_the_seed_is_the_last_one_given_and_none_without_one():
    assert training_seed(["--model=rnnsearch", "--seed=2", "--subword_sampling_alpha=0.1"]) == 2
    assert training_seed(["--seed=1234", "--seed=3"]) == 3
    assert training_seed(["--seeds=5", "--model=rnnsearch"]) is None
