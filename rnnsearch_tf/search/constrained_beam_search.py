"""Lexically constrained beam search by dynamic beam allocation (Post & Vilar 2018, "Fast Lexically
Constrained Decoding with Dynamic Beam Allocation for Neural Machine Translation").

Each sentence brings target phrases (token sequences) that must each appear in its translation, anywhere.
The beam is shared by banks of hypotheses that have met 0, 1, ..., all constraint tokens, so that
hypotheses which spent probability on a constraint are not pushed out by freer ones. After Sockeye's
`lexical_constraints.py` (`ConstrainedHypothesis.advance`: a phrase in progress that is not continued is
undone; here it resumes where the tokens that broke it off start it again, as Knuth-Morris-Pratt matching
does, so that "4 4 7" meets "4 7") and fairseq's `LexicallyConstrainedBeamSearch` (the banks filled by
striping: the best of every bank, then the second of every bank, ...).
"""

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.search_helpers import (
    IMPOSSIBLE,
    LARGE_NEGATIVE,
    fixed_entries,
    impossible_tokens,
    repeat_rows,
    split_leading_dimension,
)
from rnnsearch_tf.search.top_candidates import top_candidates

# The search's own entries of the state: the flat constraint tokens are fixed (one row per sentence), the
# progress through them changes with every hypothesis (the state after all of its tokens but the last:
# the last is applied at the next step, when it is known).
TOKENS, FOLLOWED, MET, LAST_MET = "constraint/tokens", "constraint/followed", "constraint/met", "constraint/last_met"
# Also fixed: where each phrase may resume after a broken-off start (`restart_table`, `[batch, phrases, P, P]`), and
# the fewest words a sentence's hypothesis may end with (`[batch]`: its free translation's, `word_counts`). Changing
# with every hypothesis, as the progress: its words (`[batch * beam]`, its last token not counted yet).
RESTARTS, MINIMUM_WORDS, WORDS = "constraint/restarts", "constraint/minimum_words", "constraint/words"
# The fixed constraint tokens repeated to each hypothesis's row (`[batch * beam, C]`, what `advance` and
# `allowed_tokens` read beside the progress): added to the fixed entries by the first step, once per search
# (fixed entries are never gathered here: this search does not drop finished sentences).
HYPOTHESIS_TOKENS, HYPOTHESIS_FOLLOWED = "constraint/hypothesis_tokens", "constraint/hypothesis_followed"
_OWN_ENTRIES = (TOKENS, FOLLOWED, MET, LAST_MET, RESTARTS, MINIMUM_WORDS, WORDS, HYPOTHESIS_TOKENS,
                HYPOTHESIS_FOLLOWED)
# The fields of a search's result with a step dimension (their third).
_STEP_FIELDS = ("ids", "alignments", "token_log_probs")


def flat_constraints(constraint_ids):
    """int `[batch, phrases, phrase_len]` (PAD-padded) -> `(tokens, followed)` `[batch, C]`, `C = phrases *
    phrase_len + 1`: each sentence's constraint tokens, phrase after phrase (PAD where a phrase is shorter,
    and at the end), and whether the next token belongs to the same phrase."""
    constraint_ids = tf.cast(constraint_ids, tf.int32)
    batch_size = tf.shape(constraint_ids)[0]
    is_token = tf.not_equal(constraint_ids, constants.PAD_ID)  # [batch, phrases, phrase_len]
    next_is_token = tf.pad(is_token[:, :, 1:], [[0, 0], [0, 0], [0, 1]])  # [batch, phrases, phrase_len]
    # One column of padding more, so that a batch without constraints (`[batch, 0, 0]`) has C >= 1.
    tokens = tf.pad(tf.reshape(constraint_ids, [batch_size, -1]), [[0, 0], [0, 1]])  # [batch, C]
    followed = tf.pad(tf.reshape(is_token & next_is_token, [batch_size, -1]), [[0, 0], [0, 1]])  # [batch, C]
    return tokens, followed


def phrase_starts(followed):
    """bool `[rows, C]`: whether a phrase starts at each flat position (no token before it is followed)."""
    return tf.logical_not(tf.pad(followed[:, :-1], [[0, 0], [1, 0]]))


