"""Exact ellipsoids against the terrain: their one collidable point moved, at every query, to the
ellipsoid's deepest point along the surface's outward normal.

An ellipsoid of centre ``c`` and axes ``M = R diag(radii)`` (``x = c + M y``, ``|y| <= 1``) is
deepest along the outward normal ``n`` of a surface at its support point in the direction ``-n``,
``c - M M^T n / |M^T n|``: smooth in the pose and the normal (``M`` is invertible), so its depth
and its gradients are those of the exact shape at every pose. On a plane the normal is the
plane's; on a height function or the terrain's boxes, the normal at the point found is taken
again :data:`NORMAL_PASSES` times (a fixed number: the same program every step).

A model's exact ellipsoids are its :attr:`~jaxsim_like.dynamics.model.Model.point_ellipsoid`
(the pole of each, :func:`~jaxsim_like.parsers.shapes.ellipsoid_pole`, with its ellipsoid's
centre and axes). As a cylinder's turned rim points (:mod:`.rims`), a moved point is a new place
on the body each query: its contact's tangential memory stays with the point, and the body's
velocity at its place is the material velocity there.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from ..dynamics import spatial

NORMAL_PASSES = 3
"""The times the terrain's normal is taken again at the deepest point found (after the first, at
the ellipsoid's centre): exact on a plane from the first, converging on curved terrain."""


def axes(rows: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The centre ``(..., 3)`` [m] and axes ``M (..., 3, 3)`` [m] of ellipsoid rows ``(..., 12)``
    (:attr:`~jaxsim_like.dynamics.model.Model.point_ellipsoid`), in their own frame."""
    return rows[..., :3], rows[..., 3:].reshape(rows.shape[:-1] + (3, 3))


def support(centre: jax.Array, M: jax.Array, direction: jax.Array) -> jax.Array:
    """``(..., 3)`` [m]: the farthest point along ``direction (..., 3)`` (need not be unit) of the
    ellipsoids of ``centre (..., 3)`` and axes ``M (..., 3, 3)``: ``c + M M^T u / |M^T u|``
    (the centre where the axes are zero: no ellipsoid)."""
    local = jnp.einsum("...ji,...j->...i", M, direction)
    norm = spatial.safe_norm(local)
    return centre + jnp.einsum("...ij,...j->...i", M, local / jnp.where(norm > 0, norm, 1.0)[..., None])


def placed(rows: jax.Array, H: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The centre ``(P, 3)`` and axes ``(P, 3, 3)`` of ellipsoid ``rows (P, 12)`` (link frames) on
    the poses ``H (P, 4, 4)`` of their links."""
    centre, M = axes(rows)
    R = H[..., :3, :3]
    return jnp.einsum("...ij,...j->...i", R, centre) + H[..., :3, 3], R @ M


def deepest(centre: jax.Array, M: jax.Array, normal_at: Callable[[jax.Array], jax.Array]) -> jax.Array:
    """``(P, 3)``: each ellipsoid's (``centre (P, 3)``, axes ``M (P, 3, 3)``) deepest point along
    the outward normal ``normal_at(points (P, 3)) -> (P, 3)`` of the surface it meets, the normal
    taken at the centre and then :data:`NORMAL_PASSES` times at the point found."""
    point = support(centre, M, -normal_at(centre))
    for _ in range(NORMAL_PASSES):
        point = support(centre, M, -normal_at(point))
    return point
