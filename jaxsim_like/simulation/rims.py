"""Cylinder rims: rings of collidable points turned, at every query, towards the surface they meet.

A cylinder's rims are sampled by two rings of ``K`` points (:func:`~jaxsim_like.parsers.shapes.rim_points`,
the first of each ring on the shape's x axis). Fixed in the body, the rim's deepest point lies
between two samples as the cylinder rolls, and a lying cylinder rests deeper than its law says and
bumps over its samples. Here each ring is turned about the cylinder's axis ``a``, rigidly, so that
its first point lies at the rim's deepest point along the surface's outward normal ``n`` at the
cap's centre ``c``: ``c + r w`` with ``w`` the unit in-plane part of ``-n``, ``-(n - (n . a) a)``. The
rim's deepest point is then exact (lying, rolling, tilted on the rim), and a cap flat on a face
still rests on the regular ``K``-gon of its ring. Where the cap is parallel to the surface (every
rim point as deep) the direction blends into the ring's own (:data:`FLAT`): the points are smooth
functions of the pose, and finite in value and gradient everywhere.

A turned point is a new place on the body each query, as a swept point's contact is: its contact's
tangential memory stays with the point (its index), and the body's velocity at its place is the
material velocity there (zero at the bottom of a rolling rim, as under a rolling ball).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..dynamics import spatial

FLAT = 1e-3
"""The length ``s`` of the in-plane part ``u = -(n - (n . a) a)`` of the inward unit normal (the
sine of the angle between the cap and the surface) below which a ring turns less and less
towards the deepest direction and more towards its own ``e`` (its first point on the shape's x
axis): ``w`` is the direction of ``u + FLAT (1 - s / FLAT)^2 e`` (``u`` alone from ``s = FLAT``,
``e`` alone at ``s = 0``)."""


class Rims(NamedTuple):
    """The rings of collidable points ``(P, 3)`` each, in one frame: the ``centre`` [m] of each point's
    cap, the cylinder's unit ``axis`` and the ring's unit phase-0 direction ``phase`` (all zero, the
    centre at the link's origin, for a point on no rim: it never turns)."""

    centre: jax.Array
    axis: jax.Array
    phase: jax.Array

    @staticmethod
    def placed(rims: jax.Array, H: jax.Array) -> "Rims":
        """The :class:`Rims` of a model's ``point_rim (P, 9)`` (link frame) on the poses ``H (P, 4, 4)``
        of the points' links."""
        R, origin = H[:, :3, :3], H[:, :3, 3]
        centre, axis, phase = (jnp.einsum("pij,pj->pi", R, rims[:, 3 * k : 3 * k + 3]) for k in range(3))
        return Rims(centre + origin, axis, phase)

    def turned(self, points: jax.Array, normal: jax.Array) -> jax.Array:
        """``points (P, 3)`` [m] of the rings turned about their axes so that each ring's first point
        lies at its rim's deepest point along the outward ``normal (P, 3)`` of the surface it meets
        (at its cap's centre); the points on no rim as they are."""
        a, e = self.axis, self.phase
        deepest = -(normal - spatial.dot(normal, a)[:, None] * a)
        # The ring's own direction weighs in only below FLAT: above it, the deepest point is exact.
        weight = FLAT * jnp.clip(1 - spatial.safe_norm(deepest) / FLAT, 0.0, 1.0) ** 2
        blended = deepest + weight[:, None] * e
        squared = spatial.dot(blended, blended)
        # Zero only where the two cancel exactly: the ring's own direction there, finite gradients.
        usable = squared > 1e-24
        safe = jnp.where(usable[:, None], blended, e)
        norm = spatial.safe_norm(safe)
        w = safe / jnp.where(norm > 0, norm, 1.0)[:, None]
        offset = points - self.centre
        x, y = spatial.dot(offset, e), spatial.dot(offset, jnp.cross(a, e))
        return points + x[:, None] * (w - e) + y[:, None] * jnp.cross(a, w - e)