def restart_table(constraint_ids):
    """bool `[batch, phrases, P, P]` of constraint ids `[batch, phrases, P]` (PAD-padded; a dimension of 0 counts
    as 1): `restarts[b, k, q, r]` says that phrase k, met up to its token q, may resume at its token `r <= q`
    when the next token breaks it off: its tokens before r are the last tokens met up to q (a border, as
    Knuth-Morris-Pratt's failure function finds it). Its first token always: "4 7" met up to "4", broken off
    by "4", resumes there ("4 4 7"); "4 4 7" met up to the second "4", broken off by a third, resumes at its
    second token ("4 4 4 7")."""
    constraint_ids = tf.cast(constraint_ids, tf.int32)
    shape = tf.shape(constraint_ids)
    constraint_ids = tf.pad(constraint_ids, [[0, 0], [0, tf.maximum(1 - shape[1], 0)], [0, tf.maximum(1 - shape[2], 0)]])
    offsets = tf.range(tf.shape(constraint_ids)[2])  # [P]
    q, r, p = offsets[:, None, None], offsets[None, :, None], offsets[None, None, :]  # [P, 1, 1] ...
    # [P, P, P]: the token the token at p (before r) must equal: as far after p as q + 1 is after r.
    partner = tf.clip_by_value(p + q + 1 - r, 0, tf.shape(offsets)[0] - 1)
    same = tf.equal(constraint_ids[:, :, None, None, :], tf.gather(constraint_ids, partner, axis=2))  # [b, k, q, r, p]
    border = tf.reduce_all(same | (p >= r), axis=4)  # [batch, phrases, P, P]
    return border & (r[:, :, 0] <= q[:, :, 0])


