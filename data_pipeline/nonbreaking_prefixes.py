"""Moses nonbreaking prefixes for English and French.

Copied from mosesdecoder/scripts/share/nonbreaking_prefixes/nonbreaking_prefix.{en,fr} (LGPL-2.1), as
bundled in sacremoses 0.2.0. A word in ``NONBREAKING_PREFIXES`` keeps a following period attached
("Mr." stays one token); a word in ``NUMERIC_ONLY_PREFIXES`` keeps it only before a number ("No. 5").
"""

NONBREAKING_PREFIXES = {
    "en": frozenset(
        [
            "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q",
            "R", "S", "T", "U", "V", "W", "X", "Y", "Z", "Adj", "Adm", "Adv", "Asst", "Bart",
            "Bldg", "Brig", "Bros", "Capt", "Cmdr", "Col", "Comdr", "Con", "Corp", "Cpl", "DR",
            "Dr", "Drs", "Ens", "Gen", "Gov", "Hon", "Hr", "Hosp", "Insp", "Lt", "MM", "MR", "MRS",
            "MS", "Maj", "Messrs", "Mlle", "Mme", "Mr", "Mrs", "Ms", "Msgr", "Op", "Ord", "Pfc",
            "Ph", "Prof", "Pvt", "Rep", "Reps", "Res", "Rev", "Rt", "Sen", "Sens", "Sfc", "Sgt",
            "Sr", "St", "Supt", "Surg", "v", "vs", "i.e", "rev", "e.g", "Rs", "Nos", "Nr", "Jan",
            "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ]
    ),
    "fr": frozenset(
        [
            "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q",
            "R", "S", "T", "U", "V", "W", "X", "Y", "Z", "b", "c", "d", "e", "f", "g", "h", "i",
            "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z",
            "A.C.N", "A.M", "art", "ann", "apr", "av", "auj", "lib", "B.P", "boul", "ca", "c.-à-d",
            "cf", "ch.-l", "chap", "contr", "C.P.I", "C.Q.F.D", "C.N", "C.N.S", "C.S", "dir", "éd",
            "e.g", "env", "al", "etc", "E.V", "ex", "fasc", "fém", "fig", "fr", "hab", "ibid", "id",
            "i.e", "inf", "LL.AA", "LL.AA.II", "LL.AA.RR", "LL.AA.SS", "L.D", "LL.EE", "LL.MM",
            "LL.MM.II.RR", "loc.cit", "masc", "MM", "ms", "N.B", "N.D.A", "N.D.L.R", "N.D.T",
            "n/réf", "NN.SS", "N.S", "N.D", "N.P.A.I", "p.c.c", "pl", "pp", "p.ex", "p.j", "P.S",
            "R.A.S", "R.-V", "R.P", "R.I.P", "SS", "S.S", "S.A", "S.A.I", "S.A.R", "S.A.S", "S.E",
            "sec", "sect", "sing", "S.M", "S.M.I.R", "sq", "sqq", "suiv", "sup", "suppl", "tél",
            "T.S.V.P", "vb", "vol", "vs", "X.O", "Z.I",
        ]
    ),
}

NUMERIC_ONLY_PREFIXES = {
    "en": frozenset(
        [
            "No", "Art", "pp",
        ]
    ),
    "fr": frozenset(),
}
