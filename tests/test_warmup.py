"""The first run: `carom warmup`, and the line a run prints when it must compile carom's kernels."""

import io
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from numba import njit
from numba.core import event

from carom.warmup import (
    COMPILE_CPU_SECONDS,
    FAMILIES,
    FAMILY_CPU_SECONDS,
    SCENES,
    CompileNotice,
    engine_of,
    estimate,
    groups,
    warm_up_families,
)

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
    listener = CompileNotice(stream, quiet_seconds=1.0, announce_after=0.0)
    event.register("numba:compile", listener)
    yield listener, stream
    event.unregister("numba:compile", listener)


def _said(engine: str) -> str:
    return (f"compiling carom's {engine} kernels (first run only): up to about "
            f"{estimate([COMPILE_CPU_SECONDS[engine]])}; `carom warmup` compiles them all ahead\n")  # fmt: skip


def test_the_notice_comes_once_per_engine_and_only_when_compiling(notice):
    _, stream = notice

    def said():
        return [line for line in stream.getvalue().splitlines(keepends=True) if not line.startswith("compiled ")]

    world_kernel = _kernel("carom.step.probe")
    world_kernel(1)
    assert said() == [_said("World")]
    world_kernel(2)  # compiled already
    _kernel("carom.contact.probe")(1.0)  # the same engine
    _kernel("somewhere.else")(1)  # not carom's
    assert said() == [_said("World")]
    _kernel("carom.events.probe")(1)
    assert said() == [_said("World"), _said("EventWorld")]


def test_the_notice_says_when_the_compiles_are_done_with_their_wall_time(notice):
    _, stream = notice
    start = time.perf_counter()
    _kernel("carom.step.probe")(1)
    _kernel("carom.events.probe")(1)
    took = time.perf_counter() - start
    assert "compiled" not in stream.getvalue()  # not before a quiet spell
    time.sleep(1.5)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[:2] == [_said("World")[:-1], _said("EventWorld")[:-1]]
    seconds = re.fullmatch(r"compiled carom's World and EventWorld kernels in (\d+) s", lines[2])
    assert seconds and abs(int(seconds[1]) - took) <= 0.5 + 0.1  # rounded to whole seconds
    _kernel("carom.step.probe2")(1)  # a later compile of an engine already announced: nothing more
    time.sleep(1.5)
    assert len(stream.getvalue().splitlines()) == 3


def test_the_estimate_is_the_measured_cpu_time_spread_over_the_processes(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert estimate([30.0]) == "30 s (60 s on a busy machine)"
    assert estimate([120.0, 60.0], processes=2) == "2 min (4 min on a busy machine)"  # the slower group
    assert estimate([120.0, 60.0], processes=1) == "3 min (6 min on a busy machine)"  # one after the other
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert estimate([120.0, 60.0], processes=2) == "3 min (6 min on a busy machine)"  # both on one CPU


def test_a_compile_over_within_a_second_says_nothing():
    stream = io.StringIO()
    listener = CompileNotice(stream, quiet_seconds=0.1, announce_after=30.0)
    event.register("numba:compile", listener)
    try:
        _kernel("carom.step.probe")(1)
        time.sleep(0.5)
    finally:
        event.unregister("numba:compile", listener)
    assert stream.getvalue() == "" and listener.announced == set()


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
        from carom import warmup
        from carom.warmup import announce_compiles

        def double(x):
            return 2 * x

        double.__module__ = "carom.shapes"  # a real module: the cache loads its environment from there
        double = njit(cache=True)(double)
        announce_compiles(stream=sys.stdout)
        warmup._notice.announce_after = 0.0  # (this kernel compiles in less than a second)
        print(double(21))
    """))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        result = subprocess.run([sys.executable, probe], env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result.stdout

    said = run()
    assert said.startswith(_said("World")) and said.endswith("42\n")
    assert run() == "42\n"


def test_the_carom_command_says_it_compiles_when_stderr_is_not_a_terminal(tmp_path):
    """As in a logged `make demo` or CI: stderr is a pipe."""
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        from numba import njit
        from carom.cli import main

        from carom import warmup

        main(["examples"], standalone_mode=False)  # (the group's setup runs with any command)
        warmup._notice.announce_after = 0.0  # (this kernel compiles in less than a second)

        def double(x):
            return 2 * x

        double.__module__ = "carom.shapes"
        print(njit(cache=True)(double)(21))
    """))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, probe], env=env, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.endswith("42\n"), result.stderr
    assert result.stderr.startswith(_said("World"))


