"""The impact log both engines fill: impacts in time order, handed to `Model.on_impact` after a kernel
call. A kernel writes into a log of fixed capacity and counts past it; the caller grows a full log and
runs the call again from the state it started from (`World`), or undoes the instant and repeats it
(`EventWorld`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..jit import inlined


class ImpactLog(NamedTuple):
    """One row per impact, fields as `carom.Impact` (``normal`` from i towards j, m/s and N s)."""

    time: np.ndarray  # (capacity,) s
    i: np.ndarray  # (capacity,) int64
    j: np.ndarray  # (capacity,) int64; -1 - k for wall k
    normal: np.ndarray  # (capacity, d)
    impulse: np.ndarray  # (capacity,) N s
    approach_speed: np.ndarray  # (capacity,) m/s
    restitution: np.ndarray  # (capacity,)
    tangential: np.ndarray  # (capacity, d) N s: the friction impulse on body j (0 between smooth bodies)


def new_log(capacity: int, dim: int) -> ImpactLog:
    """An empty log for ``capacity`` impacts with normals of ``dim`` components."""
    return ImpactLog(
        time=np.empty(capacity),
        i=np.empty(capacity, dtype=np.int64),
        j=np.empty(capacity, dtype=np.int64),
        normal=np.empty((capacity, dim)),
        impulse=np.empty(capacity),
        approach_speed=np.empty(capacity),
        restitution=np.empty(capacity),
        tangential=np.zeros((capacity, dim)),
    )


@inlined
def log_impact(log, k, t, i, j, normal, sign, impulse, speed, e):
    """Write impact number k (normal ``sign * normal``) if the log has room; returns k + 1."""
    if k < len(log.time):
        log.time[k] = t
        log.i[k] = i
        log.j[k] = j
        for d in range(log.normal.shape[1]):
            log.normal[k, d] = sign * normal[d]
        log.impulse[k] = impulse
        log.approach_speed[k] = speed
        log.restitution[k] = e
    return k + 1
