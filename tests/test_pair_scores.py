"""bench/pair_scores.py: scores with the target's tokenizer, and the published anchors' conventions."""

import sacrebleu

from bench.pair_scores import moses_lowercased, scores


def test_the_nmtpy_convention_lowercases_normalises_and_tokenizes():
    assert moses_lowercased(["A Man's «dog» runs."], "en", normalize=True) == ['a man \'s " dog " runs .']
    assert moses_lowercased(["Ein Mann, z.B. heute."], "de", normalize=False) == ["ein mann , z.b. heute ."]


def test_anchor_scores_ignore_case_where_sacrebleu_does_not():
    hypotheses, references = ["A DOG RUNS IN THE PARK ."], ["a dog runs in the park."]
    result = scores(hypotheses, references, "en")
    assert result["bleu"] == round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2) < 20
    assert result["nmtpy"] == result["lowercased_moses"] == 100.0
    assert "tok:13a" in result["signature"]


def test_a_chinese_target_has_sacrebleus_tokenizer_and_no_moses_anchors():
    result = scores(["他们在哪里？"], ["他们在哪儿？"], "zh")
    assert "tok:zh" in result["signature"] and result["bleu"] > 0 and result["chrf"] > 0
    assert "nmtpy" not in result and "lowercased_moses" not in result
