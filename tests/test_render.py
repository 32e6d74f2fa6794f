"""Pictures: bodies round, to scale and in place; depth shading; frame counts and sizes; the plot."""

import base64
import dataclasses
import io
import re
import subprocess
import sys

import imageio_ffmpeg
import numpy as np
import pytest
from matplotlib.animation import FuncAnimation
from matplotlib.figure import Figure
from PIL import Image
from scipy import ndimage

from carom import examples
from carom.cli import GALLERY
from carom.io import load, runner
from carom.render import plot, render
from carom.render.animation import (
    LIGHT,
    MARGINS,
    NAMED_COLORS,
    RunAnimation,
    _View,
    output_settings,
)
from carom.scenefile import parse_scene

# Two balls 3 m apart (radius 0.5 m) and a wall 1 m left of the first; the second moves 2 m right.
FLAT = """
[world]
dim = 2
[run]
until = 2.0
dt = 0.1
output_interval = 0.1
[output]
color_by = "mass"
[[bodies]]
position = [0.0, 0.0]
mass = 1.0
radius = 0.5
[[bodies]]
position = [3.0, 0.0]
velocity = [1.0, 0.0]
mass = 2.0
radius = 0.5
[[walls]]
point = [-1.0, 0.0]
normal = [1.0, 0.0]
"""
# Two equal balls seen along -x (camera on +x): one near, one far.
DEEP = """
[world]
dim = 3
[run]
until = 0.2
dt = 0.1
output_interval = 0.1
[output]
camera = [0.0, 0.0]
[[bodies]]
position = [1.0, -1.0, 0.0]
mass = 1.0
radius = 0.5
[[bodies]]
position = [-1.0, 1.0, 0.0]
mass = 1.0
radius = 0.5
"""


def trajectory(tmp_path, text):
    path = tmp_path / "run.h5"
    runner.start(parse_scene(text), text, "run.toml", path, progress=False)
    return load(path)


def frames(path):
    """RGB frames of a GIF (exact colours: the geometry tests use GIFs, as MP4 blurs colour edges)."""
    gif = Image.open(path)
    return [np.asarray((gif.seek(k), gif.convert("RGB"))[1]) for k in range(gif.n_frames)]


def blobs(image):
    """Connected regions of strongly coloured pixels in the axes (the colour bar excluded)."""
    rgb = image[:, : image.shape[1] - MARGINS[1]].astype(int)
    labels, n = ndimage.label(rgb.max(axis=2) - rgb.min(axis=2) > 40)
    return [np.argwhere(labels == k) for k in range(1, n + 1)], rgb


def test_2d_bodies_are_round_to_scale_and_in_place(tmp_path):
    out = tmp_path / "flat.gif"
    assert render(trajectory(tmp_path, FLAT), out, size=480, max_frames=5) == 5
    first = frames(out)[0]
    assert first.shape[1] == 480 and first.shape[0] % 16 == 0
    found, rgb = blobs(first)
    assert len(found) == 2
    (y0, x0), (y1, x1) = (b.mean(axis=0) for b in sorted(found, key=lambda b: b[:, 1].mean()))
    separation = x1 - x0  # pixels for 3 m
    for b in found:
        height, width = np.ptp(b, axis=0) + 1
        assert abs(height - width) <= 1  # round
        assert width == pytest.approx(separation / 3, abs=2)  # 1 m across, to scale (edges are darker)
    assert y0 == pytest.approx(y1, abs=0.5)
    # The wall's line (dark grey, 2 px wide) is 1 m left of the first ball's centre.
    wall = np.all(np.abs(rgb - [76, 76, 89]) < 20, axis=2).sum(axis=0)  # wall-grey pixels per column
    line = np.flatnonzero(wall > 0.3 * first.shape[0])
    assert np.ptp(line) <= 2 and line.mean() == pytest.approx(x0 - separation / 3, abs=1.5)


