"""The drift of a `World` step: every body on its parabola, every impact at the instant it happens.

* `drift` — the drift kernel, its stages and its statuses;
* `predict` — each body's earliest contact within the step;
* `gather` — the contact lists of an instant and of the resting set;
* `resting` — the resting set and its normal forces;
* `heap` — the indexed heap of event times.
"""
