"""Animations of a trajectory: bodies to scale, walls, periodic boxes, labels, optional trails; MP4 or GIF via
imageio-ffmpeg (`render`), or a matplotlib animation (`animation`, shown in Jupyter as that video).

2D runs are drawn as they are. 3D runs are drawn in an orthographic projection along a camera direction
(elevation, azimuth): a sphere projects to a circle of its own radius, so bodies stay round and to scale.
Spheres are drawn far to near (painter's order); far ones are darker (depth shading), and each is shaded as
if lit from the upper left and the front (two lighter discs towards its lit side, and a rim of its own colour
darker), so that the spheres of a pile stand apart. Bodies are circles in data units on equal axes; a body
smaller than `MIN_RADIUS_PX` is drawn at that size so that it stays visible. Fixed bodies are grey; those
that never move are drawn once, behind the others. Walls are drawn as the solid they bound, shaded (2D), or
as translucent faces clipped to the scene (3D). Periodic boxes (``[[boxes]]`` with ``periodic = true`` in
the scene) are drawn as dashed outlines. The picture's shape follows the scene's.

Bodies with a name get a colour of their own (`NAMED_COLORS`, while there are no more named bodies than
colours) and a label that follows them. Where the moving bodies do not all have the same restitution, each
one's label shows its ``e`` (while at most `MAX_LABELS` bodies are labelled).

Polygons (2D) are drawn as their outlines at each frame's angle, filled in the body's colour (one collection
for all of them, over the disks); they carry no mark, as their outline shows how they turn.

In a run where anything turns, each disk or sphere carries a mark that turns with it: a radius from its centre to
the point of its rim that its body-frame x axis points to (2D: at its orientation angle; 3D: that axis
turned by its quaternion and projected, fainter while the point is on the far side). The marks are one
collection drawn over all the bodies (in 3D, a far body's mark shows through a near body in front of it).

Every frame is drawn into one fixed figure (`_Picture`): the static parts once, then only the bodies, trails,
labels and clock are redrawn (blitting), and the pixels go straight to the encoder.
"""

from __future__ import annotations

import base64
import tempfile
import tomllib
from pathlib import Path

import imageio_ffmpeg
import matplotlib
import msgspec
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import EllipseCollection, LineCollection, PolyCollection
from matplotlib.colors import LogNorm, Normalize, to_rgba_array
from matplotlib.figure import Figure
from matplotlib.transforms import offset_copy

from ..io.trajectory import Trajectory
from ..scenefile import OutputTable

#: Smallest drawn radius, pixels.
MIN_RADIUS_PX = 2.0
#: Bodies drawn smaller than this radius (pixels) get no mark of their orientation, and no light (3D).
MIN_MARK_PX = 4.0
#: Opacity of the orientation marks (black on light bodies, white on dark ones): on the near side of a
#: sphere (and in 2D), and on the far side.
MARK_ALPHA = (0.8, 0.3)
#: The speed scale spans at least this share of the largest speed of any moving body.
SPEED_FLOOR = 0.01
FIXED_COLOR = (0.55, 0.55, 0.55, 1.0)
WALL_COLOR = (0.3, 0.3, 0.35)
SOLID_COLOR = (0.86, 0.86, 0.88)
#: Colours of named bodies, in the order they were added (matplotlib's "tab10" without its grey).
NAMED_COLORS = to_rgba_array([f"tab:{c}" for c in "blue orange green red purple brown pink olive cyan".split()])
#: Most labels drawn: past this, only named bodies are labelled (the first ones), and ``e`` is not shown.
MAX_LABELS = 24
#: 3D spheres: brightness at the back of the scene (1 at the front), and the light on each sphere: lighter
#: discs drawn over it, each (radius, offset of its centre towards the upper left, share of white), the
#: radius and offset as fractions of the sphere's radius; the rim is drawn in the sphere's colour times
#: `RIM_SHADE`.
FAR_BRIGHTNESS = 0.55
LIGHT = ((0.62, 0.22, 0.18), (0.3, 0.38, 0.4))
RIM_SHADE = 0.45
#: Margins around the axes, pixels: left, right (with the colour bar), bottom, top.
MARGINS = (64, 104, 48, 32)
#: The picture's height / width follows the scene's, within these bounds.
ASPECT_RANGE = (0.4, 1.25)
#: Encoder settings by file type. GIF: a palette made for each frame (exact colours, streamed).
CODECS = {
    ".mp4": dict(codec="libx264", pix_fmt_out="yuv420p", quality=7),
    ".gif": dict(
        codec="gif",
        pix_fmt_out="pal8",
        output_params=[
            "-filter_complex",
            "split[a][b];[a]palettegen=stats_mode=single[p];[b][p]paletteuse=new=1:dither=none",
        ],
    ),
}


