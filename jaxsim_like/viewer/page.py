"""The self-contained HTML page: three.js, the viewer script and the scene data in one file.

The data is one JSON object in ``<script type="application/json" id="jaxsim-data">``; arrays are
little-endian base64 (float32 unless stated):

- ``times (T)`` [s] (a JSON list), ``worlds`` ``W``, ``offsets (W, 3)``: where each world of a
  batch is drawn (a grid in the ground plane), ``title``;
- ``meshes``: ``vertices (V, 3)`` [m] and ``faces (F, 3)`` of each mesh, in its own frame, with
  ``index``, the type of the faces (``<u2`` below 65536 vertices, else ``<u4``);
- ``models``, each with ``name``, ``links`` (names), ``shapes`` (``link``, ``group``, ``type``,
  ``size``, ``radius``, ``length``, ``normal``, ``pose``: 16 numbers of ``L_H_G`` row by row,
  ``rgba``, ``mesh``), ``points (P, 3)`` collidable points in their links' frames and
  ``point_link (P)``, ``point_radius`` [m], ``poses (W, T, N, 7)`` (see :mod:`.frames`),
  ``force_scale`` [m/N], ``max_arrow`` [m] (longer arrows are clipped) and ``contacts`` (or null): ``start (W T + 1)`` int32 offsets into
  ``index (K)`` int32 (the point of each contact) and ``force (K, 3)`` [N, world axes].
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import math
import pathlib
import re

import numpy as np

from ..dynamics.model import Model
from .scene import Mesh, Shape

_HERE = pathlib.Path(__file__).parent
THREE_FILE = _HERE / "vendor" / "three.min.js"
_PLACEHOLDER = re.compile(r"__TITLE__|__DATA__|/\*__THREE__\*/|/\*__VIEWER__\*/")


@dataclasses.dataclass
class ModelView:
    """One model in a view: its shapes, collidable points, ``poses (W, T, N, 7)`` and, when
    recorded, ``forces (W, T, P, 3)`` [N]; ``force_scale`` [m/N] is the arrow length per newton."""

    model: Model
    shapes: list[Shape]
    poses: np.ndarray
    forces: np.ndarray | None = None
    force_scale: float = 1e-3


def encode(array: np.ndarray, dtype: str = "<f4") -> str:
    """Base64 of ``array`` as little-endian ``dtype``."""
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def grid_offsets(worlds: int, spacing: float) -> np.ndarray:
    """``(W, 3)`` offsets placing ``worlds`` worlds on a square-ish grid of pitch ``spacing`` [m],
    centred on the origin, in the ground plane."""
    columns = max(1, math.ceil(math.sqrt(worlds)))
    rows = math.ceil(worlds / columns)
    k = np.arange(worlds)
    x = (k % columns - 0.5 * (columns - 1)) * spacing
    y = (0.5 * (rows - 1) - k // columns) * spacing
    return np.stack([x, y, np.zeros(worlds)], axis=1)


def _mesh(mesh: Mesh) -> dict:
    small = len(mesh.vertices) <= np.iinfo(np.uint16).max
    return {"vertices": encode(mesh.vertices), "faces": encode(mesh.faces, "<u2" if small else "<u4"), "index": "<u2" if small else "<u4"}


def _contacts(forces: np.ndarray) -> dict:
    worlds, frames, points, _ = forces.shape
    flat = forces.reshape(worlds * frames, points, 3)
    active = np.linalg.norm(flat, axis=-1) > 0
    slot, index = np.nonzero(active)
    start = np.concatenate([[0], np.cumsum(active.sum(axis=1))])
    return {"start": encode(start, "<i4"), "index": encode(index, "<i4"), "force": encode(flat[slot, index])}


def _shape(shape: Shape) -> dict:
    geometry = shape.geometry
    return {
        "link": shape.link,
        "group": shape.group,
        "type": geometry.type,
        "size": [float(v) for v in geometry.size],
        "radius": float(geometry.radius),
        "length": float(geometry.length),
        "normal": [float(v) for v in geometry.normal],
        "pose": [float(v) for v in np.asarray(shape.L_H_G, dtype=float).ravel()],
        "rgba": [float(v) for v in shape.rgba],
        "mesh": shape.mesh,
        "source": shape.source,
    }


def _model(view: ModelView) -> dict:
    model = view.model
    points = np.asarray(model.collidable_points, dtype=float).reshape(-1, 3)
    extent = float(np.ptp(view.poses[..., :3].reshape(-1, 3), axis=0).max()) if view.poses.size else 1.0
    return {
        "name": model.name,
        "links": list(model.link_names),
        "shapes": [_shape(shape) for shape in view.shapes],
        "points": encode(points),
        "point_link": [int(i) for i in model.point_link],
        "point_radius": float(np.clip(0.01 * extent, 0.004, 0.03)),
        "poses": encode(view.poses),
        "force_scale": float(view.force_scale),
        "max_arrow": float(max(0.5 * extent, 0.3)),
        "contacts": _contacts(view.forces) if view.forces is not None else None,
    }


def page(views: list[ModelView], meshes: list[Mesh], times: np.ndarray, offsets: np.ndarray, title: str) -> str:
    """The HTML text of a view of ``views`` (all with the same ``W`` worlds and ``T`` frames at ``times``)."""
    data = {
        "title": title,
        "times": [float(t) for t in np.asarray(times, dtype=float)],
        "worlds": int(len(offsets)),
        "offsets": encode(offsets),
        "meshes": [_mesh(mesh) for mesh in meshes],
        "models": [_model(view) for view in views],
    }
    text = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    parts = {
        "__TITLE__": html.escape(title),
        "__DATA__": text,
        "/*__THREE__*/": THREE_FILE.read_text(),
        "/*__VIEWER__*/": (_HERE / "viewer.js").read_text(),
    }
    return _PLACEHOLDER.sub(lambda match: parts[match.group(0)], (_HERE / "page.html").read_text())


def embedded_data(text: str) -> dict:
    """The data object of a page written by :func:`page` (ValueError if ``text`` is not one)."""
    match = re.search(r'<script type="application/json" id="jaxsim-data">(.*?)</script>', text, re.DOTALL)
    if match is None:
        raise ValueError("not a jaxsim_like view: no embedded data")
    return json.loads(match.group(1))


def decode(text: str, dtype: str = "<f4") -> np.ndarray:
    """The flat array of a base64 field of :func:`embedded_data`."""
    return np.frombuffer(base64.b64decode(text), dtype=dtype)
