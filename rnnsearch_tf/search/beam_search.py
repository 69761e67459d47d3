"""Batched beam search over any recurrent step function (Bahdanau et al. 2014, Section 5.2.2).

After tensorflow/models `official/nlp/modeling/ops/beam_search.py` (alive and finished hypotheses kept
apart, one `tf.while_loop`) and OpenNMT-tf `opennmt/utils/decoding.py` (search apart from the model,
back-pointers resolved once at the end). What the strategies share is in `search_helpers`; the choice of
candidates is `top_candidates`, the sentences still computed `ActiveSentences`, each in its own file.

Performance: the `batch * beam` hypotheses are flattened into the leading dimension of one
`symbols_to_logits_fn` call per step; the `2 * beam` best extensions are found without normalising
or sorting the `beam * vocab` candidates (`top_candidates`: one max and one log-sum-exp pass over the
logits, then a top-k over chunk maxima); the loop carries only the last token of each hypothesis and the
model state (its changing entries reordered with one `tf.gather` per entry per step, its fixed entries
kept one row per sentence, see `SearchStrategy`); the tokens, back-pointers, alignments (the model's
per-step outputs) and each alive hypothesis's log-probability go into `tf.TensorArray`s of the maximum
length and whole hypotheses are assembled once, after the loop, by following the back-pointers (a
token's log-probability is its hypothesis's log-probability less its parent's, so the confidence of
each word costs no second pass of the model). The first step, before the loop, computes one
hypothesis per sentence (the `beam` copies of BOS share it) and tells the fixed entries from the
changing ones. The loop stops as soon as every sentence is done, and once a quarter of the sentences
still computed are done, the step function runs on the others only (`drop_finished`; the bookkeeping
stays batch-wide). With `drop_finished=False` and an int maximum length every shape is static, and the
search compiles with XLA (`tf.function(jit_compile=True)`).
"""

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.active_sentences import ActiveSentences
from rnnsearch_tf.search.search_helpers import (
    IMPOSSIBLE,
    LARGE_NEGATIVE,
    broadcast_mask,
    fixed_entries,
    next_word_alternatives,
    no_alternatives,
    repeat_rows,
    split_leading_dimension,
    updated_alternatives,
)
from rnnsearch_tf.search.search_strategy import SearchStrategy
from rnnsearch_tf.search.top_candidates import top_candidates