def output_settings(traj: Trajectory) -> OutputTable:
    """The ``[output]`` table of the run's scene (defaults where absent)."""
    return msgspec.convert(tomllib.loads(traj.scene).get("output", {}), OutputTable)


def render(
    traj: Trajectory,
    out: Path,
    *,
    trails: bool | None = None,
    fps: int | None = None,
    color_by: str | None = None,
    size: int = 720,
    max_frames: int = 300,
) -> int:
    """Write an animation of ``traj`` to ``out`` (``.mp4`` or ``.gif``); return the number of frames.

    Options left as None come from the scene's ``[output]`` table. ``size`` is the longer side in
    pixels; both sides are multiples of 16 (for the video encoder). At most ``max_frames`` frames,
    evenly spaced in the run, are drawn."""
    picture = _Picture(traj, trails=trails, fps=fps, color_by=color_by, size=size, max_frames=max_frames)
    canvas, fig = picture.canvas, picture.fig
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    encoder = imageio_ffmpeg.write_frames(
        str(out),
        (picture.width, picture.height),
        pix_fmt_in="rgba",
        fps=picture.fps,
        macro_block_size=16,
        ffmpeg_log_level="error",
        **CODECS[Path(out).suffix.lower()],
    )
    encoder.send(None)
    try:
        for k in picture.frames:
            artists = picture.draw(k)
            canvas.restore_region(background)
            for artist in artists:
                picture.ax.draw_artist(artist)
            canvas.blit(fig.bbox)
            encoder.send(canvas.buffer_rgba())
    finally:
        encoder.close()
    return len(picture.frames)


def animation(
    traj: Trajectory,
    *,
    trails: bool | None = None,
    fps: int | None = None,
    color_by: str | None = None,
    size: int = 720,
    max_frames: int = 300,
) -> FuncAnimation:
    """The animation `render` writes, as a matplotlib ``FuncAnimation`` (same options; a `RunAnimation`, which
    Jupyter shows as a video): save it with its ``save`` method. Keep a reference to it while it plays."""
    options = dict(trails=trails, fps=fps, color_by=color_by, size=size, max_frames=max_frames)
    return RunAnimation(traj, options, _Picture(traj, **options))


class RunAnimation(FuncAnimation):
    """The ``FuncAnimation`` of a run (`animation`) that shows itself in Jupyter, without pyplot or any
    ``%matplotlib`` setting: `_repr_html_` gives the MP4 video `render` writes, embedded in a ``<video>``
    element (matplotlib's own HTML instead where ``rcParams["animation.html"]`` asks for it)."""

    def __init__(self, traj: Trajectory, options: dict, picture: _Picture):
        self._run = (traj, options)
        super().__init__(picture.fig, picture.draw, frames=picture.frames, interval=1000 / picture.fps, blit=True,
                         cache_frame_data=False)  # fmt: skip

    def _repr_html_(self) -> str:
        html = super()._repr_html_()
        if html is not None:
            return html
        traj, options = self._run
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "animation.mp4"
            render(traj, path, **options)  # (a figure of its own: this one's canvas holds blitting state)
            video = base64.b64encode(path.read_bytes()).decode("ascii")
        self._draw_was_started = True  # (shown: matplotlib need not warn that it was "deleted without rendering")
        width, height = self._fig.canvas.get_width_height()
        return (f'<video width="{width}" height="{height}" controls autoplay loop muted playsinline>'
                f'<source type="video/mp4" src="data:video/mp4;base64,{video}"></video>')  # fmt: skip


