"""Collidable points of collision shapes, in the link frame (numpy only).

Contact is detected at *swept points*: a centre and a radius ``r >= 0``, the ball of that radius
around the centre (a corner has ``r = 0``). Every shape is reduced to swept points whose union
holds the surface that can touch the terrain first:

- box: the 8 corners, plus ``box_edge_samples`` evenly spaced points inside each of the
  12 edges (default 0: corners only), radius 0;
- sphere: its centre, of its radius (exact);
- capsule: the two ends of its segment, of its radius (exact against a plane: a capsule lying
  down rests on both, standing on one);
- ellipsoid: ``sphere_samples`` points of a Fibonacci lattice on the unit sphere, both poles
  included (default 50), scaled by the radii, radius 0; ``sphere_samples = None`` gives the
  exact ellipsoid's one point, its -z pole, which the step moves to the ellipsoid's deepest
  point along the terrain's normal (:mod:`jaxsim_like.simulation.ellipsoids`; the shape is then
  also an ellipsoid shape, :func:`~jaxsim_like.dynamics.tree.link_shapes`);
- cylinder: two rings of ``cylinder_samples`` points on the rims at z = +-length/2
  (default 16 per ring; 8 through :class:`jaxsim_like.ContactSampling`), radius 0, the first of
  each ring on the shape's x axis; the step turns each ring about the axis towards the surface it
  meets (:func:`rim_frames`, :mod:`jaxsim_like.simulation.rims`);
- mesh: the vertices of its convex hull (the only ones that can touch a plane first), reduced to
  at most ``mesh_max_points`` by farthest-point sampling (deterministic, well spread, the most
  extremal first; default 200 here, 8 through :class:`jaxsim_like.ContactSampling`; 0 gives no
  points; None keeps every distinct vertex); a mesh whose file was not found warns and gives no points;
  with ``mesh_hulls = V``, the vertices of its convex hull of at most V vertices
  (:func:`mesh_hull`, the collision shape it then also is), every one of them;
- plane: no points (planes are terrain, not bodies).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from .description import Collision, Geometry, LinkDescription, SourceLocation
from .errors import ModelLoadError, warn
from .hulls import Hull, convex_hull
from .meshes import load_mesh_vertices

_GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))
_ON_RIM = 1e-9  # [m] relative to (1 + the cylinder's size): a point this close to a rim samples it
MESH_HULL_VERTICES = 16
"""The default vertex cap of a mesh's convex hull through :class:`jaxsim_like.ContactSampling`."""


class SweptPoints(NamedTuple):
    """Swept points in a link frame: ``centres (P, 3)`` [m] and ``radii (P,)`` [m] (0 for a corner)."""

    centres: np.ndarray
    radii: np.ndarray

    @staticmethod
    def of(points) -> "SweptPoints":
        """``points`` as swept points: :class:`SweptPoints` as they are, an array ``(P, 3)`` of radius 0."""
        if isinstance(points, SweptPoints):
            centres, radii = np.asarray(points.centres, dtype=float).reshape(-1, 3), np.asarray(points.radii, dtype=float).reshape(-1)
        else:
            centres = np.asarray(points, dtype=float).reshape(-1, 3)
            radii = np.zeros(len(centres))
        if radii.shape != (len(centres),) or not np.all(radii >= 0):
            raise ValueError(f"swept points need one radius >= 0 per centre; got {len(centres)} centres and radii {radii}")
        return SweptPoints(centres, radii)

    @staticmethod
    def concatenate(parts: list["SweptPoints"]) -> "SweptPoints":
        """The points of ``parts``, in order."""
        if not parts:
            return SweptPoints(np.zeros((0, 3)), np.zeros(0))
        return SweptPoints(np.concatenate([p.centres for p in parts]), np.concatenate([p.radii for p in parts]))


def collidable_points(
    collision: Collision,
    *,
    box_edge_samples: int = 0,
    sphere_samples: int | None = 50,
    cylinder_samples: int = 16,
    mesh_max_points: int | None = 200,
    mesh_hulls: int | None = None,
) -> SweptPoints:
    """The swept points of ``collision`` (centres ``(P, 3)`` [m] in the link frame, radii ``(P,)`` [m]).

    See the module docstring for what each shape gives and the defaults. Raises
    ValueError for sample counts out of range and :class:`ModelLoadError` for an
    unknown geometry type or a mesh file that cannot be read.
    """
    return _collidable_points(
        collision,
        _describe(collision, None),
        box_edge_samples=box_edge_samples,
        sphere_samples=sphere_samples,
        cylinder_samples=cylinder_samples,
        mesh_max_points=mesh_max_points,
        mesh_hulls=mesh_hulls,
    )


def link_collidable_points(link: LinkDescription, **options) -> SweptPoints:
    """The swept points of all collisions of ``link``, in the link frame.

    ``options`` are those of :func:`collidable_points`.
    """
    return SweptPoints.concatenate(
        [_collidable_points(collision, _describe(collision, link.name), **options) for collision in link.collisions]
    )