class BeamSearch(SearchStrategy):
    """Batched beam search with finished hypotheses kept apart.

    At every step each alive hypothesis is extended by every token; of the `batch, beam * vocab`
    candidates the `2 * beam` most probable are kept (`_grow_alive`). Those among the first `beam` that
    end with EOS join the sentence's finished hypotheses, of which the `num_hypotheses` best by score
    are kept (`_new_finished`); the `beam` best that do not end with EOS stay alive (`_new_alive`). A
    finished hypothesis is never extended. A sentence is done (`_is_done`) when its
    `num_hypotheses`-th finished score cannot be beaten by any alive hypothesis (alive
    log-probabilities only fall, and every length penalty grows with length, so an alive hypothesis
    scores at most `log_prob / length_penalty(maximum_length)`), when nothing is alive, or at its
    maximum length, where EOS is the only possible token (as in fairseq), so every returned hypothesis
    ends with EOS. With `beam_size=1` and no length normalisation this is exactly greedy search.
    Inside a forced prefix (`prefix_ids`) a sentence has one alive hypothesis, extended by the forced
    token only (`top_candidates(forced_ids=...)`); the beam opens at its first free position.
    With `early_stopping`, a sentence is also done once its best candidate of a step ends with EOS and
    `num_hypotheses` hypotheses have finished (OpenNMT-py's rule): fewer steps, where the rule above
    would go on looking for a longer hypothesis with a better normalised score.

    Args:
        symbols_to_logits_fn: as `SearchStrategy`, with `beam_size` hypotheses per sentence.
        beam_size: hypotheses kept alive per sentence (12 in Bahdanau et al. 2014).
        num_hypotheses: finished hypotheses returned per sentence (n-best), at most `beam_size`.
        drop_finished: once a quarter of the sentences still computed are done, the step function
            runs on the others only (their state and fixed state gathered into a smaller batch); the
            results are the same. XLA needs static shapes: pass False under `jit_compile`.
        early_stopping: also stop a sentence once its best candidate of a step ends with EOS.
        **options: `length_normalization`, `length_penalty_alpha`, `forbidden_ids`, `eos_id`, `bos_id`
            of `SearchStrategy`.

    Call arguments and returns: as `SearchStrategy`, `n = num_hypotheses`. A sentence with fewer than
    `num_hypotheses` possible hypotheses (tiny vocabularies) gets empty ones: length 0, score and
    log-probability `-inf`.

    Example:
    >>> search = BeamSearch(model.symbols_to_logits_fn, beam_size=12, forbidden_ids=(UNK_ID,))
    >>> result = search.search(model.encode(source_ids), 2 * source_lengths + 10)
    >>> best_ids = result["ids"][:, 0]  # [batch, max_length]
    """

    def __init__(self, symbols_to_logits_fn, beam_size=12, num_hypotheses=1, drop_finished=True, early_stopping=False,
                 **options):
        if beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {beam_size}")
        if not 1 <= num_hypotheses <= beam_size:
            raise ValueError(
                f"num_hypotheses must be between 1 and beam_size={beam_size}, got {num_hypotheses}"
            )
        super().__init__(symbols_to_logits_fn, **options)
        self.beam_size = beam_size
        self.num_hypotheses = num_hypotheses
        self.drop_finished = drop_finished
        self.early_stopping = early_stopping

    def search(self, initial_state, maximum_lengths, prefix_ids=None, num_alternatives=0):
        """The loop of Model Garden's `SequenceBeamSearch`: `_initial_loop_state`, then `_search_step` while
        `_continue_search`, then `_result`. A step has four named parts, `_grow_alive`, `_new_alive`,
        `_new_finished` and `_is_done`, then `_drop_finished` (and `_new_alternatives` when asked for).
        The first step runs before the loop: its state has one row per sentence, the loop's `beam` rows
        per sentence for the changing entries and one for the fixed ones, which the first step tells."""
        batch_size, maximum_lengths, length_bound, prefix = self.prepare(
            initial_state, maximum_lengths, prefix_ids, num_alternatives
        )
        loop_state = self._initial_loop_state(batch_size, length_bound, initial_state, num_alternatives)

        def search_step(loop_state, first=False):
            return [self._search_step(loop_state, batch_size, maximum_lengths, prefix, num_alternatives, first)]

        after_first_step = search_step(loop_state, first=True)
        final = tf.while_loop(
            lambda loop_state: self._continue_search(loop_state, length_bound),
            search_step,
            after_first_step,
            maximum_iterations=length_bound - 1,
            shape_invariants=self._shape_invariants(after_first_step[0]),
        )[0]
        return self._result(final)

    def _initial_loop_state(self, batch_size, length_bound, state, num_alternatives=0):
        """The values the loop carries, before the first step.

        The state has one row per sentence until the first step, which extends only the first copy of
        its BOS hypothesis and splits off the fixed entries (`_grow_alive`); every later step extends
        `beam` hypotheses per sentence. The fixed state (one row per sentence, empty until then) is
        carried by the loop, not closed over by the step function, so that dropping finished sentences
        can shrink it with the state: the `active` rows.
        With `num_alternatives` the loop also carries `alternatives` (`_new_alternatives`).
        """
        beam, best = self.beam_size, self.num_hypotheses
        # Only the first copy of each sentence is alive at the start, so the first step does not pick the
        # same token `beam` times.
        alive_log_probs = tf.tile(
            tf.concat([[0.0], tf.fill([beam - 1], LARGE_NEGATIVE)], axis=0)[None, :], [batch_size, 1]
        )  # [batch, beam]
        # Every key of the loop state, with its shape (`n` = num_hypotheses, `active` = sentences still computed):
        loop_state = dict(
            step=tf.constant(0),  # int32 []: the step about to run (tokens written so far)
            alive_ids=tf.fill([batch_size, beam], self.bos_id),  # int32 [batch, beam]: each alive hypothesis's last token
            alive_log_probs=alive_log_probs,  # float32 [batch, beam]: their log p(y | x)
            active=tf.range(batch_size),  # int32 [active]: the sentences the step function still runs on
            state=state,  # model state, changing entries [active * beam, ...] ([batch, ...] before the first step)
            fixed={},  # model state, fixed entries [active, ...] (empty before the first step)
            finished_log_probs=tf.fill([batch_size, best], LARGE_NEGATIVE),  # float32 [batch, n]
            finished_scores=tf.fill([batch_size, best], LARGE_NEGATIVE),  # float32 [batch, n]: length-normalised
            finished_lengths=tf.zeros([batch_size, best], tf.int32),  # int32 [batch, n], EOS included
            finished_parents=tf.zeros([batch_size, best], tf.int32),  # int32 [batch, n]: alive slot it ended from
            done=tf.zeros([batch_size], tf.bool),  # bool [batch]: no alive hypothesis can beat the finished ones
            tokens=tf.TensorArray(tf.int32, size=length_bound),  # per step int32 [batch, beam]: the tokens chosen
            parents=tf.TensorArray(tf.int32, size=length_bound),  # per step int32 [batch, beam]: back-pointers
            alignments=tf.TensorArray(tf.float32, size=length_bound),  # per step float32 [batch, beam, src_len]
            path_log_probs=tf.TensorArray(tf.float32, size=length_bound),  # per step float32 [batch, beam]: log p
            # of each alive hypothesis after it (`_backtrack` turns them into each token's log-probability)
        )
        if num_alternatives:
            loop_state["alternatives"] = no_alternatives(batch_size, num_alternatives)  # [batch, k] twice
        return loop_state

    @staticmethod
    def _continue_search(loop_state, length_bound):
        """Whether to run another step: below the length bound and some sentence not done."""
        return tf.logical_and(loop_state["step"] < length_bound, tf.logical_not(tf.reduce_all(loop_state["done"])))

    def _shape_invariants(self, loop_state):
        """With `drop_finished` the rows computed (`active`, `state`, `fixed`) may shrink from step to
        step, and the batch-wide values, scattered back from them, lose a static batch size: every
        leading dimension is left open (None: the step and the `tf.TensorArray`s keep their own shape)."""
        if not self.drop_finished:
            return None

        def open_rows(value):
            if isinstance(value, tf.TensorArray) or value.shape.rank == 0:
                return None
            return tf.TensorShape([None]).concatenate(value.shape[1:])

        return [tf.nest.map_structure(open_rows, loop_state)]

    def _search_step(self, loop_state, batch_size, maximum_lengths, prefix, num_alternatives, first=False):
        """One step of the loop: `loop_state` after extending the alive hypotheses by one token."""
        active = ActiveSentences(loop_state["active"], batch_size, every_sentence=not self.drop_finished)
        candidates, new_state, fixed, alignment, best_logits = self._grow_alive(
            loop_state, active, maximum_lengths, prefix, first
        )
        alive = self._new_alive(candidates, new_state)
        candidates, alive_everywhere = active.scatter_candidates(candidates, alive)
        finished = self._new_finished(candidates, loop_state)
        done = self._is_done(loop_state, candidates, alive_everywhere, finished, maximum_lengths)
        step = loop_state["step"]
        next_active, next_state, next_fixed = self._drop_finished(active, done, alive["state"], fixed)
        new_loop_state = dict(
            step=step + 1,
            alive_ids=alive_everywhere["ids"],
            alive_log_probs=tf.where(done[:, None], LARGE_NEGATIVE, alive_everywhere["log_probs"]),
            active=next_active,
            state=next_state,
            fixed=next_fixed,
            **{f"finished_{name}": value for name, value in finished.items()},
            done=done,
            tokens=loop_state["tokens"].write(step, alive_everywhere["ids"]),
            parents=loop_state["parents"].write(step, alive_everywhere["parents"]),
            alignments=loop_state["alignments"].write(step, active.scatter(
                split_leading_dimension(tf.cast(alignment, tf.float32), active.size, self.beam_size), 0.0
            )),  # [batch, beam, ...]
            path_log_probs=loop_state["path_log_probs"].write(step, alive_everywhere["log_probs"]),
        )
        if num_alternatives:
            new_loop_state["alternatives"] = self._new_alternatives(
                loop_state, active, best_logits, prefix, num_alternatives
            )
        return new_loop_state

    def _new_alternatives(self, loop_state, active, best_logits, prefix, num_alternatives):
        """The alternatives with those of the sentences at their first free position: the
        `num_alternatives` most probable next tokens of their best alive hypothesis (inside a prefix, the
        only one), `(log_probs, ids)` `[batch, num_alternatives]`."""

        def computed():
            log_probs, ids = next_word_alternatives(best_logits, num_alternatives, self.forbidden_ids)  # [active, k]
            return active.scatter(log_probs, float("-inf")), active.scatter(ids, constants.PAD_ID)  # [batch, k]

        at_first_free = prefix.is_first_free(loop_state["step"]) & tf.logical_not(loop_state["done"])  # [batch]
        return updated_alternatives(loop_state["alternatives"], at_first_free, computed)

    def _drop_finished(self, active, done, state, fixed):
        """`(active, state, fixed)` of the next step: the sentences that are not done, once a quarter of
        those computed are (each gather copies the fixed state, so not at every finished sentence)."""
        if not self.drop_finished:
            return active.indices, state, fixed
        still = tf.logical_not(tf.gather(done, active.indices))  # [active]
        remaining = tf.reduce_sum(tf.cast(still, tf.int32))

        def gathered():
            kept = tf.cast(tf.where(still)[:, 0], tf.int32)  # positions among the active sentences
            rows = tf.reshape(kept[:, None] * self.beam_size + tf.range(self.beam_size)[None, :], [-1])
            take = lambda t: tf.gather(t, rows)  # noqa: E731  [remaining * beam, ...]
            take_sentences = lambda t: tf.gather(t, kept)  # noqa: E731  [remaining, ...]
            return (tf.gather(active.indices, kept), tf.nest.map_structure(take, state),
                    tf.nest.map_structure(take_sentences, fixed))

        return tf.cond(
            tf.logical_and(remaining > 0, 4 * remaining <= 3 * active.size),
            gathered,
            lambda: (active.indices, state, fixed),
        )

    def _grow_alive(self, loop_state, active, maximum_lengths, prefix=None, first=False):
        """The `2 * beam` best one-token extensions of the alive hypotheses of the active sentences.

        At the `first` step every copy of a sentence holds BOS and the same state (`[batch, ...]`, not yet
        repeated), and only the first copy is alive: the step function computes that one (a fifth of the
        rows at beam 5), and its logits, state and alignment stand for all `beam` copies; the entries of
        the state it leaves out of its new state are the fixed ones (`search_helpers.fixed_entries`). A
        sentence inside its `prefix` (a `TargetPrefix`) is extended by its forced token only.

        Returns:
            `(candidates, new_state, fixed, alignment, best_logits)`: dict of `log_probs`, `parents`,
            `ids`, `is_eos`, each `[active, 2 * beam]`, best first; the changing state after the step of
            every alive hypothesis `[active * beam, ...]`; the fixed state `[active, ...]`; the model's
            per-step output (α for RNNsearch); the logits of each active sentence's best alive hypothesis
            `[active, vocab]`.
        """
        state = dict(loop_state["state"], **loop_state["fixed"]) if loop_state["fixed"] else loop_state["state"]
        ids = active.gather(loop_state["alive_ids"])  # [active, beam]
        logits, new_state, alignment = self.symbols_to_logits_fn(
            tf.reshape(ids[:, :1] if first else ids, [-1]), loop_state["step"], state  # [active * (1 or beam)]
        )
        fixed = fixed_entries(state, new_state) if first else loop_state["fixed"]
        logits = tf.cast(logits, tf.float32)  # [active * (1 or beam), vocab]
        best_logits = logits if first else split_leading_dimension(logits, active.size, self.beam_size)[:, 0]
        if first:
            logits, new_state, alignment = repeat_rows((logits, new_state, alignment), self.beam_size)
        forced_ids = None if prefix is None else active.gather(prefix.forced_ids(loop_state["step"]))  # [active]
        log_probs, parents, ids = top_candidates(
            logits, active.gather(loop_state["alive_log_probs"]), 2 * self.beam_size,
            active.gather(loop_state["step"] + 1 >= maximum_lengths), self.forbidden_ids, self.eos_id, forced_ids,
        )  # [active, 2 * beam]
        candidates = dict(log_probs=log_probs, parents=parents, ids=ids, is_eos=tf.equal(ids, self.eos_id),
                          length=loop_state["step"] + 1)
        return candidates, new_state, fixed, alignment, best_logits

    def _new_alive(self, candidates, new_state):
        """The `beam` best candidates that do not end with EOS (at most `beam` do: one per hypothesis),
        with their state: dict of `log_probs`, `ids`, `parents` `[batch, beam]` and `state`."""
        not_ended = tf.where(candidates["is_eos"], LARGE_NEGATIVE, candidates["log_probs"])  # [batch, 2 * beam]
        _, positions = tf.math.top_k(not_ended, k=self.beam_size)  # [batch, beam]
        return self._alive_at(candidates, positions, new_state)

    def _alive_at(self, candidates, positions, new_state):
        """The candidates at `positions` `[batch, beam]` as the new alive hypotheses (`_new_alive`)."""
        beam = self.beam_size
        not_ended = tf.where(candidates["is_eos"], LARGE_NEGATIVE, candidates["log_probs"])  # [batch, 2 * beam]
        log_probs = tf.gather(not_ended, positions, batch_dims=1)  # [batch, beam]
        parents = tf.gather(candidates["parents"], positions, batch_dims=1)  # [batch, beam]
        beam_offsets = tf.range(tf.shape(parents)[0])[:, None] * beam  # [batch, 1]
        flat_parents = tf.reshape(parents + beam_offsets, [-1])  # [batch * beam]
        return dict(
            log_probs=log_probs,
            ids=tf.gather(candidates["ids"], positions, batch_dims=1),
            parents=parents,
            state=tf.nest.map_structure(lambda t: tf.gather(t, flat_parents), new_state),
        )

    def _new_finished(self, candidates, loop_state):
        """EOS candidates inside the beam merged with the finished hypotheses; the `num_hypotheses` best by
        score kept: dict of `log_probs`, `scores`, `lengths`, `parents` `[batch, num_hypotheses]`."""
        beam, length = self.beam_size, candidates["length"]
        finishing = (
            candidates["is_eos"]
            & (tf.range(2 * beam) < beam)[None, :]
            & (candidates["log_probs"] > IMPOSSIBLE)
            & tf.logical_not(loop_state["done"])[:, None]
        )  # [batch, 2 * beam]
        candidate_scores = tf.where(finishing, candidates["log_probs"] / self.penalty(length), LARGE_NEGATIVE)
        merged_scores = tf.concat([loop_state["finished_scores"], candidate_scores], axis=1)  # [batch, best + 2 * beam]
        scores, merged_positions = tf.math.top_k(merged_scores, k=self.num_hypotheses)  # [batch, best]

        def merge(finished, new):
            merged = tf.concat([finished, new], axis=1)  # [batch, best + 2 * beam]
            return tf.gather(merged, merged_positions, batch_dims=1)  # [batch, best]

        return dict(
            log_probs=merge(
                loop_state["finished_log_probs"], tf.where(finishing, candidates["log_probs"], LARGE_NEGATIVE)
            ),
            scores=scores,
            lengths=merge(loop_state["finished_lengths"], tf.fill(tf.shape(candidates["ids"]), length)),
            parents=merge(loop_state["finished_parents"], candidates["parents"]),
        )

    def _is_done(self, loop_state, candidates, alive, finished, maximum_lengths):
        """bool `[batch]`: at the maximum length, nothing alive, or no alive hypothesis can beat the
        worst of the `num_hypotheses` finished ones (with `early_stopping`: or the best candidate ended)."""
        best_alive_bound = alive["log_probs"][:, 0] / self.penalty(maximum_lengths)  # [batch]
        all_finished = finished["log_probs"][:, -1] > IMPOSSIBLE  # [batch]: all `best` slots are full
        cannot_improve = all_finished & (finished["scores"][:, -1] >= best_alive_bound)  # [batch]
        nothing_alive = alive["log_probs"][:, 0] <= IMPOSSIBLE  # [batch]
        done = loop_state["done"] | (loop_state["step"] + 1 >= maximum_lengths) | cannot_improve | nothing_alive
        if self.early_stopping:
            done |= all_finished & candidates["is_eos"][:, 0]
        return done

    def _result(self, final):
        """The returned dict from the loop's final values."""
        ids, alignments, token_log_probs = self._backtrack(
            final["tokens"].stack(),  # [max_length, batch, beam]
            final["parents"].stack(),  # [max_length, batch, beam]
            final["alignments"].stack(),  # [max_length, batch, beam, ...]
            final["finished_lengths"],
            final["finished_parents"],
            final["path_log_probs"].stack(),  # [max_length, batch, beam]
            final["finished_log_probs"],
        )
        is_hypothesis = final["finished_log_probs"] > IMPOSSIBLE  # [batch, best]
        negative_infinity = tf.fill(tf.shape(is_hypothesis), float("-inf"))
        result = {
            "ids": ids,
            "lengths": final["finished_lengths"],
            "scores": tf.where(is_hypothesis, final["finished_scores"], negative_infinity),
            "log_probs": tf.where(is_hypothesis, final["finished_log_probs"], negative_infinity),
            "alignments": alignments,
            "token_log_probs": token_log_probs,
        }
        if "alternatives" in final:
            result["alternative_log_probs"], result["alternative_ids"] = final["alternatives"]
        return result

    def _backtrack(self, tokens, parents, alignments, lengths, end_parents, path_log_probs, end_log_probs):
        """Follows the back-pointers from each finished hypothesis's EOS to its first token.

        Args:
            tokens: int32 `[max_length, batch, beam]`, the token of each alive hypothesis after each
                step (zeros for steps not run).
            parents: int32 `[max_length, batch, beam]`, the alive hypothesis (before the step) it extends.
            alignments: float32 `[max_length, batch, beam, ...]`, per alive hypothesis before each
                step.
            lengths: int32 `[batch, best]`, finished lengths (0 for empty slots).
            end_parents: int32 `[batch, best]`, the alive hypothesis each EOS extended.
            path_log_probs: float32 `[max_length, batch, beam]`, log p of each alive hypothesis after
                each step.
            end_log_probs: float32 `[batch, best]`, log p of each finished hypothesis, EOS included.

        Returns:
            `ids` int32 `[batch, best, max_length]`, `alignments` float32
            `[batch, best, max_length, ...]`, `token_log_probs` float32 `[batch, best, max_length]`: each
            token's log p(y_i | y_<i, x), the difference of the hypothesis's log p after and before it
            (0 after EOS).
        """
        end_steps = lengths - 1  # [batch, best]

        def step_back(previous, elements):
            pointer = previous[0]  # [batch, best]: the alive hypothesis after `step`
            step, step_tokens, step_parents, step_alignments, step_log_probs = elements
            at_end = tf.equal(step, end_steps)  # [batch, best]
            before_end = step < end_steps  # [batch, best]
            inside = at_end | before_end  # [batch, best]
            parent = tf.where(at_end, end_parents, tf.gather(step_parents, pointer, batch_dims=1))
            parent = tf.where(inside, parent, 0)  # [batch, best]
            token = tf.where(before_end, tf.gather(step_tokens, pointer, batch_dims=1), constants.PAD_ID)
            token = tf.where(at_end, self.eos_id, token)  # [batch, best]
            alignment = tf.gather(step_alignments, parent, batch_dims=1)  # [batch, best, ...]
            alignment = tf.where(broadcast_mask(inside, alignment), alignment, tf.zeros_like(alignment))
            log_prob = tf.where(before_end, tf.gather(step_log_probs, pointer, batch_dims=1), 0.0)
            log_prob = tf.where(at_end, end_log_probs, log_prob)  # [batch, best]: log p of the path up to `step`
            return parent, token, alignment, log_prob

        max_length = tf.shape(tokens)[0]
        initial = (
            tf.zeros_like(lengths),
            tf.zeros_like(lengths),
            tf.zeros_like(alignments[0, :, : self.num_hypotheses]),  # [batch, best, ...]
            tf.zeros_like(end_log_probs),
        )
        _, ids, best_alignments, prefix_log_probs = tf.scan(
            step_back,
            (tf.range(max_length), tokens, parents, alignments, path_log_probs),
            initializer=initial,
            reverse=True,
        )  # [max_length, batch, best], [max_length, batch, best, ...], [max_length, batch, best]
        ids = tf.transpose(ids, [1, 2, 0])  # [batch, best, max_length]
        rank = alignments.shape.rank
        best_alignments = tf.transpose(
            best_alignments, [1, 2, 0] + list(range(3, rank))
        )  # [batch, best, max_length, ...]
        prefix_log_probs = tf.transpose(prefix_log_probs, [1, 2, 0])  # [batch, best, max_length]
        before = tf.pad(prefix_log_probs[:, :, :-1], [[0, 0], [0, 0], [1, 0]])  # log p before each token (0 at BOS)
        inside = tf.range(max_length)[None, None, :] < lengths[:, :, None]  # [batch, best, max_length]
        return ids, best_alignments, tf.where(inside, prefix_log_probs - before, 0.0)
