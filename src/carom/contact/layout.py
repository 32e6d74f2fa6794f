"""One layout for the contacts of an instant, in both engines.

Contact ``c`` joins body ``i`` and body ``j`` (``j < 0``: wall ``-1 - j``), with the unit normal from i
towards j. Its numbers sit in a float row with these columns first; each engine appends its own:

* `APPROACH` — normal approach speed before the round, m/s (positive: approaching);
* `RESTITUTION` — the coefficient the impact law used;
* `TARGET` — the separation speed asked of the solve, m/s (or, for forces, the acceleration target);
* `IMPULSE` — the normal impulse, N s (or the normal force, N, in a force solve).
"""

APPROACH, RESTITUTION, TARGET, IMPULSE = 0, 1, 2, 3
#: Columns every engine's contact row starts with.
SHARED_COLUMNS = 4