def resume_positions(restarts, sentences, last_met, width):
    """bool `[rows, C]` (`C = width`, `flat_constraints`' layout): where the phrase of each hypothesis's last met
    position (`last_met` int32 `[rows]`, -1 before any: then anything, which `advance` does not read) may resume,
    from the `restart_table` of its sentence (`sentences` int32 `[rows]`, indices into `restarts`)."""
    phrase_len = tf.shape(restarts)[2]
    safe_last = tf.maximum(last_met, 0)  # [rows]
    phrase, offset = safe_last // phrase_len, safe_last % phrase_len  # [rows] each
    resumable = tf.gather_nd(restarts, tf.stack([sentences, tf.minimum(phrase, tf.shape(restarts)[1] - 1), offset],
                                                axis=1))  # [rows, P]
    positions = tf.range(width)  # [C]
    in_phrase = tf.equal(positions[None, :] // phrase_len, phrase[:, None])  # [rows, C]
    return in_phrase & tf.gather(resumable, positions % phrase_len, axis=1)


def advance(tokens, followed, met, last_met, token, resumable):
    """The constraint state after one more token (Sockeye's `ConstrainedHypothesis.advance`, with a restart).

    Inside a phrase (the last met token is followed by another of its phrase) the next token continues it.
    Any other token breaks it off: the phrase resumes at the last of its `resumable` positions whose token
    that is (its tokens before there are met again, the restart of Knuth-Morris-Pratt matching: "4 4 7"
    meets "4 7"), else its progress is undone and the token is read as outside. Outside, the token meets the
    first unmet phrase start equal to it, if any.

    Args:
        tokens, followed: `[rows, C]` (`flat_constraints`, one row per hypothesis or candidate).
        met: bool `[rows, C]`, the constraint tokens met; padding counts as met.
        last_met: int32 `[rows]`, the position of the last token met, -1 before any.
        token: int32 `[rows]`, the token the hypothesis is extended by.
        resumable: bool `[rows, C]`, where the phrase of `last_met` may resume (`resume_positions`).

    Returns:
        `(met, last_met)` after the token.
    """
    width = tf.shape(tokens)[1]
    positions = tf.range(width)[None, :]  # [1, C]
    safe_last = tf.maximum(last_met, 0)[:, None]  # [rows, 1]
    inside = (last_met >= 0) & tf.gather(followed, safe_last, batch_dims=1)[:, 0]  # [rows]
    next_position = tf.minimum(safe_last + 1, width - 1)  # [rows, 1]
    continues = inside & tf.equal(tf.gather(tokens, next_position, batch_dims=1)[:, 0], token)  # [rows]
    broken = inside & tf.logical_not(continues)  # [rows]
    # The phrase in progress: from the start before `last_met` to `last_met`.
    starts = phrase_starts(followed)  # [rows, C]
    start_of_last = tf.reduce_max(tf.where(starts & (positions <= safe_last), positions, 0), axis=1)  # [rows]
    in_last_phrase = (positions >= start_of_last[:, None]) & (positions <= safe_last)  # [rows, C]
    resume_at = tf.reduce_max(tf.where(resumable & tf.equal(tokens, token[:, None]), positions, -1), axis=1)
    resumes = broken & (resume_at >= 0)  # [rows]
    opens = starts & tf.logical_not(met) & tf.equal(tokens, token[:, None])  # [rows, C]
    first_open = tf.argmax(tf.cast(opens, tf.int32), axis=1, output_type=tf.int32)  # [rows]
    can_open = tf.logical_not(continues | resumes) & tf.reduce_any(opens, axis=1)  # [rows]: read as outside
    newly_met = tf.where(continues[:, None], tf.equal(positions, next_position), False)  # [rows, C]
    newly_met |= can_open[:, None] & tf.equal(positions, first_open[:, None])
    newly_met |= resumes[:, None] & (positions >= start_of_last[:, None]) & (positions <= resume_at[:, None])
    undone = broken[:, None] & in_last_phrase  # [rows, C]
    new_met = (met & tf.logical_not(undone)) | newly_met
    new_last = tf.where(continues, next_position[:, 0], tf.where(resumes, resume_at, -1))
    return new_met, tf.where(can_open, first_open, tf.where(inside, new_last, last_met))


def allowed_tokens(tokens, followed, met, last_met):
    """bool `[rows, C]`: the constraint tokens that would advance each hypothesis (see `advance`): inside a
    phrase its next token only, outside every unmet phrase start."""
    width = tf.shape(tokens)[1]
    positions = tf.range(width)[None, :]  # [1, C]
    safe_last = tf.maximum(last_met, 0)[:, None]  # [rows, 1]
    inside = (last_met >= 0) & tf.gather(followed, safe_last, batch_dims=1)[:, 0]  # [rows]
    starts = phrase_starts(followed)  # [rows, C]
    is_token = tf.not_equal(tokens, constants.PAD_ID)  # [rows, C]
    outside = starts & tf.logical_not(met) & is_token  # [rows, C]
    return tf.where(inside[:, None], tf.equal(positions, safe_last + 1), outside)


def word_counts(ids, lengths, word_continuations=None):
    """int32 `[...]`: the words of hypotheses (`ids` `[..., max_length]`, `lengths` `[...]`, EOS included and not
    counted): their tokens, or with `word_continuations` (bool `[vocab]`) those that do not continue a word."""
    inside = tf.range(tf.shape(ids)[-1]) < lengths[..., None] - 1  # [..., max_length]
    if word_continuations is not None:
        inside &= tf.logical_not(tf.gather(word_continuations, ids))
    return tf.reduce_sum(tf.cast(inside, tf.int32), axis=-1)


def phrases_met(ids, lengths, constraint_ids, word_continuations=None):
    """bool `[batch, n, phrases]`: whether each hypothesis's tokens (`ids` `[batch, n, max_length]`,
    `lengths` `[batch, n]`) hold each constraint phrase (`[batch, phrases, phrase_len]`, PAD-padded)
    contiguously; an all-PAD phrase counts as met. With `word_continuations` (bool `[vocab]`, the tokens
    that continue the word before them), a phrase must also end a word: the token after it may not be one."""
    constraint_ids = tf.cast(constraint_ids, tf.int32)
    phrase_len = tf.shape(constraint_ids)[2]
    max_length = tf.shape(ids)[2]
    padded = tf.pad(ids, [[0, 0], [0, 0], [0, phrase_len]])  # [batch, n, max_length + phrase_len]
    inside = tf.range(max_length + phrase_len)[None, None, :] < lengths[:, :, None]  # [batch, n, L + P]
    padded = tf.where(inside, padded, -1)  # tokens after EOS never match
    offsets = tf.range(max_length)[:, None] + tf.range(phrase_len)[None, :]  # [max_length, phrase_len]
    windows = tf.gather(padded, offsets, axis=2)  # [batch, n, max_length, phrase_len]
    # windows [batch, n, max_length, phrase_len] vs phrases [batch, 1, 1, phrases, phrase_len]
    is_token = tf.not_equal(constraint_ids, constants.PAD_ID)[:, None, None]  # [batch, 1, 1, phrases, P]
    same = tf.equal(windows[:, :, :, None, :], constraint_ids[:, None, None]) | tf.logical_not(is_token)
    found = tf.reduce_all(same, axis=-1)  # [batch, n, max_length, phrases]: the phrase starts at the position
    if word_continuations is not None:
        phrase_lengths = tf.reduce_sum(tf.cast(is_token, tf.int32), axis=-1)  # [batch, 1, 1, phrases]
        after = tf.range(max_length)[None, None, :, None] + phrase_lengths  # [batch, 1, max_length, phrases]
        after = tf.broadcast_to(after, tf.shape(found))  # [batch, n, max_length, phrases]
        next_ids = tf.gather(padded, tf.minimum(after, max_length + phrase_len - 1), batch_dims=2)  # like found
        continues = tf.gather(word_continuations, tf.maximum(next_ids, 0)) & (next_ids >= 0)
        found &= tf.logical_not(continues)
    return tf.reduce_any(found, axis=2)  # [batch, n, phrases]


class ConstrainedBeamSearch(BeamSearch):
    """`BeamSearch` whose hypotheses must each hold every constraint phrase of their sentence.

    The step's candidates (`_grow_alive`) are `BeamSearch`'s best extensions over the whole beam, each
    alive hypothesis's best token, EOS after each hypothesis that met every constraint, and each hypothesis
    extended by every constraint token that advances it (`allowed_tokens`), a forbidden one too, as a
    prefix's (Sockeye's candidates). Duplicates are dropped, each candidate
    falls in the bank of the constraint tokens it has met, and the banks are striped (the best of each
    bank, most tokens met first, then the second of each, ...) into the order `BeamSearch` keeps its
    `2 * beam` candidates in: the EOS candidates among the first `beam` finish, the first `beam` others
    stay alive. EOS is possible only once every constraint token is met and the hypothesis has as many
    words as the sentence's free translation (its floor: tokens, or with `word_continuations` the tokens that
    do not continue a word, `word_counts`), but at a sentence's last step, where a hypothesis that met them
    all ends whatever its words, and one that did not ends too while the sentence has no finished hypothesis
    and no alive one that met them all: rather unmet than not at all (`phrases_met` tells). Without the floor
    a hypothesis that has just met its constraints may end at once: a forced word the model would not have
    written leaves it in a state where EOS is likely, and the shorter hypothesis wins ("Two girls from
    Trondheim are playing soccer in the park." -> "Deux filles d' Trondheim."). In words, not tokens: a name
    forced in five pieces, or a number in one piece per digit, would meet a floor of tokens with fewer words.

    The search under constraints runs only where it is needed: the batch is first searched freely
    (`free_search`, a `BeamSearch`), and a sentence whose free hypotheses already hold every phrase keeps
    them: no constraints, or constraints the translation meets anyway, change nothing. The other sentences
    alone (their rows of the state, lengths and constraints gathered) are searched under constraints, the
    words of the free pass's best hypothesis their floor, and their results scattered back into the free ones
    (`_scattered`) where the best constrained hypothesis holds every phrase: one that could not fit them in the
    sentence's length bound was cut off there, and the free translation is kept, its phrases reported unmet.
    `constrained_pass` runs the search under constraints alone, on every sentence and without a floor: what a
    test compares with `BeamSearch`.

    With `word_continuations` (bool `[vocab]`: subword pieces that continue the word before them), a phrase
    must end a word: after its last token such a piece is impossible ("Dreyth" is not met by "Dreythme").

    Args: as `BeamSearch` (the step function must take and return a dict state: every model does), and
        `word_continuations`: optional bool `[vocab]`, for a subword vocabulary.
    """

    def __init__(self, symbols_to_logits_fn, beam_size=12, num_hypotheses=1, early_stopping=False,
                 word_continuations=None, **options):
        super().__init__(symbols_to_logits_fn, beam_size, num_hypotheses, drop_finished=False,
                         early_stopping=early_stopping, **options)
        self.word_continuations = word_continuations
        self.free_search = BeamSearch(symbols_to_logits_fn, beam_size, num_hypotheses, early_stopping=early_stopping,
                                      **options)

    def search(self, initial_state, maximum_lengths, constraint_ids=None, prefix_ids=None, num_alternatives=0):
        """`BeamSearch.search` under constraints.

        Args:
            constraint_ids: int `[batch, phrases, phrase_len]`, each sentence's phrases right-padded with
                `PAD_ID` (an all-PAD phrase is none); None: `BeamSearch`.

        Returns:
            `BeamSearch.search`'s dict and `constraints_met` bool `[batch, n, phrases]`: the hypothesis
            holds the phrase (`phrases_met`).
        """
        if constraint_ids is None:
            return super().search(initial_state, maximum_lengths, prefix_ids, num_alternatives)
        if prefix_ids is not None or num_alternatives:
            raise ValueError("a constrained search takes no prefix and offers no alternatives")
        _check_dict_state(initial_state)
        free = self.free_search.search(initial_state, maximum_lengths)
        free["constraints_met"] = phrases_met(free["ids"], free["lengths"], constraint_ids,
                                              self.word_continuations)  # [batch, n, phrases]
        complies = tf.reduce_all(free["constraints_met"], axis=[1, 2])  # [batch]
        unmet = tf.cast(tf.where(tf.logical_not(complies))[:, 0], tf.int32)  # [unmet]: sentences searched again

        def constrained():
            floors = tf.gather(word_counts(free["ids"][:, 0], free["lengths"][:, 0], self.word_continuations), unmet)
            searched = self._constrained_search(initial_state, maximum_lengths, constraint_ids, unmet, floors)
            # A sentence whose best constrained hypothesis still lacks a phrase (they did not fit its length
            # bound) keeps its free result: a hypothesis the search ended unmet at its bound is cut off.
            kept = tf.reduce_all(searched["constraints_met"][:, 0], axis=1)  # [unmet]
            searched = {name: tf.boolean_mask(value, kept) for name, value in searched.items()}
            return _scattered(free, searched, tf.boolean_mask(unmet, kept))

        return tf.cond(tf.size(unmet) > 0, constrained, lambda: dict(free))

    def constrained_pass(self, initial_state, maximum_lengths, constraint_ids):
        """`search` without its free pass: every sentence searched under its constraints by dynamic beam
        allocation, also one whose free hypotheses already hold every phrase (`search` keeps those; the banks,
        sharing the beam, may end elsewhere). The search itself, for the tests that compare it with
        `BeamSearch`: slower than `search`, and the same hypotheses where the free pass keeps none.

        Args and returns: as `search`, `constraint_ids` required.
        """
        _check_dict_state(initial_state)
        sentences = tf.range(tf.shape(constraint_ids)[0])  # [batch]: every sentence
        return self._constrained_search(initial_state, maximum_lengths, constraint_ids, sentences,
                                        tf.zeros_like(sentences))

    def _constrained_search(self, initial_state, maximum_lengths, constraint_ids, sentences, minimum_words):
        """`BeamSearch.search` under the constraints of the batch's `sentences` (int32 `[m]`) only: their rows
        of the state (every entry `[batch, ...]`), of `maximum_lengths` (unless an int) and of `constraint_ids`
        gathered, so that the sentences the free search satisfied cost nothing; no hypothesis of a sentence
        ends with fewer words than its `minimum_words` (int32 `[m]`) before its last step. Returns its dict
        `[m, ...]` with `constraints_met`."""
        rows = lambda value: tf.gather(value, sentences)  # noqa: E731  [m, ...]
        constraint_ids = rows(constraint_ids)  # [m, phrases, phrase_len]
        tokens, followed = flat_constraints(constraint_ids)  # [m, C]
        state = dict(tf.nest.map_structure(rows, initial_state), **{
            TOKENS: tokens, FOLLOWED: followed, RESTARTS: restart_table(constraint_ids),
            MINIMUM_WORDS: tf.cast(minimum_words, tf.int32), WORDS: tf.zeros_like(sentences),
            MET: tf.equal(tokens, constants.PAD_ID), LAST_MET: tf.fill([tf.shape(tokens)[0]], -1),
        })
        lengths = maximum_lengths if isinstance(maximum_lengths, int) else rows(maximum_lengths)  # int or [m]
        result = BeamSearch.search(self, state, lengths)
        result["constraints_met"] = phrases_met(result["ids"], result["lengths"], constraint_ids,
                                                self.word_continuations)  # [m, n, phrases]
        return result

    def _grow_alive(self, loop_state, active, maximum_lengths, prefix=None, first=False):
        """`BeamSearch._grow_alive`'s `2 * beam` candidates, chosen by dynamic beam allocation."""
        state = dict(loop_state["state"], **loop_state["fixed"]) if loop_state["fixed"] else loop_state["state"]
        ids = loop_state["alive_ids"]  # [batch, beam]
        rows = tf.reshape(ids[:, :1] if first else ids, [-1])  # [batch * (1 or beam)]
        model_state = {name: value for name, value in state.items() if name not in _OWN_ENTRIES}
        logits, new_state, alignment = self.symbols_to_logits_fn(rows, loop_state["step"], model_state)
        fixed = self._first_fixed(state, new_state) if first else loop_state["fixed"]
        progress = self._progress(state, fixed, rows, first)  # (met, last_met) [batch * (1 or beam), ...]
        # Whether the last token ended a phrase (a word must end there): it newly met a phrase's last token.
        ended = self._ended_phrase(state, fixed, progress[0], first)  # [batch * (1 or beam)]
        words = state[WORDS] if first else state[WORDS] + self._is_word(rows)  # [batch * (1 or beam)]
        logits = tf.cast(logits, tf.float32)  # [batch * (1 or beam), vocab]
        if first:
            logits, new_state, alignment, progress, ended, words = repeat_rows(
                (logits, new_state, alignment, progress, ended, words), self.beam_size)
        new_state = dict(new_state, **{MET: progress[0], LAST_MET: progress[1], WORDS: words})
        sentences = tf.range(tf.shape(words)[0]) // self.beam_size  # [batch * beam]
        long_enough = words >= tf.gather(fixed[MINIMUM_WORDS], sentences)  # [batch * beam]
        candidates = self._candidates(loop_state, logits, fixed, progress, ended, long_enough, maximum_lengths)
        best_logits = split_leading_dimension(logits, active.size, self.beam_size)[:, 0]
        return candidates, new_state, fixed, alignment, best_logits

    def _first_fixed(self, state, new_state):
        """The fixed entries the first step tells (`search_helpers.fixed_entries`, the constraint progress and
        words aside), with the constraint tokens repeated to every hypothesis (`HYPOTHESIS_TOKENS`,
        `HYPOTHESIS_FOLLOWED` `[batch * beam, C]`): they never change, so they are repeated once per
        search, not at every step."""
        fixed = {name: value for name, value in fixed_entries(state, new_state).items()
                 if name not in (MET, LAST_MET, WORDS)}
        tokens, followed = repeat_rows((fixed[TOKENS], fixed[FOLLOWED]), self.beam_size)  # [batch * beam, C]
        return dict(fixed, **{HYPOTHESIS_TOKENS: tokens, HYPOTHESIS_FOLLOWED: followed})

    def _new_alive(self, candidates, new_state):
        """The first `beam` candidates that do not end with EOS, in the striped order (`_candidates`)."""
        count = tf.shape(candidates["ids"])[1]
        order = tf.range(count)[None, :] + tf.where(candidates["is_eos"], count, 0)  # [batch, 2 * beam]
        _, positions = tf.math.top_k(-order, k=self.beam_size)  # [batch, beam]
        return self._alive_at(candidates, positions, new_state)

    def _is_done(self, loop_state, candidates, alive, finished, maximum_lengths):
        """`BeamSearch._is_done`, bounded by the best alive hypothesis wherever the striping put it."""
        best_alive = dict(alive, log_probs=tf.reduce_max(alive["log_probs"], axis=1, keepdims=True))
        return super()._is_done(loop_state, candidates, best_alive, finished, maximum_lengths)

    def _is_word(self, ids):
        """int32 like `ids`: 1 where the token is a word of its own (`word_counts`' rule), else 0."""
        if self.word_continuations is None:
            return tf.ones_like(ids)
        return tf.cast(tf.logical_not(tf.gather(self.word_continuations, ids)), tf.int32)

    def _ended_phrase(self, state, fixed, met, first):
        """bool `[rows]`: the hypothesis's last token met the last token of a phrase (`met` after it)."""
        if first:
            return tf.zeros(tf.shape(state[LAST_MET]), tf.bool)
        tokens, followed = fixed[HYPOTHESIS_TOKENS], fixed[HYPOTHESIS_FOLLOWED]  # [batch * beam, C]
        newly = met & tf.logical_not(state[MET]) & tf.not_equal(tokens, constants.PAD_ID)  # [batch * beam, C]
        return tf.reduce_any(newly & tf.logical_not(followed), axis=1)

    def _progress(self, state, fixed, rows, first):
        """`(met, last_met)` of each alive hypothesis with its last token (`rows`) applied; BOS applies
        nothing."""
        if first:
            return state[MET], state[LAST_MET]
        tokens, followed = fixed[HYPOTHESIS_TOKENS], fixed[HYPOTHESIS_FOLLOWED]  # [batch * beam, C]
        sentences = tf.range(tf.shape(tokens)[0]) // self.beam_size  # [batch * beam]
        resumable = resume_positions(fixed[RESTARTS], sentences, state[LAST_MET], tf.shape(tokens)[1])
        return advance(tokens, followed, state[MET], state[LAST_MET], rows, resumable)

    def _candidates(self, loop_state, logits, fixed, progress, ended, long_enough, maximum_lengths):
        """The `2 * beam` candidates in bank-striped order: dict of `log_probs`, `parents`, `ids`,
        `is_eos` `[batch, 2 * beam]` and `length`. `ended`, `long_enough`: bool `[batch * beam]`, whether each
        hypothesis's last token ended a phrase, and whether it has its sentence's floor of words."""
        beam = self.beam_size
        batch_size = tf.shape(loop_state["alive_ids"])[0]
        met = tf.reshape(progress[0], [batch_size, beam, -1])  # [batch, beam, C]
        all_met = tf.reduce_all(met, axis=2)  # [batch, beam]
        is_last_step = loop_state["step"] + 1 >= maximum_lengths  # [batch]
        # EOS once every constraint is met and the floor of words reached (the class's docstring says why).
        complete = all_met & (tf.reshape(long_enough, [batch_size, beam]) | is_last_step[:, None])  # [batch, beam]
        alive_log_probs = loop_state["alive_log_probs"]  # [batch, beam]
        # At most one EOS per hypothesis can be dropped for an unmet one: 3 * beam keeps 2 * beam others.
        free = top_candidates(logits, alive_log_probs, 3 * beam, is_last_step, self.forbidden_ids, self.eos_id)
        # At the last step a sentence with nothing finished, and no alive hypothesis that met every
        # constraint, ends its others unmet rather than not at all.
        nothing_met = (loop_state["finished_log_probs"][:, 0] <= IMPOSSIBLE) & tf.logical_not(
            tf.reduce_any(all_met & (alive_log_probs > IMPOSSIBLE), axis=1))  # [batch]
        may_end = complete | (is_last_step & nothing_met)[:, None]  # [batch, beam]
        free_ends = tf.equal(free[2], self.eos_id) & tf.logical_not(tf.gather(may_end, free[1], batch_dims=1))
        # ...and those that are impossible for the same reasons as the other candidates' (below):
        ended = tf.reshape(ended, [batch_size, beam])  # [batch, beam]
        free_ends |= self._glued(ended, free[1], free[2])
        free = (tf.where(free_ends, LARGE_NEGATIVE, free[0]),) + free[1:]  # [batch, 3 * beam] each
        log_probs = tf.nn.log_softmax(logits)  # [batch * beam, vocab]
        if self.word_continuations is not None:  # no piece may glue itself to a phrase just ended
            glued = ended[:, :, None] & self.word_continuations[None, None, :]  # [batch, beam, vocab]
            log_probs = tf.where(tf.reshape(glued, tf.shape(log_probs)), LARGE_NEGATIVE, log_probs)
        extra = self._constrained_candidates(log_probs, alive_log_probs, fixed, progress, complete, is_last_step)
        merged = [tf.concat([free_value, extra_value], axis=1) for free_value, extra_value in zip(free, extra)]
        log_probs, parents, ids = merged  # [batch, M]
        tokens, followed = fixed[TOKENS], fixed[FOLLOWED]  # [batch, C]
        banks = self._banks(tokens, followed, fixed[RESTARTS], progress, parents, ids)  # [batch, M]
        keys = parents * tf.shape(logits)[1] + ids  # [batch, M]: a candidate's hypothesis and token
        order = _striped_order(log_probs, keys, banks, 2 * beam)  # [batch, 2 * beam]
        log_probs, parents, ids = (tf.gather(value, order, batch_dims=1) for value in (log_probs, parents, ids))
        return dict(log_probs=log_probs, parents=parents, ids=ids, is_eos=tf.equal(ids, self.eos_id),
                    length=loop_state["step"] + 1)

    def _glued(self, ended, parents, ids):
        """bool `[batch, M]`: candidates (`parents`, `ids`) that glue a piece to a phrase their hypothesis just
        ended (`ended` `[batch, beam]`); none without `word_continuations`."""
        if self.word_continuations is None:
            return tf.zeros(tf.shape(ids), tf.bool)
        return tf.gather(ended, parents, batch_dims=1) & tf.gather(self.word_continuations, ids)

    def _constrained_candidates(self, log_probs, alive_log_probs, fixed, progress, complete, is_last_step):
        """Each alive hypothesis extended by its best token, by EOS once it is `complete` (bool `[batch, beam]`:
        every constraint met, the floor of words reached), and by every constraint token that advances it
        (Sockeye's candidates; none for a sentence without constraints): `(log_probs, parents, ids)`
        `[batch, beam * (2 + C)]`."""
        beam = self.beam_size
        batch_size = tf.shape(alive_log_probs)[0]
        vocab_log_probs = tf.reshape(log_probs, [batch_size, beam, -1])  # [batch, beam, vocab]
        tokens, followed = fixed[HYPOTHESIS_TOKENS], fixed[HYPOTHESIS_FOLLOWED]  # [batch * beam, C]
        allowed = tf.reshape(allowed_tokens(tokens, followed, *progress), [batch_size, beam, -1])  # [batch, beam, C]
        constraint_ids = tf.reshape(tokens, [batch_size, beam, -1])  # [batch, beam, C]
        forced = tf.gather(vocab_log_probs, constraint_ids, batch_dims=2)  # [batch, beam, C]
        forced = tf.where(allowed & tf.logical_not(is_last_step)[:, None, None], forced, LARGE_NEGATIVE)
        restricted = self._restricted(vocab_log_probs, complete, is_last_step)  # [batch, beam, vocab]
        best, best_ids = tf.math.top_k(restricted, k=1)  # [batch, beam, 1]
        has_constraints = tf.reduce_any(tf.not_equal(fixed[TOKENS], constants.PAD_ID), axis=1)  # [batch]
        ending = restricted[:, :, self.eos_id : self.eos_id + 1]  # [batch, beam, 1]: possible once all are met
        best, ending = (tf.where(has_constraints[:, None, None], value, LARGE_NEGATIVE) for value in (best, ending))
        values = tf.concat([best, ending, forced], axis=2) + alive_log_probs[:, :, None]  # [batch, beam, 2 + C]
        ids = tf.concat([best_ids, tf.fill(tf.shape(best_ids), self.eos_id), constraint_ids], axis=2)
        parents = tf.broadcast_to(tf.range(beam)[None, :, None], tf.shape(ids))
        flat = lambda t: tf.reshape(t, [batch_size, -1])  # noqa: E731  [batch, beam * (2 + C)]
        return flat(tf.maximum(values, LARGE_NEGATIVE)), flat(parents), flat(ids)

    def _restricted(self, vocab_log_probs, complete, is_last_step):
        """`[batch, beam, vocab]` with every search's impossible tokens (`search_helpers.impossible_tokens`:
        the forbidden ones, and every token but EOS at the last step) and this search's own, EOS before the
        hypothesis is `complete` (`_constrained_candidates`), impossible."""
        vocab = tf.range(tf.shape(vocab_log_probs)[2])[None, None, :]  # [1, 1, vocab]
        impossible = impossible_tokens(vocab, is_last_step, self.forbidden_ids, self.eos_id)  # [batch, 1, vocab]
        impossible |= tf.equal(vocab, self.eos_id) & tf.logical_not(complete)[:, :, None]  # [batch, beam, vocab]
        return tf.where(impossible, LARGE_NEGATIVE, vocab_log_probs)

    def _banks(self, tokens, followed, restarts, progress, parents, ids):
        """int32 `[batch, M]`: the constraint tokens each candidate (`parents`, `ids` `[batch, M]`) has met."""
        beam = self.beam_size
        batch_size, count = tf.shape(parents)[0], tf.shape(parents)[1]
        width = tf.shape(tokens)[1]
        met, last_met = (tf.reshape(value, [batch_size, beam, -1]) for value in progress)  # [batch, beam, C or 1]
        parent_met = tf.reshape(tf.gather(met, parents, batch_dims=1), [-1, width])  # [batch * M, C]
        parent_last = tf.reshape(tf.gather(last_met[:, :, 0], parents, batch_dims=1), [-1])  # [batch * M]
        candidate_tokens, candidate_followed = (tf.repeat(value, count, axis=0) for value in (tokens, followed))
        resumable = resume_positions(restarts, tf.repeat(tf.range(batch_size), count), parent_last, width)
        new_met, _ = advance(candidate_tokens, candidate_followed, parent_met, parent_last, tf.reshape(ids, [-1]),
                             resumable)
        real = tf.not_equal(candidate_tokens, constants.PAD_ID)  # [batch * M, C]
        banks = tf.reduce_sum(tf.cast(new_met & real, tf.int32), axis=1)  # [batch * M]
        return tf.reshape(banks, [batch_size, count])


def _check_dict_state(initial_state):
    """Raises ValueError unless `initial_state` is a dict: the search adds its own entries to it."""
    if not isinstance(initial_state, dict):
        raise ValueError("a constrained search needs a dict state")


def _striped_order(log_probs, keys, banks, k):
    """int32 `[batch, k]`: positions of the candidates kept, in bank-striped order (fairseq's "stripes").

    A candidate's rank is its place in its bank by log-probability (ties: the earlier position first);
    the order is by rank, then by bank, most tokens met first. A candidate equal to an earlier one (same
    `keys`: hypothesis and token) that is possible, or impossible itself, comes after all others. With one
    bank (no constraints) this is the order of the log-probabilities, and `top_k`'s when the candidates
    came from it.
    """
    count = tf.shape(log_probs)[1]
    positions = tf.range(count)
    earlier = positions[None, :, None] > positions[None, None, :]  # [1, M, M]: j before i
    possible = log_probs > IMPOSSIBLE  # [batch, M]
    same_key = tf.equal(keys[:, :, None], keys[:, None, :]) & possible[:, None, :]  # [batch, M, M]
    valid = possible & tf.logical_not(tf.reduce_any(same_key & earlier, axis=2))  # [batch, M]: not a duplicate
    same_bank = tf.equal(banks[:, :, None], banks[:, None, :]) & valid[:, None, :]  # [batch, M, M]
    better = (log_probs[:, None, :] > log_probs[:, :, None]) | (
        tf.equal(log_probs[:, None, :], log_probs[:, :, None]) & earlier
    )  # [batch, M, M]: j better than i
    rank = tf.reduce_sum(tf.cast(same_bank & better, tf.int32), axis=2)  # [batch, M]
    most = tf.reduce_max(banks, axis=1, keepdims=True) + 1  # [batch, 1]
    key = rank * most + (most - 1 - banks)  # [batch, M]
    key = tf.where(valid, key, count * most * 2 + positions[None, :])
    return tf.math.top_k(-key, k=k)[1]


def _scattered(free, constrained, sentences):
    """The results `free` (`[batch, ...]`) with the rows of `sentences` (int32 `[m]`) replaced by those of
    `constrained` (`[m, ...]`, in the order of `sentences`): `search`'s dicts, whose step dimension (the third of
    the `_STEP_FIELDS`) may differ (each pass is as long as its longest maximum length), padded to the longer."""
    steps = tf.maximum(tf.shape(free["ids"])[2], tf.shape(constrained["ids"])[2])

    def padded(value):
        padding = [[0, 0], [0, 0], [0, steps - tf.shape(value)[2]]] + [[0, 0]] * (value.shape.rank - 3)
        return tf.pad(value, padding)  # PAD_ID, and zeros

    scattered = {}
    for name, value in free.items():
        update = constrained[name]  # [m, ...]
        if name in _STEP_FIELDS:
            value, update = padded(value), padded(update)
        if 0 in value.shape[1:]:  # no entries (RNNencdec's alignments): TensorScatterUpdate refuses rows of nothing
            scattered[name] = value
            continue
        scattered[name] = tf.tensor_scatter_nd_update(value, sentences[:, None], update)  # [batch, ...]
    return scattered
