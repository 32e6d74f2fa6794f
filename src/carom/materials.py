"""Materials: how two bodies' (or a body's and a wall's) coefficients combine, and pair overrides.

A world combines the coefficients of restitution of the two sides of a contact by a named rule
(``World(restitution_rule=...)``); `Model.set_pair_restitution` overrides one pair. Overrides are kept as
a sorted int64 array of pair keys (`pair_key`) that kernels search, beside an array of values. Friction
coefficients combine (``World(friction_rule=...)``) and override (`Model.set_pair_friction`) the same way.
"""

from __future__ import annotations

import math

import numpy as np

from .config import FRICTION_RULES, RESTITUTION_RULES
from .jit import inlined, kernel

#: Rule name -> code used inside kernels (`combine`).
RULE_CODES = {name: code for code, name in enumerate(dict.fromkeys(RESTITUTION_RULES + FRICTION_RULES))}

#: Pair keys: body pair (i, j) -> min(i, j) * KEY_BASE + max(i, j); body i and wall k (j = -1 - k) ->
#: -(i * KEY_BASE + k + 1). Ids stay below KEY_BASE, so keys are unique and fit in int64.
KEY_BASE = 1 << 31


@inlined
def pair_key(i, j):
    """The override key of body i with body j, or with wall -1 - j when j < 0 (`KEY_BASE`)."""
    if j >= 0:
        return min(i, j) * KEY_BASE + max(i, j)
    return -(i * KEY_BASE + (-1 - j) + 1)


@kernel
def pair_keys(i, j):
    """(n,) int64: `pair_key` of each (i[q], j[q])."""
    out = np.empty(len(i), dtype=np.int64)
    for q in range(len(i)):
        out[q] = pair_key(i[q], j[q])
    return out


def key_pairs(keys) -> tuple[np.ndarray, np.ndarray]:
    """`pair_key` read back: (i, j) of each key, ``j = -1 - k`` for wall k, i < j for a pair of bodies."""
    keys = np.asarray(keys, dtype=np.int64)
    wall = keys < 0
    high, low = np.divmod(np.where(wall, -keys - 1, keys), KEY_BASE)
    return high, np.where(wall, -1 - low, low)


@inlined
def combine(e1, e2, rule):
    """Combine two coefficients by rule code (`RULE_CODES`: 0 min, 1 max, 2 mean, 3 product, 4 geometric)."""
    if rule == 0:
        return min(e1, e2)
    if rule == 1:
        return max(e1, e2)
    if rule == 2:
        return 0.5 * (e1 + e2)
    if rule == 3:
        return e1 * e2
    return math.sqrt(e1 * e2)


@inlined
def pair_restitution(i, j, restitution, wall_restitution, rule, keys, values):
    """Coefficient of restitution for body i with body j (j < 0: wall -1 - j): a pair override if one
    is set (``keys``, ``values`` from `Model.pair_restitution_arrays`), else the rule applied to the two
    coefficients."""
    if len(keys):
        key = pair_key(i, j)
        k = np.searchsorted(keys, key)
        if k < len(keys) and keys[k] == key:
            return values[k]
    other = restitution[j] if j >= 0 else wall_restitution[-1 - j]
    return combine(restitution[i], other, rule)
