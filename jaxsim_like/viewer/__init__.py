"""A self-contained 3D viewer: one HTML file per view, viewable offline from disk.

The page embeds three.js (vendored, see ``vendor/``), the model's shapes and meshes and the link
poses of every frame, computed here by the model's forward kinematics. It has a time slider,
play/pause and speed, a camera that orbits (left drag), pans (right drag) and zooms (wheel),
toggles for visual and collision shapes, contact points and contact-force arrows, and draws the
worlds of a batched recording side by side on a grid.

``export_html(path, model, recording)`` writes the file, ``html_string`` returns its text (for
a notebook: ``IPython.display.HTML``, or an ``<iframe srcdoc=...>``).
"""

from __future__ import annotations

import os
import pathlib
import zipfile
from typing import Sequence

import numpy as np

from ..dynamics.model import Model, build_model
from ..dynamics.state import State
from ..loading import ContactSampling
from ..parsers import parse_model
from ..parsers.description import Geometry, ModelDescription
from ..parsers.errors import strictness
from ..recording import Recording
from . import frames
from .page import ModelView, grid_offsets, page
from .scene import COLLISION, PALETTE, VISUAL, Mesh, Shape, model_shapes

__all__ = ["export_html", "html_string", "load", "world_html"]

STANDARD_GRAVITY = 9.81


def html_string(
    model: Model | str | os.PathLike,
    recording: Recording | str | os.PathLike | None = None,
    *,
    description: ModelDescription | None = None,
    worlds: Sequence[int] | None = None,
    fps: float = 30.0,
    title: str | None = None,
    force_scale: float | None = None,
    spacing: float | None = None,
) -> str:
    """The HTML text of a view of ``model`` (a :class:`Model`, or a URDF/SDF path or string, then
    loaded with :func:`jaxsim_like.load_model`'s defaults) playing ``recording`` (a
    :class:`Recording` or an ``.npz`` path; None: the model in its default pose, a floating base
    standing on the ground, see :func:`resting_state`).

    ``description`` gives the visuals and meshes of a :class:`Model` passed directly (without
    one, the model's spheres, boxes, capsules and cylinders are drawn). ``worlds``: the worlds of a batched
    recording to draw (default all), on a grid of pitch ``spacing`` [m] (default: the size of
    one world plus 1 m). Frames are kept at ``fps`` per second at most; ``force_scale`` [m/N]
    is the arrow length per newton (default: 1 m for the model's weight).
    """
    if not isinstance(model, Model):
        model, parsed = load(model)
        description = parsed if description is None else description
    if isinstance(recording, (str, os.PathLike)):
        recording = _read_recording(recording)
    meshes: list[Mesh] = []
    shapes = model_shapes(model, description, meshes, {}) if description is not None else solid_shapes(model)
    if recording is None:
        state = resting_state(model)
        poses = frames.link_poses(model, state.base_position, state.base_quaternion, state.joint_positions)[None, None]
        times, forces = np.zeros(1), None
    else:
        count = frames.batch_size(recording)
        chosen = np.arange(count) if worlds is None else np.asarray(list(worlds), dtype=int)
        if chosen.size == 0 or chosen.min() < 0 or chosen.max() >= count:
            raise ValueError(f"worlds must be indices of the recording's {count} world(s), got {list(chosen)}")
        indices = frames.frame_indices(np.asarray(recording.time, dtype=float), fps)
        poses = frames.recorded_poses(model, recording, indices, chosen)
        forces = frames.recorded_forces(model, recording, indices, chosen)
        times = np.asarray(recording.time, dtype=float)[indices]
    weight = float(np.asarray(model.total_mass)) * STANDARD_GRAVITY
    scale = force_scale if force_scale is not None else (1.0 / weight if weight > 0 else 1e-3)
    view = ModelView(model, shapes, poses, forces, scale)
    pitch = spacing if spacing is not None else _world_size(poses) + 1.0
    worlds_drawn = poses.shape[0]
    name = title or f"{model.name}" + (f": {worlds_drawn} worlds" if worlds_drawn > 1 else "")
    return page([view], meshes, times, grid_offsets(worlds_drawn, pitch), name)