def test_3d_bodies_are_round_and_far_ones_darker(tmp_path):
    out = tmp_path / "deep.gif"
    render(trajectory(tmp_path, DEEP), out, size=480)
    found, rgb = blobs(frames(out)[0])
    assert len(found) == 2
    near, far = sorted(found, key=lambda b: b[:, 1].mean())  # the near ball is at screen left (y = -1)
    for b in found:
        height, width = np.ptp(b, axis=0) + 1
        assert abs(height - width) <= 1 and width == pytest.approx(np.ptp(near, axis=0)[1] + 1, abs=1)
    near_rgb, far_rgb = (rgb[tuple(b[_inner(b)].T)].mean(axis=0) for b in (near, far))
    # Brightness falls linearly from 100% at the front of the scene (x = 1.5 m) to 55% at the back
    # (x = -1.5 m): 92.5% at the near centre (x = 1), 62.5% at the far one (x = -1).
    assert far_rgb / near_rgb == pytest.approx(np.full(3, 0.625 / 0.925), abs=0.02)


def _inner(points):
    """Points of a disc at least 4 px inside its edge."""
    centre, radius = points.mean(axis=0), (np.ptp(points, axis=0).max() + 1) / 2
    return np.linalg.norm(points - centre, axis=1) < radius - 4


def test_mp4_has_the_frames_and_size_asked_for(tmp_path):
    out = tmp_path / "flat.mp4"
    assert render(trajectory(tmp_path, FLAT), out, size=320, max_frames=8, fps=10) == 8
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    video = list(reader)
    width, height = meta["size"]
    assert len(video) == 8 and meta["fps"] == 10 and width == 320 and height % 16 == 0
    assert np.frombuffer(video[-1], np.uint8).std() > 10


def test_trails_follow_the_moving_body(tmp_path):
    traj = trajectory(tmp_path, FLAT)
    plain, trailed = tmp_path / "plain.gif", tmp_path / "trails.gif"
    render(traj, plain, size=480, trails=False)
    render(traj, trailed, size=480, trails=True)
    last_plain, last_trailed = frames(plain)[-1], frames(trailed)[-1]
    drawn = np.any(np.abs(last_plain.astype(int) - last_trailed) > 40, axis=2)
    rows = np.nonzero(drawn)[0]
    assert len(rows) > 10 and np.ptp(rows) <= 2  # a horizontal line, behind the second ball
    assert frames(trailed)[0].tobytes() == frames(plain)[0].tobytes()  # no history yet


def test_plot_is_one_figure_of_the_requested_size(tmp_path):
    out = tmp_path / "plot.png"
    plot(trajectory(tmp_path, FLAT), out, size=(600, 500))
    image = np.asarray(Image.open(out).convert("RGB"))
    assert image.shape == (500, 600, 3) and image.std() > 10


def turned(traj, angles):
    """``traj`` with body 0 at orientation ``angles[k]`` (rad) in frame k, about +z (3D: a quaternion)."""
    q = np.array(traj.orientation)
    if traj.dim == 2:
        q[:, 0] = angles
    else:
        q[:, 0] = np.stack([np.cos(angles / 2), 0 * angles, 0 * angles, np.sin(angles / 2)], axis=-1)
    return dataclasses.replace(traj, orientation=q)


def test_2d_mark_is_a_radius_at_the_orientation_angle(tmp_path):
    traj = trajectory(tmp_path, FLAT)
    assert not np.any(traj.orientation)
    traj = turned(traj, np.linspace(0.0, np.pi, len(traj.time)))
    view = _View(traj, output_settings(traj))
    view.fit(400, 300)
    ids = np.array([0, 1])
    first, _ = view.marks(0, ids)
    assert np.allclose(first[:, 0], traj.position[0], rtol=1e-12)  # from the centres
    assert np.allclose(first[0, 1], traj.position[0, 0] + [0.5, 0.0], rtol=1e-12)
    for k in (5, 20):
        segments, near = view.marks(k, ids)
        angle = np.pi * k / 20
        assert np.allclose(segments[0, 1], traj.position[k, 0] + 0.5 * np.array([np.cos(angle), np.sin(angle)]))
        assert np.allclose(segments[1, 1] - segments[1, 0], [0.5, 0.0])  # body 1 does not turn
        assert np.all(near)
    assert not np.allclose(view.marks(5, ids)[0][0, 1], first[0, 1])  # the end moves as the body turns