class _Picture:
    """One figure for every frame of a run: the static parts (axes, walls, boxes, colour bar, bodies that never
    move), and the artists that `draw` puts a frame into. ``frames``: the frame indices shown."""

    def __init__(self, traj: Trajectory, *, trails, fps, color_by, size: int, max_frames: int):
        opts = output_settings(traj)
        self.traj = traj
        self.trails = opts.trails if trails is None else trails
        self.fps = fps or opts.fps
        color_by = color_by or opts.color_by
        self.view = view = _View(traj, opts)
        self.width, self.height, rect = _layout(view.upper - view.lower, size)
        view.fit(rect[2] * self.width, rect[3] * self.height)
        self.fig = Figure(figsize=(self.width / 100, self.height / 100), dpi=100)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = ax = self.fig.add_axes(rect)
        ax.set(xlim=(view.lower[0], view.upper[0]), ylim=(view.lower[1], view.upper[1]), aspect="equal")
        ax.set_title(Path(str(traj.attrs.get("source", ""))).stem, fontsize=10, loc="left")
        self._draw_boundaries(opts)
        self.colors = _Colors(traj, color_by)
        self.colorbar = None  #: none where no body is drawn in the colour scale (all fixed or named)
        if self.colors.scaled.any():
            label = "speed (m/s)" if color_by == "speed" else "mass (kg)"
            cax = self.fig.add_axes((rect[0] + rect[2] + 16 / self.width, rect[1], 14 / self.width, rect[3]))
            mappable = matplotlib.cm.ScalarMappable(self.colors.norm, self.colors.cmap)
            self.colorbar = self.fig.colorbar(mappable, cax=cax, label=label)

        # Fixed bodies that never move (nor turn) are drawn once, behind the others (large ones are slow to draw).
        self.static, self.marked = _still(traj)
        self.polygon = traj.shapes == "polygon"
        still = np.flatnonzero(self.static)
        view.show(_discs(ax), 0, still[~self.polygon[still]], self.colors)
        _outlines(traj, 0, still[self.polygon[still]], self.colors, _polygons(ax))
        if self.marked:
            ax.add_collection(_marks(view, 0, still[~self.polygon[still]], self.colors))
        self.tracks = ax.add_collection(LineCollection([], linewidths=1.0, animated=True))
        self.bodies = _discs(ax, animated=True)
        self.outlines = _polygons(ax, animated=True)
        self.spokes = ax.add_collection(_marks(view, 0, np.zeros(0, dtype=int), self.colors, animated=True))
        self.labels = _labels(traj)
        self.texts = self._label_texts()
        renderer = self.canvas.get_renderer()
        #: (L, 2) px: each label's width and height, with its box and a pixel between neighbours
        self.label_size = np.array([text.get_window_extent(renderer).size for text in self.texts]).reshape(-1, 2)
        self.label_size += 2 * 0.15 * 8 * self.fig.dpi / 72 + 1  # (the box's pad: 0.15 of the 8 pt font)
        # The clock, in an axes of its own above the scene's top right corner: it covers nothing of the scene
        # (and an animation that blits redraws it with its axes).
        top = MARGINS[3] / self.height
        clock_axes = self.fig.add_axes((rect[0] + rect[2] / 2, rect[1] + rect[3], rect[2] / 2, top), frameon=False)
        clock_axes.set_axis_off()
        self.clock = clock_axes.text(1.0, 0.5, "", ha="right", va="center", fontsize=10, animated=True)
        interval = float(traj.attrs["output_interval"])
        self.history = len(traj.time) if opts.trail_length is None else max(1, round(opts.trail_length / interval))
        count = min(len(traj.time), max_frames)
        self.frames = np.unique(np.linspace(0, len(traj.time) - 1, count).round().astype(int))

    def _label_texts(self) -> list:
        """A text artist for each label, drawn just above its body (placed by `draw`)."""
        above = offset_copy(self.ax.transData, fig=self.fig, y=2, units="points")
        box = dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.6)
        return [
            self.ax.text(0, 0, text, transform=above, ha="center", va="bottom", fontsize=8, animated=True, bbox=box)
            for text in self.labels.values()
        ]

    def _draw_boundaries(self, opts: OutputTable) -> None:
        """Axis labels, walls and periodic boxes (static)."""
        ax, view = self.ax, self.view
        if view.dim == 2:
            ax.set(xlabel="x (m)", ylabel="y (m)")
            ax.add_collection(PolyCollection(view.solids(), facecolor=SOLID_COLOR, edgecolor="none"))
            ax.add_collection(LineCollection(view.faces(), color=WALL_COLOR, lw=2))
        else:
            ax.set(xlabel="m, seen from elevation {:g}°, azimuth {:g}°".format(*opts.camera), ylabel="m")
            faces = PolyCollection(view.faces(), facecolor=(*WALL_COLOR, 0.06), edgecolor=(*WALL_COLOR, 0.7))
            ax.add_collection(faces)
        if self.traj.periodic_box is not None:
            lower, upper = self.traj.periodic_box
            edges = LineCollection(view.edges(lower, upper), color=WALL_COLOR, lw=1.2, linestyles="--")
            ax.add_collection(edges).set_gid("periodic box")

    def draw(self, k: int) -> list:
        """Put frame k into the animated artists; return them, in drawing order."""
        traj, view, colors = self.traj, self.view, self.colors
        live = np.flatnonzero(traj.active[k] & ~self.static)
        disks, polygons = live[~self.polygon[live]], live[self.polygon[live]]
        view.show(self.bodies, k, disks, colors)
        _outlines(traj, k, polygons, colors, self.outlines)
        if self.marked:
            _marks(view, k, disks, colors, self.spokes)
        if self.trails:
            moving = live[~traj.fixed[live]]
            path = view.project(traj.position[max(0, k - self.history) : k + 1, moving])[0]
            self.tracks.set_segments(path.swapaxes(0, 1))
            self.tracks.set_color(0.75 * colors.of(k, moving)[:, :3] + 0.25)
        ids = np.fromiter(self.labels, dtype=int, count=len(self.labels))
        screen = view.project(traj.position[k, ids])[0]
        top = screen[:, 1] + np.maximum(traj.radius[k, ids], view.min_radius)
        on = traj.active[k, ids]
        top[on] = _stacked(screen[on, 0], top[on], self.label_size[on] * view.metres_per_px)
        for text, x, y, shown in zip(self.texts, screen[:, 0], top, on, strict=True):
            text.set(position=(x, y), visible=bool(shown))
        self.clock.set_text(_clock(traj.time[k]))
        return [self.tracks, self.bodies, self.outlines, self.spokes, *self.texts, self.clock]


