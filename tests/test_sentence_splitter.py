"""SentenceSplitter: the splits of Moses' split-sentences.perl on real newstest2014 and Multi30k lines."""

import pytest

from data_pipeline.sentence_splitter import SentenceSplitter

# Consecutive lines of newstest2014 (line numbers given) and Multi30k test_2016 joined with a space, and
# the sentences split-sentences.perl makes of them, written from its rules (the rule deciding is named).
_MR = (
    "Attacked by liberals and neo-democrats in the House of Commons, Mr. Nicholson assured that, prior to their "
    "discharge, members of the army underwent a transition plan in collaboration with their superiors."
)  # newstest2014.en line 99
_MR_2 = (
    "Mr. Hawkins stressed that a soldier could be prepared for his departure, with planning and consultation "
    "sessions, but that this was totally different than wanting to leave the army."
)  # line 105
_US = (
    "The movement is also bolstered by two former U.S. Transportation secretaries, who in a 2011 report urged "
    "Congress to move in the pay-per-mile direction."
)  # line 33
_US_2 = "The U.S. Senate approved a $90-million pilot project last year that would have involved about 10,000 cars."
_QUOTE = (
    '"And because if what is happening in Iraq is not handled, it will spread, as will what is happening in Syria.'
)  # line 462
_NUMBER = "Perry was one of the singers to make a guest appearance on the Rolling Stones' tour this year."  # 1505
_NUMBER_2 = 'Her new album, "Prism," debuted at No. 1 this week.'  # 1506
_M = (
    "Mais il a nié avoir changé sa politique à la demande de M. Obeid qui, a reconnu M. Tripodi, réclamait un "
    "changement de la politique gouvernementale en matière de baux."
)  # newstest2014.fr line 1738
_M_2 = (
    "La transcription de conversations téléphoniques présentée à l'ICAC a montré des appels passés en août et "
    "septembre 2007 entre M. Obeid, M. Tripodi et Steve Dunn, un haut fonctionnaire qui était arrivé au ministère "
    "des Ports après avoir travaillé sous les ordres de M Obeid au ministère des Pêches."
)  # line 1739
_CAPTIONS_EN = [  # Multi30k test_2016_flickr.en lines 1-4
    "A man in an orange hat starring at something.",
    "A Boston Terrier is running on lush green grass in front of a white fence.",
    "A girl in karate uniform breaking a stick with a front kick.",
    "Five people wearing winter jackets and helmets stand in the snow, with snowmobiles in the background.",
]
_CAPTIONS_FR = [
    "Un homme avec un chapeau orange regardant quelque chose.",
    "Un terrier de Boston court sur l'herbe verdoyante devant une clôture blanche.",
    "Une fille en tenue de karaté brisant un bâton avec un coup de pied.",
    "Cinq personnes avec des vestes d'hiver et des casques sont debout dans la neige, avec des motoneiges en "
    "arrière-plan.",
]

