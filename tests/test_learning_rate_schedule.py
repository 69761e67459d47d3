"""rnnsearch_tf/training/learning_rate_schedule.py: linear warm-up, then decay on demand."""

import numpy as np
import pytest

from rnnsearch_tf.training.learning_rate_schedule import LearningRateSchedule


def test_learning_rate_warms_up_linearly_then_decays_on_demand():
    schedule = LearningRateSchedule(0.002, warmup_steps=4)
    rates = [float(schedule(step)) for step in range(6)]
    np.testing.assert_allclose(rates, [0.0005, 0.001, 0.0015, 0.002, 0.002, 0.002], rtol=1e-6)
    schedule.decay(0.5)
    assert float(schedule(10)) == pytest.approx(0.001)
    assert float(LearningRateSchedule(0.1)(0)) == pytest.approx(0.1)
