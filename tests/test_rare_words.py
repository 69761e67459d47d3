"""The rare-word probe: each sentence holds its invented name and number, the same for the same seed."""

from bench.rare_words import PROBE_SIZE, found_verbatim, probe_sentences


def test_each_probe_holds_its_name_and_number_and_the_seed_decides():
    probes = probe_sentences()
    assert len(probes) == PROBE_SIZE and probes == probe_sentences()
    assert probe_sentences(seed=2) != probes
    for sentence, name, number in probes:
        assert name in sentence and number in sentence
        assert name[0].isupper() and name[1:].islower() and 10 <= int(number) < 10_000


def test_a_word_is_found_verbatim_only_whole():
    assert found_verbatim("Dreyth", "Un homme nommé Dreyth, 193.") and found_verbatim("193", "Un homme nommé Dreyth, 193.")
    assert not found_verbatim("Dreyth", "en Dreythme") and not found_verbatim("193", "en 1934")
