"""Dev BLEU across validations: the best checkpoint, learning-rate decay on plateaus, early stopping."""

import json
import os

import numpy as np
import tensorflow as tf

HISTORY_FIELDS = (
    "step", "epoch", "hours", "train_nll_per_sentence", "dev_nll_per_sentence", "dev_bleu", "learning_rate"
)


class EarlyStopping:
    """Judges each validation's dev BLEU against the best so far (after OpenNMT-tf's evaluator).

    Its state is `variables` (checkpointed with the run, so a resumed run judges as an uninterrupted
    one): the best BLEU and its step, validations since the last improvement, and since the last
    learning-rate decay.

    Args:
        patience: validations without improvement before `should_stop` (None: never).
        decay_patience: validations without improvement before `should_decay`.
        learning_rate_decay: below 1, `should_decay` may say yes; 1 never decays.
    """

    def __init__(self, patience=None, decay_patience=2, learning_rate_decay=1.0):
        self.patience = patience
        self.decay_patience = decay_patience
        self.learning_rate_decay = learning_rate_decay
        self.variables = {
            name: tf.Variable(initial, trainable=False, name=name)
            for name, initial in (
                ("best_bleu", np.float64(-1)),
                ("best_step", np.int64(0)),
                ("validations_without_improvement", np.int64(0)),
                ("validations_since_decay", np.int64(0)),
            )
        }
        self._improved = False

    @property
    def best_bleu(self):
        return float(self.variables["best_bleu"])

    @property
    def best_step(self):
        return int(self.variables["best_step"])

    def record(self, step, bleu):
        """Takes one validation's dev BLEU; returns whether it is the best so far (`is_best`)."""
        self._improved = bleu > self.best_bleu
        if self._improved:
            self.variables["best_bleu"].assign(bleu)
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
            f"dev BLEU did not improve for {self.patience} validations "
            f"(best {self.best_bleu:.2f} at step {self.best_step})"
        )

    def write_state(self, path, state):
        """Writes `path` (`ModelDir.training_state_file`): `state` (the latest validation), the best step and BLEU, and
        `history`, every validation so far (the learning curve; those after the step a run resumed
        from are replaced)."""
        history = []
        if os.path.exists(path):
            with open(path, encoding="utf-8") as stream:
                history = json.load(stream).get("history", [])
        history = [entry for entry in history if entry["step"] < state["step"]]
        history.append({name: state[name] for name in HISTORY_FIELDS})
        state = dict(state, best_step=self.best_step, best_dev_bleu=self.best_bleu, history=history)
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(state, stream, indent=2)
