"""Convex hulls of mesh vertices, computed once at load time (numpy only).

A :class:`Hull` is what the narrow phases of :mod:`jaxsim_like.simulation.collision.hull` need:
its vertices, its face planes, each face's polygon and its edges, in the mesh frame [m].
Meshes with more hull vertices than the cap keep a well-spread subset of them (the farthest-point
sample of :func:`.shapes.farthest_points`, the most extremal first), whose hull lies inside the
mesh's: the narrow phase's work grows with the square of the number of edges, so the cap keeps it
fixed and small.

Faces are found by enumeration: every plane through three of the (at most a few dozen) vertices
that leaves all of them on one side is a face plane; coplanar triangles merge into one polygon.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

_FLAT = 1e-6  # relative to the hull's extent: points this close to a plane lie on it


class Hull(NamedTuple):
    """A convex hull in its mesh frame: ``vertices (V, 3)`` [m]; ``planes (F, 4)``: each face's
    outward unit normal and offset ``(n, d)``, the face is ``n . x = d`` and the hull is
    ``n . x <= d``; ``faces (F, K, 3)`` [m]: each face's polygon, counter-clockwise seen from
    outside, padded by repeating its last corner; ``edges (E, 2, 3)`` [m]: each edge's two ends,
    once; ``edge_normals (E, 2, 3)``: the outward normals of the two faces that meet there."""

    vertices: np.ndarray
    planes: np.ndarray
    faces: np.ndarray
    edges: np.ndarray
    edge_normals: np.ndarray

    @property
    def radius(self) -> float:
        """The radius [m] of the ball about the mesh frame's origin that holds the hull."""
        return float(np.max(np.linalg.norm(self.vertices, axis=1)))


def convex_hull(points: np.ndarray, max_vertices: int) -> Hull | None:
    """The :class:`Hull` of ``points (N, 3)`` with at most ``max_vertices`` (>= 4) vertices, or
    None when they span no volume (fewer than 4 points, or all on one plane or line)."""
    from .shapes import farthest_points, hull_vertices

    if max_vertices < 4:
        raise ValueError(f"max_vertices must be >= 4, got {max_vertices}")
    points = np.unique(np.asarray(points, dtype=float).reshape(-1, 3), axis=0)
    if len(points) > max_vertices:
        points = points[hull_vertices(points)]
        points = points[farthest_points(points, max_vertices)]
    if len(points) < 4:
        return None
    extent = float(np.max(np.ptp(points, axis=0)))
    tolerance = _FLAT * extent
    planes = _face_planes(points, tolerance)
    if len(planes) < 4:
        return None
    distance = points @ planes[:, :3].T - planes[:, 3]  # (N, F)
    corner = np.sum(np.abs(distance) <= tolerance, axis=1) >= 3  # a vertex: on 3 faces at least (not inside a face or an edge)
    on_face = (np.abs(distance) <= tolerance) & corner[:, None]
    polygons = [_polygon(points, np.flatnonzero(on_face[:, f]), planes[f, :3]) for f in range(len(planes))]
    corners = max(len(p) for p in polygons)
    faces = np.stack([np.concatenate([p, np.repeat(p[-1:], corners - len(p))]) for p in polygons])
    faces_of: dict[tuple[int, int], list[int]] = {}
    for f, polygon in enumerate(polygons):
        for start, end in zip(polygon, np.roll(polygon, -1)):
            faces_of.setdefault((min(start, end), max(start, end)), []).append(f)
    edges = np.array(sorted(faces_of))
    normals = np.stack([planes[[faces_of[tuple(e)][0], faces_of[tuple(e)][-1]], :3] for e in edges])
    return Hull(points[corner], planes, points[faces], points[edges], normals)


def _face_planes(points: np.ndarray, tolerance: float) -> np.ndarray:
    """``(F, 4)``: the distinct planes through three of ``points`` with every point on or below."""
    triples = np.array(list(itertools.combinations(range(len(points)), 3)))
    a, b, c = points[triples[:, 0]], points[triples[:, 1]], points[triples[:, 2]]
    normal = np.cross(b - a, c - a)
    length = np.linalg.norm(normal, axis=1)
    keep = length > tolerance * np.max(np.ptp(points, axis=0))
    normal, a = normal[keep] / length[keep, None], a[keep]
    offset = np.sum(normal * a, axis=1)
    distance = points @ normal.T - offset  # (N, T)
    below, above = np.all(distance <= tolerance, axis=0), np.all(distance >= -tolerance, axis=0)
    flat = below & above  # every point on this plane: no volume
    if np.any(flat):
        return np.zeros((0, 4))
    sign = np.where(below, 1.0, -1.0)[below | above]
    candidates = np.concatenate([normal[below | above] * sign[:, None], (offset[below | above] * sign)[:, None]], axis=1)
    same = np.all(np.abs(candidates[:, None, :3] - candidates[None, :, :3]) < 1e-6, axis=-1) & (
        np.abs(candidates[:, None, 3] - candidates[None, :, 3]) <= tolerance)
    first = ~np.any(np.tril(same, -1), axis=1)  # no earlier candidate is the same plane
    return candidates[first]


def _polygon(points: np.ndarray, corners: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """The indices ``corners`` of ``points`` on a convex face, counter-clockwise about its outward ``normal``."""
    on = points[corners]
    centre = on.mean(axis=0)
    u = on[np.argmax(np.linalg.norm(on - centre, axis=1))] - centre
    u = u / np.linalg.norm(u)
    v = np.cross(normal, u)
    return corners[np.argsort(np.arctan2((on - centre) @ v, (on - centre) @ u))]
