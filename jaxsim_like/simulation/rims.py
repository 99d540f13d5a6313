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

A model's rings are its :attr:`~jaxsim_like.dynamics.model.Model.ring_rim` (ring 0 is no ring):
each ring's direction is computed once (:meth:`Rings.turns`), and its points move with it by
their two coordinates on the ring (:func:`coordinates`, :func:`turned`).

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
axis): ``w`` is the direction of ``(s / FLAT) u + FLAT (1 - s / FLAT)^2 e`` (``u`` alone from
``s = FLAT``, ``e`` alone at ``s = 0``). Near ``s = 0`` the ring turns by about ``(s / FLAT)^2``:
a cap flat on a face, whose ``u`` is rounding, keeps its ring still (``u`` weighed in
unscaled, float32 rounding of the normal turned the ring by a thousand times as much)."""


class Rings(NamedTuple):
    """``R`` rings of collidable points, ``(R, 3)`` each, in one frame: the ``centre`` [m] of each
    ring's cap, its cylinder's unit ``axis`` and its unit phase-0 direction ``phase`` (all zero,
    the centre at its link's origin, for ring 0, no ring: its points never turn)."""

    centre: jax.Array
    axis: jax.Array
    phase: jax.Array

    @staticmethod
    def of(ring_rim: jax.Array) -> "Rings":
        """The :class:`Rings` of ``ring_rim (R, 9)`` in its own frame."""
        return Rings(ring_rim[..., :3], ring_rim[..., 3:6], ring_rim[..., 6:9])

    @staticmethod
    def placed(ring_rim: jax.Array, H: jax.Array) -> "Rings":
        """The :class:`Rings` of a model's ``ring_rim (R, 9)`` (link frame) on the poses ``H (R, 4, 4)``
        of the rings' links."""
        R, origin = H[..., :3, :3], H[..., :3, 3]
        centre, axis, phase = (jnp.einsum("...ij,...j->...i", R, ring_rim[..., 3 * k : 3 * k + 3]) for k in range(3))
        return Rings(centre + origin, axis, phase)

    def direction(self, normal: jax.Array) -> jax.Array:
        """The unit direction ``w (R, 3)`` each ring's first point turns to: its rim's deepest point
        along the outward ``normal (R, 3)`` of the surface the ring meets (at its cap's centre)."""
        a, e = self.axis, self.phase
        deepest = -(normal - spatial.dot(normal, a)[..., None] * a)
        # The ring's own direction weighs in only below FLAT: above it, the deepest point is exact.
        flatness = jnp.clip(spatial.safe_norm(deepest) / FLAT, 0.0, 1.0)
        blended = flatness[..., None] * deepest + (FLAT * (1 - flatness) ** 2)[..., None] * e
        squared = spatial.dot(blended, blended)
        # Zero only where the two cancel exactly: the ring's own direction there, finite gradients.
        usable = squared > 1e-24
        safe = jnp.where(usable[..., None], blended, e)
        norm = spatial.safe_norm(safe)
        return safe / jnp.where(norm > 0, norm, 1.0)[..., None]

    def turns(self, normal: jax.Array) -> jax.Array:
        """``(R, 2, 3)``: how far a point of each ring moves per unit of its two ring coordinates
        (:func:`coordinates`) when the ring turns towards the outward ``normal (R, 3)``
        (:meth:`direction`): ``w - e`` and ``a x (w - e)``."""
        moved = self.direction(normal) - self.phase
        return jnp.stack([moved, jnp.cross(self.axis, moved)], axis=-2)

    def at(self, points: jax.Array) -> jax.Array:
        """``(P, 2)``: where ``points (P, 3)`` (this frame), each on its own ring of these (``P``
        rings), lie about their ring's cap centre along its phase-0 direction ``e`` and along
        ``a x e`` (zero on ring 0)."""
        offset = points - self.centre
        return jnp.stack([spatial.dot(offset, self.phase), spatial.dot(offset, jnp.cross(self.axis, self.phase))], axis=-1)


def coordinates(points: jax.Array, ring_rim: jax.Array, point_ring: jax.Array) -> jax.Array:
    """``(P, 2)``: :meth:`Rings.at` of ``points (P, 3)`` (link frame) on their rings ``point_ring
    (P,)`` of ``ring_rim (R, 9)``."""
    return Rings.of(ring_rim[point_ring]).at(points)


def turned(points: jax.Array, coordinates: jax.Array, turns: jax.Array) -> jax.Array:
    """``points (P, 3)`` [m] turned with their rings: moved by their ``coordinates (P, 2)``
    (:func:`coordinates`) times their ring's ``turns (P, 2, 3)`` (:meth:`Rings.turns`, gathered per
    point): each ring's first point at its rim's deepest point, the points on no ring as they are."""
    return points + coordinates[..., :1] * turns[..., 0, :] + coordinates[..., 1:] * turns[..., 1, :]