def test_3d_mark_is_the_turned_x_axis_projected(tmp_path):
    traj = trajectory(tmp_path, DEEP.replace("camera = [0.0, 0.0]", "camera = [90.0, -90.0]"))  # from above
    assert np.array_equal(traj.orientation[0], [[1.0, 0, 0, 0]] * 2)
    traj = turned(traj, np.array([0.0, np.pi / 3, np.pi / 3]))
    view = _View(traj, output_settings(traj))
    view.fit(400, 400)
    screen = view.project(traj.position[0])[0]
    assert np.allclose(screen, traj.position[0, :, :2], atol=1e-12)  # seen from above, screen = (x, y)
    before, _ = view.marks(0, np.array([0]))
    after, near = view.marks(1, np.array([0]))
    assert np.allclose(before[0, 1], screen[0] + [0.5, 0.0], atol=1e-12)
    assert np.allclose(after[0, 1], screen[0] + 0.5 * np.array([0.5, np.sqrt(3) / 2]), atol=1e-12)
    # turned a quarter about +y instead, the x axis points down, away from the camera: a dot, on the far side
    q = np.array(traj.orientation)
    q[2, 0] = [np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0]
    segments, near = _fit(dataclasses.replace(traj, orientation=q)).marks(2, np.array([0]))
    assert np.allclose(segments[0, 1], segments[0, 0], atol=1e-12) and not near[0]


def _fit(traj):
    view = _View(traj, output_settings(traj))
    view.fit(400, 400)
    return view


def test_mark_turns_in_the_picture(tmp_path):
    traj = trajectory(tmp_path, FLAT)
    out = tmp_path / "turning.gif"
    render(turned(traj, np.linspace(0.0, np.pi, len(traj.time))), out, size=480, max_frames=3)
    sides = []
    for image in frames(out)[::2]:  # angle 0, then pi
        found, rgb = blobs(image)
        disc = min(found, key=lambda b: b[:, 1].mean())  # body 0, at the left
        centre, radius = disc.mean(axis=0), (np.ptp(disc, axis=0).max() + 1) / 2
        yx = np.argwhere(np.ones(rgb.shape[:2], dtype=bool))
        inside = yx[np.linalg.norm(yx - centre, axis=1) < 0.8 * radius]
        pixels = rgb[tuple(inside.T)]
        mark = inside[np.abs(pixels - np.median(pixels, axis=0)).max(axis=1) > 60]  # off the body's colour
        assert len(mark) > 0.5 * radius  # a line, about a radius long
        sides.append(mark[:, 1].mean() - centre[1])
    assert sides[0] > 0.3 * radius and sides[1] < -0.3 * radius  # right of the centre, then left


def test_smooth_runs_have_no_marks(tmp_path):
    traj = trajectory(tmp_path, FLAT)
    plain, still = tmp_path / "plain.gif", tmp_path / "still.gif"
    render(traj, plain, size=320, max_frames=2)
    render(turned(traj, np.full(len(traj.time), 1.0)), still, size=320, max_frames=2)  # turned, never turning
    assert frames(plain)[0].tobytes() == frames(still)[0].tobytes()


# ------------------------------------------------------------------------------ labels, light, boxes, notebooks
def picture(traj, **kw):
    """The figure `render` and `animation` draw into, at 480 px."""
    from carom.render.animation import _Picture

    return _Picture(traj, **{"trails": None, "fps": None, "color_by": None, "size": 480, "max_frames": 300, **kw})


def named(text, *names):
    """``text`` with ``name = ...`` added to its first ``[[bodies]]`` tables, in order."""
    for name in names:
        text = text.replace("[[bodies]]\n", f'[[body]]\nname = "{name}"\n', 1)
    return text.replace("[[body]]\n", "[[bodies]]\n")


def test_named_bodies_are_labelled_and_coloured_apart(tmp_path):
    traj = trajectory(tmp_path, named(FLAT.replace("mass = 2.0", "mass = 1.0"), "earth", "moon"))
    assert traj.names == ("earth", "moon")
    drawn = picture(traj)
    assert drawn.labels == {0: "earth", 1: "moon"}
    drawn.draw(20)
    for text, body in zip(drawn.texts, (0, 1), strict=True):
        x, y = traj.position[20, body]
        assert text.get_text() == traj.names[body] and text.get_visible()
        assert text.get_position() == pytest.approx((x, y + 0.5))  # centred over the body's top
    # In the picture: each body in a colour of its own, though their masses (the colour scale) are equal, and
    # a label above each (dark pixels over the disc; none without names).
    out, plain = tmp_path / "named.gif", tmp_path / "plain.gif"
    render(traj, out, size=480, max_frames=2)
    render(dataclasses.replace(traj, names=("", "")), plain, size=480, max_frames=2)
    for path, expected in ((out, NAMED_COLORS[:2]), (plain, None)):
        found, rgb = blobs(frames(path)[0])
        found = sorted(found, key=lambda b: b[:, 1].mean())
        colours = [np.median(rgb[tuple(b.T)], axis=0) / 255 for b in found]
        if expected is None:
            assert np.allclose(colours[0], colours[1], atol=0.02)
        else:
            assert np.allclose(colours, expected[:, :3], atol=0.03)
        for disc in found:
            top, (left, right) = disc[:, 0].min(), (disc[:, 1].min(), disc[:, 1].max())
            above = rgb[top - 16 : top - 2, left:right]
            assert np.any(above.max(axis=2) < 90) == (expected is not None)


