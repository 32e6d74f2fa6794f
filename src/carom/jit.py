"""Numba's flags for carom's kernels, in one place.

Every kernel is `numba.njit` with ``cache=True`` (machine code kept on disk, so only a first run compiles).
`kernel` is a function that LLVM keeps whole (``forceinline=False``: Numba passes the flag on to callees that
do not set it, so every kernel says it); `inlined` is a small stage that LLVM inlines into its callers. Numba's
own inlining at the level of its IR (``inline="always"``) is never used: it costs minutes of compile time and
gigabytes (docs/performance.md). ``refcounts=False`` compiles without reference counting (Numba's ``_nrt``),
for loops that allocate nothing and are called on every event; a kernel that says nothing inherits its
caller's setting, and one that allocates while its callers do not says ``refcounts=True``. Other Numba
options (``error_model``, ``parallel``) pass through.
"""

from __future__ import annotations

from numba import njit


def kernel(function=None, /, *, inline: bool = False, refcounts: bool | None = None, **options):
    """`numba.njit` with carom's flags: ``@kernel`` or ``@kernel(refcounts=False, error_model="numpy")``."""
    flags = {"cache": True, "forceinline": inline, **options}
    if refcounts is not None:
        flags["_nrt"] = refcounts
    decorate = njit(**flags)
    return decorate if function is None else decorate(function)


def inlined(function=None, /, **options):
    """A kernel that LLVM inlines into its callers (``forceinline=True``): ``@inlined``."""
    return kernel(function, inline=True, **options)
