"""Example scenes shipped with carom: ``carom examples`` lists them, ``carom run --example NAME`` runs one.

Each scene file starts with comment lines saying what it shows; the first is its one-line summary.
"""

from __future__ import annotations

import difflib
from importlib import resources
from pathlib import Path


def names() -> list[str]:
    """Names of the example scenes, sorted."""
    return sorted(
        p.name.removesuffix(".toml") for p in resources.files(__name__).iterdir() if p.name.endswith(".toml")
    )


def path(name: str) -> Path:
    """The scene file of example ``name``; ValueError (with the list) if there is none."""
    if name not in names():
        close = difflib.get_close_matches(name, names(), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"no example named {name!r}{hint}; the examples are: {', '.join(names())}")
    return Path(str(resources.files(__name__) / f"{name}.toml"))


def summary(name: str) -> str:
    """The first comment line of an example scene."""
    for line in path(name).read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""