def test_restitution_example_shows_each_bodys_e(tmp_path):
    text = examples.path("restitution").read_text()
    traj = trajectory(tmp_path, text)
    assert sorted(set(traj.restitution)) == [0.0, 0.5, 1.0]
    drawn = picture(traj)
    assert drawn.labels == {i: f"e = {e:g}" for i, e in enumerate(traj.restitution)}
    drawn.draw(len(traj.time) - 1)
    tops = traj.position[-1] + [0.0, 0.2]
    at = np.array([t.get_position() for t in drawn.texts])
    # The e = 0 lane's two bodies end stuck together: the second label goes above the first.
    assert np.allclose(at[:5], tops[:5]) and at[5, 0] == pytest.approx(tops[5, 0]) and at[5, 1] > tops[5, 1]
    renderer = drawn.canvas.get_renderer()
    assert not _overlap(*(drawn.texts[k].get_window_extent(renderer) for k in (4, 5)))
    # A run where every body has the same e shows none.
    assert picture(trajectory(tmp_path, text.replace("restitution = 0.5", "restitution = 1.0")
                              .replace("restitution = 0.0", "restitution = 1.0"))).labels == {}  # fmt: skip


# Two disks in a periodic box 4 m wide, run by the event engine.
PERIODIC = """
[world]
dim = 2
engine = "event"
[run]
until = 0.5
output_interval = 0.1
[[bodies]]
position = [1.0, 2.0]
velocity = [1.0, 0.0]
mass = 1.0
radius = 0.3
[[bodies]]
position = [3.0, 2.0]
velocity = [0.0, 1.0]
mass = 1.0
radius = 0.3
[[boxes]]
lower = [0.0, 0.0]
upper = [4.0, 4.0]
periodic = true
"""


def test_periodic_box_is_drawn_dashed(tmp_path):
    traj = trajectory(tmp_path, PERIODIC)
    drawn = picture(traj)
    (box,) = [a for a in drawn.ax.collections if a.get_gid() == "periodic box"]
    ends = {tuple(sorted(map(tuple, s.round(12)))) for s in box.get_segments()}
    assert ends == {((0, 0), (0, 4)), ((0, 0), (4, 0)), ((0, 4), (4, 4)), ((4, 0), (4, 4))}
    assert box.get_linestyle()[0][1] is not None  # dashed
    assert drawn.view.lower[0] < 0 and drawn.view.upper[0] > 4  # the whole box is in the picture
    # In the picture: the box's left edge is a column of grey dashes (several runs of pixels, with gaps).
    out = tmp_path / "box.gif"
    render(traj, out, size=480, max_frames=1)
    rgb = frames(out)[0].astype(int)
    x = round(drawn.ax.transData.transform((0.0, 0.0))[0])
    column = np.all(np.abs(rgb[:, x - 1 : x + 2] - [76, 76, 89]) < 40, axis=2).any(axis=1)
    runs = np.count_nonzero(np.diff(column.astype(int)) == 1)
    assert runs >= 6 and 0.3 < column.mean() < 0.9
    # A scene without one draws none.
    assert not [a for a in picture(trajectory(tmp_path, FLAT)).ax.collections if a.get_gid() == "periodic box"]


# Two equal balls seen along -x (camera on +x), overlapping on the screen: the near one left of the far one.
OVERLAP = DEEP.replace("[-1.0, 1.0, 0.0]", "[-1.0, -0.5, 0.0]")


