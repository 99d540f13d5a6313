"""The terrain the soft contacts push against: a plane, a height function, and static boxes.

Every query returns, per point, a penetration depth ``(P,)`` [m] (positive inside, zero or
negative outside) and the outward unit normal ``(P, 3)`` of the surface nearest to the point.
A swept point (a ball of radius ``r`` around its centre ``p``) touches at ``p - r n``: its depth
is the centre's plus ``r`` (exact against a plane and a static box; to first order in the
slope under a height function), see :func:`touch`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import spatial
from ..pytree import pytree_dataclass
from .collision.geometry import box_closest


@pytree_dataclass(static=["height_function"])
class Terrain:
    """The ground ``{x : plane_normal . x <= plane_offset}`` (or, with ``height_function``, the
    region under ``z = height_function(x, y)``), plus static boxes (obstacles, steps).

    ``box_transforms (B, 4, 4)``: ``W_H_box``; ``box_half_extents (B, 3)`` [m].
    ``height_function(x, y) -> z`` must be written with ``jax.numpy``; its normal comes from
    automatic differentiation.
    """

    plane_normal: jax.Array
    plane_offset: jax.Array
    box_transforms: jax.Array
    box_half_extents: jax.Array
    height_function: Callable[[jax.Array, jax.Array], jax.Array] | None = None

    @staticmethod
    def plane(height: float = 0.0, normal=(0.0, 0.0, 1.0), *, point=None) -> "Terrain":
        """A plane with the given unit ``normal`` through ``point`` (default ``(0, 0, height)``)."""
        n = np.asarray(normal, dtype=float)
        if n.shape != (3,) or not np.isfinite(n).all() or np.linalg.norm(n) == 0:
            raise ValueError(f"normal must be a non-zero finite 3-vector, got {normal!r}")
        n = n / np.linalg.norm(n)
        p = np.array([0.0, 0.0, height]) if point is None else np.asarray(point, dtype=float)
        return Terrain(
            plane_normal=jnp.asarray(n),
            plane_offset=jnp.asarray(float(n @ p)),
            box_transforms=jnp.zeros((0, 4, 4)),
            box_half_extents=jnp.zeros((0, 3)),
        )

    @staticmethod
    def heightmap(height_function: Callable[[jax.Array, jax.Array], jax.Array]) -> "Terrain":
        """The region under ``z = height_function(x, y)`` (a jax.numpy function)."""
        return dataclasses.replace(Terrain.plane(), height_function=height_function)

    def with_boxes(self, transforms, half_extents) -> "Terrain":
        """This terrain plus static boxes ``W_H_box (B, 4, 4)`` of half extents ``(B, 3)`` [m]."""
        transforms = jnp.asarray(transforms, dtype=float).reshape(-1, 4, 4)
        half_extents = jnp.asarray(half_extents, dtype=float).reshape(-1, 3)
        if transforms.shape[0] != half_extents.shape[0]:
            raise ValueError("transforms and half_extents must describe the same number of boxes")
        return dataclasses.replace(
            self,
            box_transforms=jnp.concatenate([self.box_transforms, transforms]),
            box_half_extents=jnp.concatenate([self.box_half_extents, half_extents]),
        )

    @staticmethod
    def of(description, default: "Terrain | None" = None) -> "Terrain":
        """The terrain of a world file's static geometry ``description`` (a
        :class:`~jaxsim_like.parsers.description.TerrainDescription`, the ``terrain`` of
        ``load_world``'s description): its ground (``default`` where it has none, by default the
        plane z = 0) and its static boxes. None: ``default``."""
        base = Terrain.plane() if default is None else default
        if description is None:
            return base
        if description.ground_normal is not None:
            base = dataclasses.replace(Terrain.plane(normal=description.ground_normal, point=description.ground_point),
                                       box_transforms=base.box_transforms, box_half_extents=base.box_half_extents)
        if len(description.box_names) == 0:
            return base
        return base.with_boxes(description.box_transforms, description.box_half_extents)


def _ground(terrain: Terrain, points: jax.Array) -> tuple[jax.Array, jax.Array]:
    if terrain.height_function is None:
        n = terrain.plane_normal / spatial.safe_norm(terrain.plane_normal)
        return terrain.plane_offset - spatial.dot(points, n), jnp.broadcast_to(n, points.shape)

    def height(xy):
        return terrain.height_function(xy[0], xy[1])

    z, gradient = jax.vmap(jax.value_and_grad(height))(points[:, :2])
    normal = jnp.concatenate([-gradient, jnp.ones_like(z)[:, None]], axis=-1)
    normal = spatial.normalize(normal)
    return (z - points[:, 2]) * normal[:, 2], normal


def _boxes(terrain: Terrain, points: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Depth ``(P, B)`` of each point in each box (inside: to the nearest face; outside: minus the
    distance to the box) and the outward normal ``(P, B, 3)`` of the box's nearest surface point."""
    R = terrain.box_transforms[:, :3, :3]
    local = jnp.einsum("bji,pbj->pbi", R, points[:, None, :] - terrain.box_transforms[None, :, :3, 3])
    per_box = jax.vmap(box_closest, in_axes=(0, 0))
    _, local_normal, distance = jax.vmap(per_box, in_axes=(0, None))(local, terrain.box_half_extents)
    return -distance, jnp.einsum("bij,pbj->pbi", R, local_normal)


def touch(terrain: Terrain, centres: jax.Array, radii: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Swept points of ``centres (P, 3)`` and ``radii (P,)`` [m] against the terrain: their depth
    ``(P,)`` [m] (positive inside), the outward normal ``(P, 3)`` below them and the contact
    points ``p - r n`` ``(P, 3)`` [m] (the material point of each ball nearest the surface)."""
    depth, normal = penetration(terrain, centres, radii)
    return depth, normal, centres - radii[:, None] * normal


def penetration(terrain: Terrain, points: jax.Array, radii: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
    """Depth ``(P,)`` [m] (positive inside) and outward normal ``(P, 3)`` of the deepest surface at
    ``points (P, 3)``, the centres of balls of ``radii (P,)`` [m] (None: points)."""
    depth, normal = _penetration(terrain, points)
    return (depth, normal) if radii is None else (depth + radii, normal)


def _penetration(terrain: Terrain, points: jax.Array) -> tuple[jax.Array, jax.Array]:
    depth, normal = _ground(terrain, points)
    if terrain.box_transforms.shape[0] == 0:
        return depth, normal
    box_depth, box_normal = _boxes(terrain, points)
    all_depths = jnp.concatenate([depth[:, None], box_depth], axis=1)
    all_normals = jnp.concatenate([normal[:, None], box_normal], axis=1)
    deepest = jnp.argmax(all_depths, axis=1)
    return jnp.max(all_depths, axis=1), jnp.take_along_axis(all_normals, deepest[:, None, None], axis=1)[:, 0]
