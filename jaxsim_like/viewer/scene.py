"""The shapes a viewer draws for a model, in the frames of the model's links (numpy only).

Each link of the :class:`~jaxsim_like.dynamics.model.Model` gets the visuals of the description
links that were lumped into it (a fixed joint's child is a frame of its parent, and its shapes
move by that frame's ``L_H_F``), in the ``visual`` group; a link that has no visual at all is
drawn with its collision shapes there instead, in a colour of its own (planes: the colour of
the ground). Every collision shape is
also in the ``collision`` group. Meshes are read once per file and scale; a mesh given only as
vertices (MJCF, through MuJoCo's compiler) has no triangles and is not drawn.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..dynamics.model import Model
from ..parsers.description import Geometry, ModelDescription, SourceLocation
from ..parsers.errors import warn
from ..parsers.meshes import load_mesh_triangles

VISUAL, COLLISION = "visual", "collision"

# Distinct colours for links without their own (tab10, without grey).
PALETTE = (
    (0.12, 0.47, 0.71), (1.00, 0.50, 0.05), (0.17, 0.63, 0.17), (0.84, 0.15, 0.16), (0.58, 0.40, 0.74),
    (0.55, 0.34, 0.29), (0.89, 0.47, 0.76), (0.74, 0.74, 0.13), (0.09, 0.75, 0.81),
)
DEFAULT_VISUAL_RGBA = (0.7, 0.7, 0.72, 1.0)
COLLISION_RGBA = (1.0, 0.55, 0.1, 0.45)
GROUND_RGBA = (0.84, 0.86, 0.88, 1.0)


@dataclasses.dataclass
class Mesh:
    """Triangles of one mesh file at one scale: ``vertices (V, 3)`` [m] and ``faces (F, 3)``."""

    vertices: np.ndarray
    faces: np.ndarray


@dataclasses.dataclass
class Shape:
    """One drawn shape: the model link ``link`` it moves with, its ``group`` (visual or collision),
    its pose ``L_H_G (4, 4)`` in that link's frame, its geometry, colour ``rgba`` and, for a mesh,
    the index of its triangles in the mesh table (``mesh``), ``source``: the description link."""

    link: int
    group: str
    L_H_G: np.ndarray
    geometry: Geometry
    rgba: tuple[float, float, float, float]
    source: str
    mesh: int | None = None


def lumped_frames(model: Model, description: ModelDescription) -> dict[str, tuple[int, np.ndarray]]:
    """``description link -> (model link index, L_H_D (4, 4))`` for every link of the description
    that is a link of the model or was lumped into one (kept as a frame of the model)."""
    placement = {name: (i, np.eye(4)) for i, name in enumerate(model.link_names)}
    transforms = np.asarray(model.frame_transform)
    for f, name in enumerate(model.frame_names):
        if name not in placement:
            placement[name] = (int(model.frame_link[f]), transforms[f])
    return {link.name: placement[link.name] for link in description.links if link.name in placement}


def model_shapes(model: Model, description: ModelDescription, meshes: list[Mesh], cache: dict) -> list[Shape]:
    """The shapes of ``model`` (see the module docstring); meshes are appended to ``meshes``,
    ``cache`` maps ``(path, scale)`` to their index so that a file shared by several shapes or
    models is embedded once. A mesh that cannot be found warns and is left out."""
    placement = lumped_frames(model, description)
    has_visuals = np.zeros(model.number_of_links, dtype=bool)
    for link in description.links:
        if link.name in placement and link.visuals:
            has_visuals[placement[link.name][0]] = True
    shapes: list[Shape] = []
    for link in description.links:
        if link.name not in placement:
            continue
        index, L_H_D = placement[link.name]
        own = PALETTE[index % len(PALETTE)] + (1.0,)
        for visual in link.visuals:
            rgba = visual.rgba if visual.rgba is not None else DEFAULT_VISUAL_RGBA
            shapes.append(Shape(index, VISUAL, L_H_D @ visual.L_H_G, visual.geometry, rgba, link.name))
        for collision in link.collisions:
            pose = L_H_D @ collision.L_H_G
            if not has_visuals[index]:
                rgba = GROUND_RGBA if collision.geometry.type == "plane" else own
                shapes.append(Shape(index, VISUAL, pose, collision.geometry, rgba, link.name))
            shapes.append(Shape(index, COLLISION, pose, collision.geometry, COLLISION_RGBA, link.name))
    kept = []
    for shape in shapes:
        if shape.geometry.type == "mesh":
            shape.mesh = _mesh_index(shape.geometry, meshes, cache, description.link(shape.source).location)
            if shape.mesh is None:
                continue
        kept.append(shape)
    return kept


def _mesh_index(geometry: Geometry, meshes: list[Mesh], cache: dict, where: SourceLocation) -> int | None:
    if geometry.path is None:
        if geometry.vertices is None:
            warn(f"mesh '{geometry.uri}' was not found: the viewer leaves it out", file=where.file, line=where.line, element=where.element)
        return None
    key = (geometry.path, tuple(geometry.scale))
    if key not in cache:
        vertices, faces = load_mesh_triangles(geometry.path, geometry.scale)
        meshes.append(Mesh(vertices, faces))
        cache[key] = len(meshes) - 1
    return cache[key]