def _describe(collision: Collision, link: str | None) -> str:
    return f"collision '{collision.name}'" + (f" of link '{link}'" if link is not None else "")


def _collidable_points(
    collision: Collision,
    owner: str,
    *,
    box_edge_samples: int = 0,
    sphere_samples: int | None = 50,
    cylinder_samples: int = 16,
    mesh_max_points: int | None = 200,
    mesh_hulls: int | None = None,
) -> SweptPoints:
    if box_edge_samples < 0:
        raise ValueError(f"box_edge_samples must be >= 0, got {box_edge_samples}")
    if sphere_samples is not None and sphere_samples < 2:
        raise ValueError(f"sphere_samples must be >= 2 or None, got {sphere_samples}")
    if cylinder_samples < 3:
        raise ValueError(f"cylinder_samples must be >= 3, got {cylinder_samples}")
    if mesh_max_points is not None and mesh_max_points < 0:
        raise ValueError(f"mesh_max_points must be >= 0 or None, got {mesh_max_points}")
    if mesh_hulls is not None and mesh_hulls < 4:
        raise ValueError(f"mesh_hulls must be >= 4 or None, got {mesh_hulls}")
    geometry = collision.geometry
    kind = geometry.type
    radius = 0.0
    if kind == "box":
        G_points = box_points(np.asarray(geometry.size, dtype=float), box_edge_samples)
    elif kind == "sphere":
        G_points, radius = np.zeros((1, 3)), float(geometry.radius)
    elif kind == "ellipsoid" and sphere_samples is None:
        G_points = ellipsoid_pole(np.asarray(geometry.size, dtype=float))[None]
    elif kind == "ellipsoid":
        G_points = np.asarray(geometry.size, dtype=float) * fibonacci_sphere(sphere_samples)
    elif kind == "cylinder":
        G_points = rim_points(geometry.radius, geometry.length, cylinder_samples)
    elif kind == "capsule":
        G_points, radius = np.array([[0.0, 0.0, 0.5 * geometry.length], [0.0, 0.0, -0.5 * geometry.length]]), float(geometry.radius)
    elif kind == "mesh" and mesh_hulls is not None and (hull := mesh_hull(geometry, mesh_hulls)) is not None:
        G_points = hull.vertices
    elif kind == "mesh":
        G_points = _mesh_points(geometry, owner, collision.location, mesh_max_points)
    elif kind == "plane":
        G_points = np.zeros((0, 3))
    else:
        location = collision.location
        raise ModelLoadError(
            f"{owner}: unknown geometry type '{kind}'", file=location.file, line=location.line, element=location.element
        )
    L_H_G = np.asarray(collision.L_H_G, dtype=float)
    return SweptPoints(G_points @ L_H_G[:3, :3].T + L_H_G[:3, 3], np.full(len(G_points), radius))


def fibonacci_sphere(samples: int) -> np.ndarray:
    """``samples`` (>= 2) points ``(samples, 3)`` on the unit sphere, from +z to -z, poles included."""
    index = np.arange(samples)
    z = 1.0 - 2.0 * index / (samples - 1)
    ring = np.sqrt(np.clip(1.0 - z**2, 0.0, None))
    angle = _GOLDEN_ANGLE * index
    return np.stack([ring * np.cos(angle), ring * np.sin(angle), z], axis=1)


def ellipsoid_pole(radii: np.ndarray) -> np.ndarray:
    """The -z pole ``(3,)`` [m] of an ellipsoid of ``radii (3,)`` [m], in its frame: the point an
    exact ellipsoid touches the terrain by (moved at every step to its deepest point)."""
    return np.array([0.0, 0.0, -float(radii[2])])


def box_points(size: np.ndarray, edge_samples: int = 0) -> np.ndarray:
    """The 8 corners of a box of full ``size (3,)`` centred at the origin, then
    ``edge_samples`` evenly spaced points inside each of its 12 edges: ``(8 + 12 k, 3)``."""
    half = 0.5 * np.asarray(size, dtype=float)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    corners = signs * half
    if edge_samples == 0:
        return corners
    fractions = np.arange(1, edge_samples + 1) / (edge_samples + 1)
    edges = []
    for axis in range(3):
        for start in corners[corners[:, axis] < 0]:
            end = start.copy()
            end[axis] = half[axis]
            edges.append(start + fractions[:, None] * (end - start))
    return np.concatenate([corners, *edges], axis=0)


def rim_points(radius: float, length: float, samples: int) -> np.ndarray:
    """Two rings of ``samples`` points of ``radius`` at z = +length/2 then -length/2: ``(2 n, 3)``."""
    angle = 2.0 * np.pi * np.arange(samples) / samples
    ring = np.stack([radius * np.cos(angle), radius * np.sin(angle), np.zeros(samples)], axis=1)
    return np.concatenate([ring + [0.0, 0.0, 0.5 * length], ring - [0.0, 0.0, 0.5 * length]], axis=0)


RIM_COLUMNS = 9
"""The columns of :func:`rim_frames`: a rim's cap centre, its cylinder's axis and its phase-0 direction."""


