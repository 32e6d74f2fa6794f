"""The exact event-driven engine (`EventWorld`), one module per stage.

* `state` — the arrays every kernel takes (bodies with their pending events, cells, scene constants);
* `cells` — cell lists and cell crossings;
* `predict` — exact contact times, robust near contact;
* `calendar` — the tournament tree that yields the earliest event;
* `resolve` — what happens at an event: impacts in rounds, resting on walls, re-prediction;
* `loop` — the event loop;
* `world` — `EventWorld`, the public class.
"""

from .world import EventWorld

__all__ = ["EventWorld"]
