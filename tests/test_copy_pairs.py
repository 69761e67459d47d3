"""copy_pairs: which words a pair copies, made-up words of their kind, copy pairs replacing them alike."""

import numpy as np

from data_pipeline.copy_pairs import copied_words, copy_pair, copy_pairs, made_up_word


def test_copied_words_are_shared_numbers_and_capitalised_words():
    assert copied_words("Tom and Mary saw 12 YMCA dogs in Tomorrowland .", "Tom et Mary ont vu 12 chiens YMCA .") == [
        "Tom", "Mary", "12", "YMCA"]
    assert copied_words("A man in Paris .", "Un homme à Paris A .") == ["Paris"]  # a lone letter is no name
    assert copied_words("the cat sees Tom .", "le chat voit tom .") == []  # not the same word
    assert copied_words("Tom sees Tom .", "Tom voit Tom .") == ["Tom"]


def test_made_up_words_are_of_the_same_kind_and_seeded():
    rng = np.random.default_rng(0)
    for _ in range(200):
        number, name, acronym = made_up_word("1961", rng), made_up_word("Tom", rng), made_up_word("YMCA", rng)
        assert number.isdigit() and len(number) == 4 and number[0] != "0"
        assert name.isalpha() and name == name.capitalize() and 3 <= len(name) <= 10
        assert acronym.isalpha() and acronym.isupper()
    assert made_up_word("0", rng).isdigit() and len(made_up_word("07", rng)) == 2
    assert [made_up_word("Tom", np.random.default_rng(5)) for _ in range(2)] == [
        made_up_word("Tom", np.random.default_rng(5))] * 2


def test_a_copy_pair_replaces_whole_words_alike_on_both_sides():
    source, target = copy_pair("Tom met Tommy and Tom in 1961 .", "Tom a vu Tommi et Tom en 1961 .",
                               np.random.default_rng(1))
    name, number = source.split()[0], source.split()[6]
    assert source == f"{name} met Tommy and {name} in {number} ."  # "Tommy" is not copied: kept, "Tom" not in it
    assert target == f"{name} a vu Tommi et {name} en {number} ."
    assert name != "Tom" and number != "1961"
    assert copy_pair("the cat .", "le chat .", np.random.default_rng(1)) is None


def test_copy_pairs_give_each_candidate_its_share_in_order():
    pairs = [("Tom runs .", "Tom court ."), ("a dog .", "un chien ."), ("in 1961 .", "en 1961 .")]
    made = list(copy_pairs(pairs, candidates=2, count=4, seed=3))
    assert len(made) == 4
    for source, target in made[:2]:  # the first candidate's share: "Tom" made up anew, alike on both sides
        name = source.split()[0]
        assert name != "Tom"
        assert (source, target) == (f"{name} runs .", f"{name} court .")
    assert all(source.startswith("in ") for source, _ in made[2:])
    assert made == list(copy_pairs(pairs, candidates=2, count=4, seed=3))
    counts = [len(list(copy_pairs(pairs, candidates=2, count=3, seed=seed))) for seed in range(200)]
    assert set(counts) <= {2, 3, 4} and abs(np.mean(counts) - 3) < 0.2  # 1 each, one more with p = 1/2
    assert list(copy_pairs(pairs, candidates=0, count=4, seed=3)) == []