def rim_frames(points: np.ndarray, radii: np.ndarray, cylinders: list[tuple[np.ndarray, float, float]]) -> np.ndarray:
    """``(P, 9)``: for each of the ``points (P, 3)`` [m] of ``radii (P,)`` (link frame) that lies on a
    rim of one of the ``cylinders`` (each ``(L_H_S (4, 4), radius, half length)`` [m], link frame),
    the centre of that rim's cap [m], the cylinder's axis and its phase-0 direction (the shape's x
    axis, where :func:`rim_points` puts a ring's first point), all in the link frame; zeros for the
    other points (swept points of a radius never are rim points). The step turns each ring about
    the axis towards the surface it meets (:mod:`jaxsim_like.simulation.rims`)."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    frames = np.zeros((len(points), RIM_COLUMNS))
    for L_H_S, radius, half_length in cylinders:
        R, origin = np.asarray(L_H_S, dtype=float)[:3, :3], np.asarray(L_H_S, dtype=float)[:3, 3]
        local = (points - origin) @ R
        tolerance = _ON_RIM * (1.0 + radius + half_length)
        on_rim = (np.abs(np.abs(local[:, 2]) - half_length) <= tolerance) & (np.abs(np.hypot(local[:, 0], local[:, 1]) - radius) <= tolerance)
        on_rim &= (np.asarray(radii, dtype=float).reshape(-1) == 0) & ~np.any(frames != 0, axis=1)
        centres = origin + np.outer(np.sign(local[:, 2]) * half_length, R[:, 2])
        frames[on_rim] = np.concatenate([centres, np.broadcast_to(R[:, 2], centres.shape), np.broadcast_to(R[:, 0], centres.shape)], axis=1)[on_rim]
    return frames


def farthest_points(points: np.ndarray, count: int) -> np.ndarray:
    """Indices (sorted) of ``count`` of ``points (N, 3)`` chosen by farthest-point sampling,
    starting from the point farthest from the centroid (lowest index on ties)."""
    if count >= len(points):
        return np.arange(len(points))
    chosen = [int(np.argmax(np.linalg.norm(points - points.mean(axis=0), axis=1)))]
    distance = np.linalg.norm(points - points[chosen[0]], axis=1)
    for _ in range(count - 1):
        chosen.append(int(np.argmax(distance)))
        distance = np.minimum(distance, np.linalg.norm(points - points[chosen[-1]], axis=1))
    return np.sort(np.array(chosen))


def hull_vertices(points: np.ndarray, directions: int = 500) -> np.ndarray:
    """Indices (sorted) of the points of ``points (N, 3)`` that are extreme along one of
    ``directions`` directions spread over the sphere: vertices of the convex hull (all of them
    for a hull with fewer sharp corners than directions; no interior point is ever returned)."""
    if len(points) <= 4:
        return np.arange(len(points))
    centred = points - points.mean(axis=0)
    return np.unique(np.argmax(centred @ fibonacci_sphere(directions).T, axis=0))


def _reduce(vertices: np.ndarray, max_points: int | None) -> np.ndarray:
    """At most ``max_points`` well-spread hull vertices of ``vertices``; all of them for None."""
    if max_points is None:
        return vertices
    if max_points == 0:
        return vertices[:0]
    hull = vertices[hull_vertices(vertices)] if len(vertices) > max_points else vertices
    return hull[farthest_points(hull, max_points)]


def _mesh_points(geometry: Geometry, owner: str, where: SourceLocation, max_points: int | None) -> np.ndarray:
    if geometry.vertices is not None:
        return _reduce(np.asarray(geometry.vertices, dtype=float).reshape(-1, 3), max_points)
    if max_points == 0:
        return np.zeros((0, 3))
    if geometry.path is None:
        message = f"mesh '{geometry.uri}' of {owner} was not found: it has no collidable points"
        warn(message, file=where.file, line=where.line, element=where.element)
        return np.zeros((0, 3))
    vertices = np.asarray(load_mesh_vertices(geometry.path, geometry.scale), dtype=float).reshape(-1, 3)
    _, first = np.unique(vertices, axis=0, return_index=True)
    return _reduce(vertices[np.sort(first)], max_points)


def mesh_hull(geometry: Geometry, max_vertices: int) -> Hull | None:
    """The convex hull (mesh frame, scaled) of a mesh ``geometry`` with at most ``max_vertices``
    vertices (:func:`.hulls.convex_hull`), or None for a mesh not found or without volume
    (it then keeps its sampled points). Computed once per file, scale and count."""
    if geometry.vertices is not None:
        return convex_hull(np.asarray(geometry.vertices, dtype=float), max_vertices)
    if geometry.path is None:
        return None
    return _file_hull(geometry.path, tuple(float(x) for x in geometry.scale), max_vertices)


@functools.lru_cache(maxsize=512)
def _file_hull(path: str, scale: tuple[float, float, float], max_vertices: int) -> Hull | None:
    return convex_hull(np.asarray(load_mesh_vertices(path, scale), dtype=float), max_vertices)