def test_warmup_scenes_cover_both_engines_in_kernel_families():
    engines = {label.split(":")[0] for label, _ in SCENES}
    assert engines == set(COMPILE_CPU_SECONDS)
    assert set(groups()) == set(FAMILIES) == set(FAMILY_CPU_SECONDS)
    assert sum(map(len, groups().values())) == 15  # 8 scenes in 3D and 2D, polygons in 2D only


def _pause(seconds: float) -> None:
    """A stand-in for a warm-up scene: ``seconds`` of waiting."""
    time.sleep(seconds)


#: Two families' worth of stand-in scenes: 0.2 s and 0.3 s, and 2.5 s (a compile the bar's clock goes past).
PAUSES = {
    "friction": [("World: a", _pause, 0.2), ("World: b", _pause, 0.3)],
    "events": [("EventWorld: c", _pause, 2.5)],
}


def test_warmup_off_a_terminal_says_what_it_compiles_then_a_line_per_scene_and_family():
    stream = io.StringIO()  # not a terminal
    wall = warm_up_families(2, stream=stream, work=PAUSES)
    lines = stream.getvalue().splitlines()
    estimate_ = estimate([FAMILY_CPU_SECONDS["friction"], FAMILY_CPU_SECONDS["events"]], 2)
    assert lines[0] == (f"compiling carom's kernels: 3 small scenes of 2 kernel families in 2 processes: about "
                        f"{estimate_} the first time, a few seconds from the cache")  # fmt: skip
    done = {m[1]: int(m[2]) for m in (re.fullmatch(r"  (.*): done at (\d+) s", line) for line in lines) if m}
    assert done.keys() == {"World: a", "World: b", "EventWorld: c"} and done["EventWorld: c"] in (2, 3)
    ready = [re.fullmatch(r"([\w ]+) kernels ready: (\d+) s \((\d+) s of CPU\)", line) for line in lines]
    ready = {m[1]: int(m[2]) for m in ready if m}
    assert ready.keys() == {"friction", "events"} and 2 <= ready["events"] <= wall + 0.5
    assert len(lines) == 1 + 3 + 2


def test_warmup_on_a_terminal_shows_a_bar_whose_clock_ticks_during_a_long_scene():
    stream = io.StringIO()
    warm_up_families(2, show_progress=True, stream=stream, work=PAUSES)
    drawn = stream.getvalue()
    clocks = {n: set(re.findall(rf"{n}/3 scenes \[(\d\d:\d\d)", drawn)) for n in range(4)}
    assert max(len(clocks[n]) for n in range(3)) >= 2  # redrawn as time passes, with no scene done
    assert clocks[3] and "done at" not in drawn


def test_carom_warmup_runs_every_scene_and_exits_0():
    result = subprocess.run([CAROM, "warmup", "--jobs", "2"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert result.stdout == "" and lines[0].startswith("compiling carom's kernels: 15 small scenes")
    assert {line.split(": done at")[0].strip() for line in lines if ": done at" in line} == {
        label for tasks in groups().values() for label, _, _ in tasks
    }
    assert lines[-1].startswith("carom's kernels are ready (")
    bad = subprocess.run([CAROM, "warmup", "--jobs", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--jobs" in bad.stderr


def test_a_frictionless_disk_world_compiles_no_friction_polygon_or_orbit_kernel(tmp_path):
    """Compiles are lazy per feature: with friction off the drift gets None for it, and Numba prunes every
    friction branch before typing. Run on a cold cache, so that every kernel the drift reaches is typed."""
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import importlib
        from numba.core.registry import CPUDispatcher
        from carom.canonical import gas

        gas(20, 0.2, dim=2).run(until=0.05, dt=0.01)

        def compiled(module):
            module = importlib.import_module(module)
            return sorted(name for name, f in vars(module).items() if isinstance(f, CPUDispatcher) and f.signatures
                          and f.py_func.__module__ == module.__name__)  # (its own kernels, not those it imports)

        print(compiled("carom.step.drift"))
        for module in ("carom.step.friction", "carom.contact.friction", "carom.narrowphase.polygons",
                       "carom.narrowphase.rotation", "carom.contact.rigid", "carom.step.rigid_kernels",
                       "carom.step.ias15"):
            print(module, compiled(module))
    """))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, probe], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    drift, *others = result.stdout.splitlines()
    assert "'drift'" in drift and "'impact_rounds'" in drift
    assert all(line.endswith(" []") for line in others), others
