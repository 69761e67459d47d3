"""How translations are searched: one config for translate, evaluate, score, export and validation."""

import dataclasses
import typing

import tensorflow as tf

from data_pipeline import constants
from rnnsearch_tf.search.beam_search import BeamSearch
from rnnsearch_tf.search.constrained_beam_search import ConstrainedBeamSearch
from rnnsearch_tf.search.greedy_search import GreedySearch
from rnnsearch_tf.search.sampler import Sampler
from rnnsearch_tf.search.search_helpers import LENGTH_NORMALIZATIONS
from rnnsearch_tf.utils.config_checks import check_at_least, check_choices


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Search settings of `Translator`. Defaults are the paper's (Bahdanau et al. 2014, Section 5.2.2).

    Args:
        beam_size: hypotheses kept per sentence (12 in the paper). Beam 1 with no length normalisation
            runs greedy search, which finds the same hypothesis with less work.
        num_hypotheses: n-best translations returned per sentence, at most beam_size.
        length_normalization: how hypothesis scores are normalised by length: "none", "length" (log p /
            length) or "gnmt" (Wu et al. 2016).
        length_penalty_alpha: the exponent of the gnmt length penalty.
        maximum_length_a: target length bound floor(a * source_length) + b (source tokens without EOS).
        maximum_length_b: target length bound floor(a * source_length) + b.
        maximum_source_length: sources of more Moses tokens are translated from their first tokens only.
        early_stopping: stop a sentence's beam search once its best candidate of a step ends with EOS
            (OpenNMT-py's rule), instead of once no alive hypothesis can beat the finished ones.
        forbid_unk: never output <unk> ("No UNK" in the paper's Table 1).
        sampling: draw num_samples translations per sentence by ancestral sampling (as Cho et al. 2014)
            instead of searching; they are returned best first, the n-best list holds them all.
        num_samples: translations drawn per sentence with sampling.
        sampling_temperature: temperature of the sampling distribution, above 0 (below 1 sharpens it towards
            the most probable word, above 1 flattens it).
        sampling_seed: seed of the sampling draws: with the same seed a sentence gets the same samples, whatever
            the batch, worker or request it comes in (`Sampler`, keyed by the hash of its source ids).
        shortlist: decode each batch over the target words of the model directory's vocabulary shortlist
            only (`Shortlist`, written by `rnnsearch shortlist`), not the whole vocabulary. None (the
            default of translate, evaluate, score and export, and so of serve): the model directory's
            shortlist when it is one model with one (`load_model_dir`: a user who built one decodes over it;
            1.3-1.6x faster, up to 0.15 BLEU lower on trained models, docs/translating.md), else the whole
            vocabulary; False (--noshortlist): the whole vocabulary; True: the shortlist, which must exist.
    """

    beam_size: int = 12
    num_hypotheses: int = 1
    length_normalization: str = dataclasses.field(default="none", metadata={"choices": LENGTH_NORMALIZATIONS})
    length_penalty_alpha: float = 0.6
    maximum_length_a: float = 2.0
    maximum_length_b: int = 10
    maximum_source_length: int = 100
    early_stopping: bool = False
    forbid_unk: bool = False
    sampling: bool = False
    num_samples: int = 1
    sampling_temperature: float = 1.0
    sampling_seed: int = 0
    shortlist: typing.Optional[bool] = None

    def __post_init__(self):
        check_choices(self)
        check_at_least(self, 1, ("beam_size", "num_hypotheses", "maximum_source_length", "maximum_length_b",
                                 "num_samples"))
        check_at_least(self, 0, ("maximum_length_a",))
        if self.sampling_temperature <= 0:
            raise ValueError(f"SearchConfig.sampling_temperature must be above 0, got {self.sampling_temperature}")
        if not self.sampling and self.num_hypotheses > self.beam_size:
            raise ValueError(
                f"SearchConfig.num_hypotheses must be between 1 and beam_size={self.beam_size}, "
                f"got {self.num_hypotheses}"
            )

    @property
    def hypotheses(self):
        """Translations returned per sentence: `num_samples` with sampling, else `num_hypotheses`."""
        return self.num_samples if self.sampling else self.num_hypotheses

    def maximum_target_length(self, source_length):
        """floor(maximum_length_a * source_length) + maximum_length_b: the most target tokens, EOS included,
        searched for a source of `source_length` tokens (EOS excluded).

        Args:
            source_length: a Python int, or an integer tensor of any shape (e.g. `[batch]`).

        Returns:
            a Python int, or an int32 tensor of the same shape (the product taken in float32).
        """
        if tf.is_tensor(source_length):
            return (
                tf.cast(self.maximum_length_a * tf.cast(source_length, tf.float32), tf.int32) + self.maximum_length_b
            )
        return int(self.maximum_length_a * source_length) + self.maximum_length_b

    def _options(self):
        """The options every strategy takes: `<pad>` and `<s>` are never output, nor `<unk>` with `forbid_unk`."""
        return dict(
            length_normalization=self.length_normalization,
            length_penalty_alpha=self.length_penalty_alpha,
            forbidden_ids=(constants.PAD_ID, constants.BOS_ID) + ((constants.UNK_ID,) if self.forbid_unk else ()),
        )

    def strategy(self, symbols_to_logits_fn):
        """The search strategy these settings ask for, over `symbols_to_logits_fn`."""
        options = self._options()
        if self.sampling:
            return Sampler(symbols_to_logits_fn, self.num_samples, self.sampling_temperature, self.sampling_seed,
                           **options)
        if self.beam_size == self.num_hypotheses == 1 and self.length_normalization == "none":
            return GreedySearch(symbols_to_logits_fn, forbidden_ids=options["forbidden_ids"])  # same result, no top-k
        return BeamSearch(symbols_to_logits_fn, self.beam_size, self.num_hypotheses,
                          early_stopping=self.early_stopping, **options)

    def constrained_strategy(self, symbols_to_logits_fn, word_continuations=None):
        """The beam search under lexical constraints (`ConstrainedBeamSearch`, with `word_continuations` of a
        subword vocabulary) with these settings; greedy settings give a beam of one. Sampling draws, it does
        not search: it takes no constraints."""
        if self.sampling:
            raise ValueError("constraints need a search: sampling takes none (drop --sampling)")
        return ConstrainedBeamSearch(symbols_to_logits_fn, self.beam_size, self.num_hypotheses,
                                     early_stopping=self.early_stopping, word_continuations=word_continuations,
                                     **self._options())

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_settings(cls, settings):
        """The config of a translator's settings by name (`Translator.settings()`, or the `settings`
        signature of an export as Python values), which hold other options too; a field they lack (an
        export older than the field) keeps its default."""
        return cls(**{field.name: settings[field.name] for field in dataclasses.fields(cls) if field.name in settings})
