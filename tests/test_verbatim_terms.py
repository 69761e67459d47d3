"""verbatim_terms: the numbers and names of a sentence, by their form only."""

from rnnsearch_tf.inference.verbatim_terms import verbatim_terms


def test_names_after_the_first_word_and_numbers_are_kept_once():
    assert verbatim_terms("The Brakkenfeld family visited Tromsø in 1961.") == ["Brakkenfeld", "Tromsø", "1961"]
    assert verbatim_terms("Dreyth sees Dreyth and 12 dogs, then 12 more.") == ["Dreyth", "12"]  # mid-sentence
    assert verbatim_terms("A man named O'Neill-Smith rides bus 7 at 10:30 for 2.5 km, 3,500 m.") == [
        "O'Neill-Smith", "7", "10:30", "2.5", "3,500"]


def test_lone_letters_and_lower_case_words_are_not_terms():
    assert verbatim_terms("Then I saw a dog.") == []
    assert verbatim_terms("a man with an mp3 player and a B52 bomber") == ["B52"]  # a code: kept
    assert verbatim_terms("") == []
