"""Hybrid learned physics (python/examples/hybrid_drag.py, quick): the engine plus a learned
residual predicts held-out flights with quadratic drag better than the engine alone and
better than an MLP dynamics model alone, at 1, 10 and 100 steps."""

import hybrid_drag


def test_hybrid_beats_analytic_and_learned_at_every_horizon():
    table = hybrid_drag.run(200)
    analytic, learned, hybrid = table["analytic"], table["learned"], table["hybrid"]
    for k in range(3):
        assert hybrid[k] < learned[k], (k, table)
        assert hybrid[k] < analytic[k] / 3, (k, table)