ENGLISH_CASES = [
    # "Mr." is a non-breaking prefix; "superiors." before "Mr." breaks (the period loop).
    (f"{_MR} {_MR_2}", [_MR, _MR_2]),
    # "U.S." is an upper-case acronym: no break before "Transportation" nor "Senate".
    (f"{_US} {_US_2}", [_US, _US_2]),
    # "?" before an upper-case word breaks; the closing quote stays with its sentence.
    (
        f'{_QUOTE} And what happens when the virus of terrorism is alive? It spreads."',
        [_QUOTE, "And what happens when the virus of terrorism is alive?", 'It spreads."'],
    ),
    # "No." is numeric-only: no break before "1".
    (f"{_NUMBER} {_NUMBER_2}", [_NUMBER, _NUMBER_2]),
    (" ".join(_CAPTIONS_EN), _CAPTIONS_EN),
    # A period before a lower-case word does not end a sentence; "..." before an upper-case one does.
    ("It ends. then goes on.", ["It ends. then goes on."]),
    ("Wait... What now?", ["Wait...", "What now?"]),
    # "No." before a word is not numeric-only: the period loop breaks there.
    ("Say No. Then leave.", ["Say No.", "Then leave."]),
    # A closing bracket after the period, then an upper-case word.
    ("He left (for good.) Then it rained.", ["He left (for good.)", "Then it rained."]),
    # A period, then an opening quote and an upper-case word.
    ('It was over. "Never again," he said.', ["It was over.", '"Never again," he said.']),
    ("  one   sentence  ", ["one sentence"]),
    ("", []),
    ("   ", []),
]
FRENCH_CASES = [
    # "M." is a non-breaking prefix in French.
    (f"{_M} {_M_2}", [_M, _M_2]),
    (" ".join(_CAPTIONS_FR), _CAPTIONS_FR),
    # Guillemets are Pi / Pf: « opens a sentence, » closes one.
    ("Il a dit : « Non. » Puis il est parti.", ["Il a dit : « Non. »", "Puis il est parti."]),
    ("C'est fini. « Jamais plus », dit-il.", ["C'est fini.", "« Jamais plus », dit-il."]),
]


@pytest.mark.parametrize("language, cases", [("en", ENGLISH_CASES), ("fr", FRENCH_CASES)])
def test_split_matches_the_moses_splitter(language, cases):
    splitter = SentenceSplitter(language)
    for text, expected in cases:
        assert splitter.split(text) == expected, text


def test_the_prefixes_are_per_language():
    # "Dr." keeps a sentence going in English only; French has no "Dr" prefix.
    text = "Il a vu le Dr. Martin hier."
    assert SentenceSplitter("en").split(text) == [text]
    assert SentenceSplitter("fr").split(text) == ["Il a vu le Dr.", "Martin hier."]


def test_joining_the_split_gives_the_line_with_single_spaces():
    text = f"{_US}  {_US_2}\t{_NUMBER}"
    assert " ".join(SentenceSplitter("en").split(text)) == " ".join(text.split())


GERMAN_CASES = [
    ("Er kam z.B. gestern. Dann ging er.", ["Er kam z.B. gestern.", "Dann ging er."]),
    ("Siehe Nr. 5 usw. Danach kam er.", ["Siehe Nr. 5 usw. Danach kam er."]),  # "usw." is a German prefix
    ("Ein Hund rennt. Zwei Kinder spielen!", ["Ein Hund rennt.", "Zwei Kinder spielen!"]),
]
CHINESE_CASES = [
    ("我很好。你呢？他说：“好！”然后走了。", ["我很好。", "你呢？", "他说：“好！”", "然后走了。"]),
    ("汤姆在哪里？", ["汤姆在哪里？"]),
]


@pytest.mark.parametrize("language, cases", [("de", GERMAN_CASES), ("zh", CHINESE_CASES)])
def test_split_in_other_languages(language, cases):
    splitter = SentenceSplitter(language)
    for text, expected in cases:
        assert splitter.split(text) == expected, text


def test_the_german_prefixes_are_germanys():
    assert SentenceSplitter("en").split("Siehe usw. Danach kam er.") == ["Siehe usw.", "Danach kam er."]


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="language='xx' is not a language code"):
        SentenceSplitter("xx")