def test_3d_spheres_are_drawn_far_to_near_lit_from_the_upper_left(tmp_path):
    traj = trajectory(tmp_path, OVERLAP)
    drawn = picture(traj)
    drawn.draw(0)
    circles = drawn.bodies
    offsets, sizes, faces = circles.get_offsets(), circles._widths, circles.get_facecolor()
    per_sphere = 1 + len(LIGHT)
    assert len(offsets) == 2 * per_sphere
    # Painter's order: the far sphere (x = -1, at screen x = -0.5) and its light first, then the near one.
    screen = drawn.view.project(traj.position[0])[0]
    assert np.allclose(offsets[0], screen[1]) and np.allclose(offsets[per_sphere], screen[0])
    far, near = faces[:per_sphere, :3], faces[per_sphere:, :3]
    assert np.all(far < near)  # darker at the back, layer by layer
    for layers, centre in ((offsets[:per_sphere], screen[1]), (offsets[per_sphere:], screen[0])):
        shift = layers[1:] - centre
        assert np.all(shift[:, 0] < 0) and np.all(shift[:, 1] > 0)  # towards the upper left
    assert np.all(np.diff(sizes[:per_sphere]) < 0)  # each light disc smaller, within the sphere
    assert np.all(np.diff(near.sum(axis=1)) > 0)  # and lighter
    # In the picture: the near sphere covers the far one where they overlap, and each is brightest at its upper left.
    out = tmp_path / "overlap.gif"
    render(traj, out, size=480, max_frames=1)
    rgb = frames(out)[0].astype(int)
    to_px = drawn.ax.transData.transform
    (x0, y0), (x1, y1) = to_px(screen[0]), to_px(screen[1])
    r = round(0.5 * (to_px((1.0, 0.0)) - to_px((0.0, 0.0)))[0])  # pixels
    row = rgb.shape[0] - 1 - round(y0)
    middle = rgb[row, round((x0 + x1) / 2) + 6]  # a little right of the middle: in both, and in no light
    near_only, far_only = rgb[row + r // 2, round(x0 - r / 2)], rgb[row + r // 2, round(x1 + r / 2)]
    assert np.abs(middle - near_only).max() < 6 < np.abs(middle - far_only).max()
    for x, y in ((x0, y0), (x1, y1)):
        cx, cy = round(x), rgb.shape[0] - 1 - round(y)
        disc = rgb[cy - r + 3 : cy + r - 2, cx - r + 3 : cx + r - 2].sum(axis=2)
        brightest = np.unravel_index(np.argmax(disc), disc.shape)
        assert brightest[0] < disc.shape[0] / 2 and brightest[1] < disc.shape[1] / 2


def test_animate_returns_the_rendered_animation(tmp_path):
    traj = trajectory(tmp_path, FLAT)
    anim = traj.animate(size=320, max_frames=4, fps=8)
    assert isinstance(anim, FuncAnimation)
    assert list(anim.new_frame_seq()) == [0, 7, 13, 20]
    html = anim.to_jshtml()
    images = _embedded(html, "png")
    assert len(images) == 4 and images[-1].size == (320, picture(traj, size=320).height)
    found, _ = blobs(np.asarray(images[-1].convert("RGB")))
    assert len(found) == 2  # the bodies are drawn in the saved frames


def _embedded(html, kind):
    """The frames of an animation from ``to_jshtml`` (base64 images of ``kind`` in the page)."""
    found = re.findall(rf'"data:image/{kind};base64,([^"]+)"', html)
    return [Image.open(io.BytesIO(base64.b64decode(f.replace("\\\n", "")))) for f in found]


def test_a_trajectory_shows_as_a_few_lines_and_a_small_table(tmp_path):
    traj = trajectory(tmp_path, FLAT.replace("output_interval = 0.1", "output_interval = 0.02"))
    text = repr(traj)
    assert text.count("\n") == 0 and len(text) < 200, text
    assert "run.toml (2D, engine step)" in text and "bodies 2, 1 walls" in text and "frames 101, t = 0 .. 2 s" in text
    html = traj._repr_html_()
    assert len(html) < 2000 and "<script" not in html and "base64" not in html
    assert "<td style='text-align:left'>101, t = 0 .. 2 s</td>" in html


def test_the_animation_shows_in_a_notebook_as_the_rendered_video(tmp_path):
    """Without pyplot: `_repr_html_` embeds the MP4 that `render` writes, every frame at the size asked for."""
    traj = trajectory(tmp_path, FLAT)
    anim = traj.animate(size=320, max_frames=4, fps=8)
    assert isinstance(anim, RunAnimation)
    html = anim._repr_html_()
    assert html.startswith("<video") and "controls" in html
    video = tmp_path / "shown.mp4"
    video.write_bytes(base64.b64decode(re.search(r'src="data:video/mp4;base64,([^"]+)"', html)[1]))
    frames = imageio_ffmpeg.read_frames(str(video))
    meta = next(frames)
    assert meta["size"] == (320, picture(traj, size=320).height) and meta["fps"] == 8
    assert imageio_ffmpeg.count_frames_and_secs(str(video))[0] == 4
    frames.close()


def test_the_plot_shows_in_a_notebook_as_a_png_image(tmp_path):
    """Without pyplot, which a plain matplotlib Figure needs to show as more than its repr."""
    png = trajectory(tmp_path, FLAT).plot(size=(600, 500))._repr_png_()
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (600, 500)
    assert "matplotlib.pyplot" not in sys.modules


def test_trajectory_plot_is_the_plot_figure(tmp_path):
    fig = trajectory(tmp_path, FLAT).plot(size=(600, 500))
    assert isinstance(fig, Figure) and tuple(fig.get_size_inches() * fig.dpi) == (600, 500)
    assert len(fig.axes) >= 3


def test_import_carom_does_not_import_matplotlib():
    code = "import sys, carom; carom.load; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_demo_gallery_is_every_example():
    assert sorted(GALLERY) == examples.names()


# Two named balls that touch, and a third unnamed one at rest on the floor.
TOUCHING = """
[world]
dim = 2
[run]
until = 0.2
dt = 0.1
output_interval = 0.1
[output]
color_by = "speed"
[[bodies]]
name = "follow_cue"
position = [0.0, 0.0]
velocity = [1.0, 0.0]
mass = 1.0
radius = 0.1
[[bodies]]
name = "follow_object"
position = [0.3, 0.0]
velocity = [1.0, 0.0]
mass = 1.0
radius = 0.1
[[bodies]]
position = [3.0, 0.0]
mass = 1.0
radius = 0.1
"""


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_labels_of_bodies_side_by_side_do_not_overlap(tmp_path):
    traj = trajectory(tmp_path, TOUCHING)
    drawn = picture(traj)
    drawn.draw(1)
    renderer = drawn.canvas.get_renderer()
    first, second = (text.get_window_extent(renderer) for text in drawn.texts)
    assert first.x0 < second.x1 and second.x0 < first.x1  # side by side, they would run into each other
    assert not _overlap(first, second)
    x, y = traj.position[1, 0]
    assert drawn.texts[0].get_position() == pytest.approx((x, y + 0.1))  # the lower one stays over its body


def test_the_clock_covers_nothing_of_the_scene(tmp_path):
    drawn = picture(trajectory(tmp_path, TOUCHING))
    drawn.draw(1)
    renderer = drawn.canvas.get_renderer()
    assert drawn.clock.get_text() == "t = 0.1 s"
    assert not _overlap(drawn.clock.get_window_extent(renderer), drawn.ax.get_window_extent(renderer))
    assert not _overlap(drawn.clock.get_window_extent(renderer), drawn.ax.title.get_window_extent(renderer))


def test_the_colour_bar_spans_the_bodies_drawn_in_its_colours(tmp_path):
    traj = trajectory(tmp_path, TOUCHING)
    # The unnamed ball rests (its speed round-off, say): the scale does not shrink to its noise.
    traj = dataclasses.replace(traj, velocity=traj.velocity.copy())
    traj.velocity[:, 2] = 1.6e-10
    assert picture(traj).colorbar.norm.vmax == pytest.approx(0.01 * 1.0)  # SPEED_FLOOR of the fastest
    # All moving bodies named (each its own colour): no bar.
    assert picture(dataclasses.replace(traj, names=("a", "b", "c"))).colorbar is None
    # Unnamed bodies that move: the scale is theirs (the 99th percentile of their speeds).
    assert picture(dataclasses.replace(traj, names=("", "", ""))).colorbar.norm.vmax == pytest.approx(1.0)
