"""The first run: `carom warmup`, and the line a run prints when it must compile carom's kernels."""

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numba import njit
from numba.core import event

from carom.warmup import COMPILE_SECONDS, SCENES, CompileNotice, engine_of

CAROM = Path(sys.executable).with_name("carom")


def test_engine_of_a_kernel_module():
    assert engine_of("carom.events.loop") == "EventWorld"
    assert engine_of("carom.step.drift") == engine_of("carom.broadphase") == "World"
    assert engine_of("caromel") is None and engine_of("numba.np.arrayobj") is None


def _kernel(module: str):
    """A fresh (never compiled) kernel that says it lives in ``module``."""

    def double(x):
        return 2 * x

    double.__module__ = module
    return njit(double)


@pytest.fixture
def notice():
    stream = io.StringIO()
    listener = CompileNotice(stream)
    event.register("numba:compile", listener)
    yield listener, stream
    event.unregister("numba:compile", listener)


def test_the_notice_comes_once_per_engine_and_only_when_compiling(notice):
    _, stream = notice
    world_kernel = _kernel("carom.step.probe")
    world_kernel(1)
    line = f"compiling carom's kernels (first run only, about {COMPILE_SECONDS['World']} s)\n"
    assert stream.getvalue() == line
    world_kernel(2)  # compiled already
    _kernel("carom.contact.probe")(1.0)  # the same engine
    _kernel("somewhere.else")(1)  # not carom's
    assert stream.getvalue() == line
    _kernel("carom.events.probe")(1)
    assert stream.getvalue() == line + line.replace(str(COMPILE_SECONDS["World"]), str(COMPILE_SECONDS["EventWorld"]))


def test_disabled_notice_prints_nothing(notice):
    listener, stream = notice
    listener.enabled = False
    _kernel("carom.step.probe")(1)
    assert stream.getvalue() == ""


def test_a_cold_cache_prints_the_notice_and_a_warm_one_does_not(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import sys
        from numba import njit
        from carom.warmup import announce_compiles

        def double(x):
            return 2 * x

        double.__module__ = "carom.shapes"  # a real module: the cache loads its environment from there
        double = njit(cache=True)(double)
        announce_compiles(stream=sys.stdout)
        print(double(21))
    """))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        result = subprocess.run([sys.executable, probe], env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result.stdout

    assert run() == f"compiling carom's kernels (first run only, about {COMPILE_SECONDS['World']} s)\n42\n"
    assert run() == "42\n"


def test_warmup_scenes_cover_both_engines():
    engines = {label.split(":")[0] for label, _ in SCENES}
    assert engines == set(COMPILE_SECONDS)


def test_carom_warmup_runs_every_scene_and_exits_0():
    result = subprocess.run([CAROM, "warmup", "--jobs", "2"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr.startswith("carom's kernels are ready (")
    bad = subprocess.run([CAROM, "warmup", "--jobs", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--jobs" in bad.stderr