# split-sentences.perl's rules for the languages it names (mosesdecoder master, `scripts/ems/support/`): each case's
# expected sentences are the Perl script's output for the paragraph with `-l LANGUAGE` (its spaces it puts between
# two CJK punctuation marks left out: they change the text, not where it splits).
SCRIPT_WITHOUT_CASE_CASES = [
    # Hindi, Marathi, Gujarati: a danda ends a sentence, and so does "." "?" before a letter of the script.
    ("hi", "यह अच्छा है। वह भी अच्छा है। ठीक है? हाँ.", ["यह अच्छा है।", "वह भी अच्छा है।", "ठीक है?", "हाँ."]),
    ("hi", 'राम ने कहा॥ सीता आई। "वह" गई.', ["राम ने कहा॥", "सीता आई।", '"वह" गई.']),
    ("hi", "डॉ. शर्मा आए। फिर गए", ["डॉ. शर्मा आए।", "फिर गए"]),  # "डॉ" is a Hindi prefix
    ("mr", "हे चांगले आहे. ते पण. ठीक? हो।", ["हे चांगले आहे.", "ते पण.", "ठीक?", "हो।"]),
    ("gu", "આ સારું છે। તે પણ સારું છે. ઠીક છે? હા", ["આ સારું છે।", "તે પણ સારું છે.", "ઠીક છે?", "હા"]),
    ("bn", "এটা ভালো। ওটাও ভালো. ঠিক? হ্যাঁ", ["এটা ভালো।", "ওটাও ভালো.", "ঠিক?", "হ্যাঁ"]),
    ("ta", "இது நல்லது. அதுவும். சரி? ஆம்", ["இது நல்லது.", "அதுவும்.", "சரி?", "ஆம்"]),
    # Urdu: "۔" "." "!" before an Arabic letter ends one; "؟" only before an upper-case letter or a digit.
    ("ur", "یہ اچھا ہے۔ وہ بھی اچھا ہے۔ ٹھیک؟ ہاں", ["یہ اچھا ہے۔", "وہ بھی اچھا ہے۔", "ٹھیک؟ ہاں"]),
    ("ur", 'یہ اچھا ہے. "وہ" بھی! ہاں۔ ہاں', ["یہ اچھا ہے.", '"وہ" بھی!', "ہاں۔", "ہاں"]),
    # Persian: an Arabic letter starts a sentence; Korean: a Hangul syllable does.
    ("fa", "این خوب است. آن هم خوب است؟ بله! خیر", ["این خوب است.", "آن هم خوب است؟", "بله!", "خیر"]),
    ("ko", '안녕하세요. 반갑습니다! 네? 좋아요.', ["안녕하세요.", "반갑습니다!", "네?", "좋아요."]),
    ("ko", '그는 말했다. "안녕" 그리고 갔다.', ["그는 말했다.", '"안녕" 그리고 갔다.']),
    # Chinese and Japanese: "." "?" "!" before a Han character end a sentence, spaces or none between.
    ("zh", "我很好.你呢? 他说:好!然后走了。He said. 好", ["我很好.", "你呢?", "他说:好!", "然后走了。", "He said.", "好"]),
    ("zh", "Hi! 你好", ["Hi!", "你好"]),
    ("zh", "他说「好。」然后走了。", ["他说「好。」", "然后走了。"]),
    ("yue", "佢好好。你呢？", ["佢好好。", "你呢？"]),
    ("ja", "東京へ行った.京都も。", ["東京へ行った.", "京都も。"]),
    # In any other language these rules do not apply.
    ("en", "Go。Now. 好", ["Go。Now. 好"]),
    ("ar", "هذا جيد. ذلك أيضا؟ نعم", ["هذا جيد. ذلك أيضا؟ نعم"]),
]


@pytest.mark.parametrize("language, text, expected", SCRIPT_WITHOUT_CASE_CASES)
def test_the_rules_for_scripts_without_case_and_chinese_are_the_perl_scripts(language, text, expected):
    assert SentenceSplitter(language).split(text) == expected


def test_a_variety_is_split_by_its_languages_rules_and_prefixes():
    """Standard Estonian (ekk) as Estonian: its prefixes, not the English ones sacremoses falls back to."""
    text = "Kohtusin kapt. Tammega. Ta oli rõõmus."
    assert SentenceSplitter("ekk").split(text) == SentenceSplitter("et").split(text) == [
        "Kohtusin kapt. Tammega.", "Ta oli rõõmus."]
    assert SentenceSplitter("en").split(text) == ["Kohtusin kapt.", "Tammega.", "Ta oli rõõmus."]