def load(
    source: str | os.PathLike, *, floating_base: bool | None = None, strict: bool = False, contact_sampling: ContactSampling | None = None
) -> tuple[Model, ModelDescription]:
    """The model and its description from one parse of ``source``, as :func:`jaxsim_like.load_model`
    loads it (same ``floating_base``, ``strict`` and ``contact_sampling``, by default ``ContactSampling()``)."""
    sampling = ContactSampling() if contact_sampling is None else contact_sampling
    with strictness(strict):
        description = parse_model(source)
        model = build_model(description, floating_base=floating_base, collidable_points=sampling.points,
                            ellipsoids=sampling.exact_ellipsoids)
    return model, description


def export_html(path: str | os.PathLike, model: Model | str | os.PathLike, recording=None, **options) -> pathlib.Path:
    """Write the view of :func:`html_string` (same arguments) to ``path``; returns the path."""
    path = pathlib.Path(path)
    path.write_text(html_string(model, recording, **options), encoding="utf-8")
    return path


def world_html(models: Sequence[tuple[Model, ModelDescription | None, State]], *, time: float = 0.0, title: str = "world") -> str:
    """The HTML text of one frame of several models, each ``(model, description, state)``, in one world."""
    meshes: list[Mesh] = []
    cache: dict = {}
    views = []
    for model, description, state in models:
        shapes = model_shapes(model, description, meshes, cache) if description is not None else solid_shapes(model)
        poses = frames.link_poses(model, state.base_position, state.base_quaternion, state.joint_positions)[None, None]
        views.append(ModelView(model, shapes, poses))
    return page(views, meshes, np.array([time]), np.zeros((1, 3)), title)


def resting_state(model: Model) -> State:
    """The model in its default pose; a floating base is raised (or lowered) until its lowest
    collidable point touches the ground plane z = 0, as ``jaxsim-like simulate`` starts it."""
    state = State.build(model)
    if not model.floating_base or not model.point_link:
        return state
    poses = frames.link_poses(model, state.base_position, state.base_quaternion, state.joint_positions)
    lowest = float(np.min(frames.point_positions(model, poses)[:, 2]))
    return state.replace(base_position=state.base_position.at[2].add(-lowest))


def solid_shapes(model: Model) -> list[Shape]:
    """The model's own spheres, boxes, capsules, cylinders and ellipsoids (the shapes collisions use; not its
    hulls, meshes in the description) as shapes to draw, for a :class:`Model` given without its
    description."""
    shapes = []
    transforms, sizes = np.asarray(model.shape_transform), np.asarray(model.shape_size)
    for s, (link, kind) in enumerate(zip(model.shape_link, model.shape_kind)):
        size = sizes[s]
        if kind == "hull":
            continue
        if kind == "box":
            geometry = Geometry(type="box", size=tuple(2.0 * size))
        elif kind == "sphere":
            geometry = Geometry(type="sphere", radius=float(size[0]))
        elif kind == "ellipsoid":
            geometry = Geometry(type="ellipsoid", size=tuple(float(x) for x in size))
        else:
            geometry = Geometry(type=kind, radius=float(size[0]), length=float(2.0 * size[1]))
        rgba = PALETTE[link % len(PALETTE)] + (1.0,)
        for group in (VISUAL, COLLISION):
            shapes.append(Shape(link, group, transforms[s], geometry, rgba if group == VISUAL else (1.0, 0.55, 0.1, 0.45), model.shape_source[s]))
    return shapes


def _read_recording(path: str | os.PathLike) -> Recording:
    try:
        return Recording.load(path)
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as error:
        raise ValueError(f"{os.fspath(path)}: cannot read the recording ({error})") from None


def _world_size(poses: np.ndarray) -> float:
    """The largest horizontal extent [m] of the link origins of one world over all frames."""
    positions = poses[..., :2]
    extent = positions.max(axis=(1, 2)) - positions.min(axis=(1, 2))
    return float(extent.max()) if extent.size else 0.0