def _stacked(x: np.ndarray, y: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The bottoms (m) of labels centred at ``x`` that would sit at ``y``, of ``size`` (L, 2) (m: width,
    height), moved up as little as needed not to overlap: each in turn, from the lowest, goes above any
    label already placed that it would overlap (so that "follow_cue" and "follow_object", over two balls
    that touch, do not run into "followfollow_object")."""
    bottom = y.astype(float)
    placed: list[int] = []
    for i in np.lexsort((x, y)):
        while True:
            hits = [j for j in placed if abs(x[i] - x[j]) < (size[i, 0] + size[j, 0]) / 2
                    and bottom[i] < bottom[j] + size[j, 1] and bottom[j] < bottom[i] + size[i, 1]]  # fmt: skip
            if not hits:
                break
            bottom[i] = max(bottom[j] + size[j, 1] for j in hits)
        placed.append(i)
    return bottom


def _still(traj: Trajectory) -> tuple[np.ndarray, bool]:
    """Which bodies are fixed, always active, and never move nor turn (N,); and whether anything turns."""
    frames, n = traj.orientation.shape[:2]
    turned = (traj.orientation != traj.orientation[:1]).reshape(frames, n, -1)
    static = (
        traj.fixed
        & np.all(traj.active, axis=0)
        & np.all(traj.position == traj.position[:1], axis=(0, 2))
        & ~np.any(turned, axis=(0, 2))
    )
    return static, bool(np.any(turned))  # marks only where something turns: a smooth run is drawn as before


def _labels(traj: Trajectory) -> dict[int, str]:
    """The label of each labelled body, by id: its name, and its ``e`` where the moving bodies' differ."""
    named = [i for i, name in enumerate(traj.names) if name]
    moving = np.flatnonzero(~traj.fixed)
    shown = sorted({*named, *moving.tolist()})
    if len(np.unique(traj.restitution[moving])) < 2 or len(shown) > MAX_LABELS:
        return {i: traj.names[i] for i in named[:MAX_LABELS]}
    return {i: ", ".join(filter(None, [traj.names[i], f"e = {traj.restitution[i]:g}"])) for i in shown}


def _discs(ax, **kw) -> EllipseCollection:
    """An empty collection of circles sized in data units, added to ``ax``."""
    offsets = np.zeros((0, 2))
    circles = EllipseCollection([], [], [], units="xy", offsets=offsets, offset_transform=ax.transData, **kw)
    circles.set(edgecolors=(0, 0, 0, 0.6), linewidths=0.4)
    return ax.add_collection(circles)


def _polygons(ax, **kw) -> PolyCollection:
    """An empty collection of filled polygons (data units), added to ``ax``."""
    return ax.add_collection(PolyCollection([], edgecolors=(0, 0, 0, 0.6), linewidths=0.4, **kw))


def _outlines(traj: Trajectory, k: int, ids: np.ndarray, colors: _Colors, polygons: PolyCollection) -> None:
    """Put polygons ``ids`` at frame k into ``polygons``: their outlines at their angles, in their colours."""
    polygons.set_verts(traj.polygon_vertices(k, ids) if len(ids) else [])
    polygons.set_facecolor(colors.of(k, ids) if len(ids) else np.zeros((0, 4)))


def _marks(view: _View, k: int, ids: np.ndarray, colors: _Colors, marks: LineCollection | None = None,
           **kw) -> LineCollection:  # fmt: skip
    """Put the orientation marks of bodies ``ids`` at frame k into ``marks`` (a new collection if None): one
    segment each, for the bodies drawn at least `MIN_MARK_PX` in radius; black on light bodies, white on dark."""
    if marks is None:
        marks = LineCollection([], linewidths=1.2, capstyle="round", **kw)
    ids = ids[view.traj.radius[k, ids] >= MIN_MARK_PX / MIN_RADIUS_PX * view.min_radius]
    segments, near = view.marks(k, ids)
    rgb = colors.of(k, ids)[:, :3] if len(ids) else np.zeros((0, 3))
    rgba = np.empty((len(ids), 4))
    rgba[:, :3] = (rgb @ [0.299, 0.587, 0.114] < 0.45)[:, None]  # white on dark bodies
    rgba[:, 3] = np.where(near, *MARK_ALPHA)
    marks.set_segments(segments)
    marks.set_color(rgba)
    return marks


def _layout(span: np.ndarray, size: int) -> tuple[int, int, tuple[float, float, float, float]]:
    """Figure width and height (px, multiples of 16, the longer one at most ``size``) for a region of
    ``span`` (m, screen width and height), and the axes rectangle (figure fractions)."""
    left, right, bottom, top = MARGINS
    aspect = float(np.clip(span[1] / span[0], *ASPECT_RANGE))
    width, height = size, bottom + top + (size - left - right) * aspect
    if height > size:
        width, height = left + right + (size - bottom - top) / aspect, size
    width, height = int(width) // 16 * 16, int(height) // 16 * 16
    rect = (left / width, bottom / height, 1 - (left + right) / width, 1 - (bottom + top) / height)
    return width, height, rect


def _clock(t: float) -> str:
    days = f" ({t / 86400:.3g} d)" if t >= 2 * 86400 else ""
    return f"t = {t:.4g} s{days}"


class _View:
    """The camera: projection to the screen, depth, the region shown, and the walls within it."""

    def __init__(self, traj: Trajectory, opts: OutputTable):
        self.traj, self.dim = traj, traj.dim
        if self.dim == 2:
            self.rotation = np.eye(2)
        else:
            elev, azim = np.radians(opts.camera)
            ce, se, ca, sa = np.cos(elev), np.sin(elev), np.cos(azim), np.sin(azim)
            # Rows: screen x, screen y, and the direction towards the camera (depth).
            self.rotation = np.array([[-sa, ca, 0.0], [-se * ca, -se * sa, ce], [ce * ca, ce * sa, se]])
        # The scene's box (data space): as given, or the moving bodies over the run, the walls' points and the
        # periodic boxes.
        if opts.view is not None:
            lo, hi = np.array(opts.view[0], dtype=float), np.array(opts.view[1], dtype=float)
        else:
            moving = ~traj.fixed if np.any(~traj.fixed) else np.ones(len(traj.fixed), dtype=bool)
            x, r, on = traj.position[:, moving], traj.radius[:, moving, None], traj.active[:, moving, None]
            lo = np.min(np.where(on, x - r, np.inf), axis=(0, 1))
            hi = np.max(np.where(on, x + r, -np.inf), axis=(0, 1))
            box = () if traj.periodic_box is None else (np.array(traj.periodic_box),)
            for point in (traj.wall_point, *box):
                lo = np.minimum(lo, point.min(axis=0, initial=np.inf))
                hi = np.maximum(hi, point.max(axis=0, initial=-np.inf))
        self.box = _corners(lo, hi)
        screen, depth = self.project(self.box)
        self.depth_range = (depth.min(), depth.max())
        centre = (screen.min(axis=0) + screen.max(axis=0)) / 2
        half = np.ptp(screen, axis=0) * 0.525  # a 5% margin
        half = np.maximum(half, 1e-3 * half.max() + 1e-300)
        self.lower, self.upper = centre - half, centre + half

    def fit(self, width_px: float, height_px: float) -> None:
        """Widen the region's short side to fill axes of this size at equal scale."""
        centre, half = (self.lower + self.upper) / 2, (self.upper - self.lower) / 2
        self.metres_per_px = 2 * max(half[0] / width_px, half[1] / height_px)
        half = self.metres_per_px / 2 * np.array([width_px, height_px])
        self.lower, self.upper = centre - half, centre + half
        self.min_radius = MIN_RADIUS_PX * self.metres_per_px

    def project(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Screen coordinates (..., 2) and depth (..., larger is nearer; 0 in 2D) of points (..., dim)."""
        p = x @ self.rotation.T
        return p[..., :2], (p[..., 2] if self.dim == 3 else np.zeros(p.shape[:-1]))

    def show(self, circles: EllipseCollection, k: int, ids: np.ndarray, colors: _Colors) -> None:
        """Put bodies ``ids`` at frame k into ``circles``: to scale; in 3D far ones first and darker, and each
        sphere lit (a darker rim, lighter discs towards the light) once it is drawn `MIN_MARK_PX` wide."""
        screen, depth = self.project(self.traj.position[k, ids])
        order = np.argsort(depth, kind="stable")
        ids, screen, depth = ids[order], screen[order], depth[order]
        radius = np.maximum(self.traj.radius[k, ids], self.min_radius)
        rgba = colors.of(k, ids)
        if self.dim == 2:
            circles.set(offsets=screen, widths=2 * radius, heights=2 * radius, angles=np.zeros(len(ids)),
                        facecolors=rgba)  # fmt: skip
        else:
            lit = radius >= MIN_MARK_PX * self.metres_per_px
            _light(circles, screen, radius, rgba, self.brightness(depth), lit)

    def marks(self, k: int, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The orientation marks of bodies ``ids`` at frame k: segments (len(ids), 2, 2) in screen coordinates
        from each centre to the point of the drawn rim that the body-frame x axis points to (2D: at the angle
        of its orientation; 3D: turned by its quaternion, then projected: shorter as it points at or away
        from the camera), and whether that point is on the near side (always, in 2D)."""
        q = self.traj.orientation[k, ids]
        if self.dim == 2:
            axis = np.stack([np.cos(q), np.sin(q)], axis=-1)
        else:
            w, x, y, z = q.T  # the first column of the rotation matrix of a unit quaternion
            axis = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], axis=-1)
        tip, depth = self.project(axis.reshape(-1, self.dim))
        centre = self.project(self.traj.position[k, ids])[0]
        radius = np.maximum(self.traj.radius[k, ids], self.min_radius)
        return np.stack([centre, centre + radius[:, None] * tip], axis=1), depth >= 0

    def brightness(self, depth: np.ndarray) -> np.ndarray:
        """3D: the factor on the colour of a sphere at ``depth``, from 1 at the front of the scene to
        `FAR_BRIGHTNESS` at the back."""
        lo, hi = self.depth_range
        near = np.clip((depth - lo) / max(hi - lo, 1e-300), 0.0, 1.0)
        return FAR_BRIGHTNESS + (1 - FAR_BRIGHTNESS) * near

    def edges(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """The edges of the box ``lower``..``upper`` in screen coordinates: (4 or 12, 2, 2)."""
        corners = _corners(lower, upper)
        a, b = _edge_ends(corners)
        return self.project(np.stack([corners[a], corners[b]], axis=1))[0]

    def _walls(self):
        """Each wall with the region walls are clipped to (the picture in 2D, the scene's box in 3D):
        the region's corners, their signed distances from the wall, and where the wall cuts its edges."""
        corners = _corners(self.lower, self.upper) if self.dim == 2 else self.box
        a, b = _edge_ends(corners)
        for point, normal in zip(self.traj.wall_point, self.traj.wall_normal, strict=True):
            s = (corners - point) @ normal
            cut = (s[a] * s[b] <= 0) & (s[a] != s[b])
            t = (s[a] / np.where(cut, s[a] - s[b], 1.0))[cut, None]
            yield corners, s, np.unique(corners[a[cut]] + t * (corners[b[cut]] - corners[a[cut]]), axis=0)

    def faces(self) -> list[np.ndarray]:
        """Each wall within the region, in screen coordinates: a segment (2D) or a polygon (3D)."""
        return [_around(self.project(cut)[0]) for _, _, cut in self._walls() if len(cut) >= 2]

    def solids(self) -> list[np.ndarray]:
        """2D: the part of the picture behind each wall (the side bodies do not live on)."""
        parts = (np.vstack([corners[s <= 0], cut]) for corners, s, cut in self._walls())
        return [_around(p) for p in parts if len(p) >= 3]


def _light(circles: EllipseCollection, centres: np.ndarray, radius: np.ndarray, rgba: np.ndarray,
           brightness: np.ndarray, lit: np.ndarray) -> None:  # fmt: skip
    """Put spheres (far to near: screen centres, drawn radii in m, colours, `_View.brightness`) into
    ``circles``, those where ``lit`` with the light of `LIGHT`: a disc per sphere and layer, sphere after
    sphere, so that a nearer sphere covers a farther one's light. Layer 0 is the sphere, with a rim of its
    colour times `RIM_SHADE`."""
    size, offset, white = np.array([(1.0, 0.0, 0.0), *LIGHT]).T
    layers = len(size)
    towards_light = np.array([-1.0, 1.0]) * np.sqrt(0.5)
    offsets = centres[:, None] + (radius[:, None] * offset)[..., None] * towards_light  # (n, layers, 2)
    face = np.repeat(rgba[:, None], layers, axis=1)
    face[..., :3] += white[:, None] * (1 - face[..., :3])
    face[..., :3] *= brightness[:, None, None]
    edge = face.copy()
    edge[:, 0, :3] *= RIM_SHADE
    drawn = np.ones((len(radius), layers), dtype=bool)
    drawn[:, 1:] = lit[:, None]
    diameter = (2 * radius[:, None] * size)[drawn]
    rim = np.broadcast_to(np.where(np.arange(layers) == 0, 0.6, 0.0), drawn.shape)[drawn]
    circles.set(offsets=offsets[drawn], widths=diameter, heights=diameter, angles=np.zeros(len(diameter)),
                facecolors=face[drawn], edgecolors=edge[drawn], linewidths=rim)  # fmt: skip


def _corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The 2^d corners of the box lo..hi, (2^d, d)."""
    return np.array(np.meshgrid(*zip(lo, hi, strict=True), indexing="ij")).reshape(len(lo), -1).T


def _edge_ends(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The indices of the two ends of each edge of a box, from its `_corners`."""
    return np.nonzero(np.triu(np.sum(corners[:, None] != corners[None], axis=2) == 1))


def _around(points: np.ndarray) -> np.ndarray:
    """Points of a convex polygon (screen coordinates) in order around their centre."""
    d = points - points.mean(axis=0)
    return points[np.argsort(np.arctan2(d[:, 1], d[:, 0]))]


class _Colors:
    """Body colours from speed or mass (viridis); fixed bodies grey; named bodies each a colour of
    `NAMED_COLORS` (while there are no more of them than colours). The scale spans the bodies drawn in it;
    a speed scale at least `SPEED_FLOOR` of the fastest moving body's speed, so that bodies at rest (their
    speeds round-off, 1e-10 m/s) read as at rest next to a named body that moves."""

    def __init__(self, traj: Trajectory, color_by: str):
        self.traj, self.by, self.cmap = traj, color_by, matplotlib.colormaps["viridis"]
        named = np.flatnonzero([bool(name) for name in traj.names])
        self.own = np.full(len(traj.fixed), -1)  #: each body's index in `NAMED_COLORS`, -1 for none
        if len(named) <= len(NAMED_COLORS):
            self.own[named] = np.arange(len(named))
        moving = ~traj.fixed
        self.scaled = moving & (self.own < 0)  #: the bodies drawn in the colour scale
        if color_by == "speed":
            speed = np.linalg.norm(traj.velocity[:, self.scaled], axis=2)
            everything = np.linalg.norm(traj.velocity[:, moving], axis=2)
            top = max(float(np.percentile(speed, 99)) if speed.size else 0.0,
                      SPEED_FLOOR * float(everything.max(initial=0.0)), 1e-300)  # fmt: skip
            self.norm = Normalize(0.0, top)
        else:
            mass = traj.mass[:, self.scaled]
            lo, hi = (float(mass.min()), float(mass.max())) if mass.size else (1.0, 1.0)
            self.norm = LogNorm(lo, hi) if hi > 10 * lo else Normalize(lo, max(hi, lo * (1 + 1e-9)))

    def of(self, k: int, ids: np.ndarray) -> np.ndarray:
        """RGBA (len(ids), 4) of bodies ``ids`` at frame k."""
        t = self.traj
        value = np.linalg.norm(t.velocity[k, ids], axis=1) if self.by == "speed" else t.mass[k, ids]
        rgba = np.atleast_2d(self.cmap(self.norm(value)))
        rgba[t.fixed[ids]] = FIXED_COLOR
        own = self.own[ids]
        rgba[own >= 0] = NAMED_COLORS[own[own >= 0]]
        return rgba
