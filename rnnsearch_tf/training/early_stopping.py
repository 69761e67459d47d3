"""Dev BLEU (or chrF) across validations: the best checkpoint, learning-rate decay on plateaus, early stopping."""

import json
import os

import numpy as np

from rnnsearch_tf.training.checkpointing import run_variables

SELECTION_METRICS = ("bleu", "chrf")  # what `--select_by` may judge validations by
HISTORY_FIELDS = (
    "step", "epoch", "hours", "train_nll_per_sentence", "dev_nll_per_sentence", "dev_bleu", "dev_chrf", "learning_rate"
)


_NAMES = {"bleu": "BLEU", "chrf": "chrF"}


class EarlyStopping:
    """Judges each validation's dev BLEU, or chrF, against the best so far (after OpenNMT-tf's evaluator).

    Its state is `variables` (checkpointed with the run, so a resumed run judges as an uninterrupted
    one): the best score and its step, validations since the last improvement, and since the last
    learning-rate decay. The best score's variable keeps its first name, `best_bleu`, whatever `metric`
    judges: checkpoints find their values by name.

    Args:
        patience: validations without improvement before `should_stop` (None: never).
        decay_patience: validations without improvement before `should_decay`.
        learning_rate_decay: below 1, `should_decay` may say yes; 1 never decays.
        metric: what a validation is judged by, "bleu" or "chrf" (`SELECTION_METRICS`).
    """

    def __init__(self, patience=None, decay_patience=2, learning_rate_decay=1.0, metric="bleu"):
        if metric not in SELECTION_METRICS:
            raise ValueError(f"metric must be one of {SELECTION_METRICS}, got {metric!r}")
        self.metric = metric
        self.patience = patience
        self.decay_patience = decay_patience
        self.learning_rate_decay = learning_rate_decay
        self.variables = run_variables(best_bleu=np.float64(-1), best_step=np.int64(0),
                                       validations_without_improvement=np.int64(0),
                                       validations_since_decay=np.int64(0))
        self._improved = False

    @property
    def best_score(self):
        """The best dev score of `metric` so far (-1 before any validation)."""
        return float(self.variables["best_bleu"])

    @property
    def metric_name(self):
        """`metric` as written in messages: "BLEU" or "chrF"."""
        return _NAMES[self.metric]

    @property
    def best_step(self):
        return int(self.variables["best_step"])

    def record(self, step, score):
        """Takes one validation's dev score of `metric`; returns whether it is the best so far (`is_best`)."""
        self._improved = score > self.best_score
        if self._improved:
            self.variables["best_bleu"].assign(score)
            self.variables["best_step"].assign(step)
            self.variables["validations_without_improvement"].assign(0)
            self.variables["validations_since_decay"].assign(0)
        else:
            self.variables["validations_without_improvement"].assign_add(1)
            self.variables["validations_since_decay"].assign_add(1)
        return self._improved

    def restart(self):
        """Forgets the best so far and the validations since: the next validation is the best (after
        `Trainer` switches data, a checkpoint from before the switch must not stay the best)."""
        self.variables["best_bleu"].assign(-1.0)
        for name in ("validations_without_improvement", "validations_since_decay"):
            self.variables[name].assign(0)

    def is_best(self):
        """Whether the last recorded validation is the best so far."""
        return self._improved

    def should_decay(self):
        """True once per `decay_patience` validations without improvement (when decay is on)."""
        if self.learning_rate_decay >= 1 or int(self.variables["validations_since_decay"]) < self.decay_patience:
            return False
        self.variables["validations_since_decay"].assign(0)
        return True

    def should_stop(self):
        """Why training should stop after `patience` validations without improvement, or None."""
        if self.patience is None or int(self.variables["validations_without_improvement"]) < self.patience:
            return None
        return (
            f"dev {self.metric_name} did not improve for {self.patience} validations "
            f"(best {self.best_score:.2f} at step {self.best_step})"
        )

    def write_state(self, path, state):
        """Writes `path` (`ModelDir.training_state_file`): `state` (the latest validation), `history`, every
        validation so far (the learning curve; those after the step a run resumed from are replaced), the
        best step, `selected_by` (`metric`), and the dev BLEU and chrF of the best step (`best_dev_bleu`,
        `best_dev_chrf`; from its `history` entry)."""
        history = []
        if os.path.exists(path):
            with open(path, encoding="utf-8") as stream:
                history = json.load(stream).get("history", [])
        history = [entry for entry in history if entry["step"] < state["step"]]
        history.append({name: state.get(name) for name in HISTORY_FIELDS})
        best = next((entry for entry in history if entry["step"] == self.best_step), {})
        state = dict(state, best_step=self.best_step, selected_by=self.metric, best_dev_bleu=best.get("dev_bleu", self._best_if("bleu")),
                     best_dev_chrf=best.get("dev_chrf", self._best_if("chrf")), history=history)
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(state, stream, indent=2)

    def _best_if(self, metric):
        """The best score if `metric` is the one judged (a history without the best step's entry), else None."""
        return self.best_score if metric == self.metric else None
