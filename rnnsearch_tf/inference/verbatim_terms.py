"""The words of a source sentence a translation should keep as they are: numbers and names.

`rnnsearch translate --verbatim` makes each a constraint of its line (`Translator.translate_constrained`), so
that a subword model copies an invented name or a number it would otherwise rewrite ("Dreyth" -> "Volo",
"193" -> "39": docs/results.md, words or subwords). A word-level model cannot output a word outside its
vocabulary: such a constraint is made of `<unk>` only and skipped; `--replace_unk` copies it instead.
"""

import re

# A number: digits, possibly grouped or with a decimal part ("1961", "3,500", "2.5", "10:30").
_NUMBER = r"\d+(?:[.,:]\d+)*"
# A name: a capitalised word (letters of any script, inner apostrophes and hyphens), not a lone letter ("I").
_NAME = r"[^\W\d_][^\W_]*(?:['’-][^\W\d_]+)*"
_WORD = re.compile(rf"(?<![\w.,:]){_NUMBER}(?![\w])|(?<![\w'’-]){_NAME}")


def verbatim_terms(sentence):
    """The numbers of `sentence`, and its capitalised words after the first word, each once, in order.

    The first word is left out: it is capitalised because it starts the sentence. A capitalised word that
    is a common word in mid-sentence (a title, "Street") is kept too: a rule of case only, with no
    vocabulary; pass a glossary instead where that matters.

    Example:
    >>> verbatim_terms("The Brakkenfeld family visited Tromsø in 1961.")
    ['Brakkenfeld', 'Tromsø', '1961']
    """
    terms = []
    for index, match in enumerate(_WORD.finditer(sentence)):
        word = match.group()
        is_number = word[0].isdigit()
        is_name = not is_number and index > 0 and word[0].isupper() and len(word) > 1
        if (is_number or is_name) and word not in terms:
            terms.append(word)
    return terms
