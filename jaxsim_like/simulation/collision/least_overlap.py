"""The least overlap of two cylinders: their penetration depth wherever their sides, rims and caps meet.

Along a unit direction ``n`` (from b towards a) two cylinders overlap by

    ``o(n) = h_a |n . e_a| + r_a sqrt(1 - (n . e_a)^2) + h_b |n . e_b| + r_b sqrt(1 - (n . e_b)^2) - n . (c_a - c_b)``,

each one's extent along ``n`` from its centre (both are symmetric) less the distance of their
centres along it; the least of ``o`` over directions is their penetration depth (the shortest
translation that separates them). ``o`` has creases where ``n`` lies across an axis (``n . e =
0``: a side's normals) and cusps along the axes (the caps' normals), and the least overlap of two
cylinders often lies on a crease or where two cross (side on side), so it is found by sampling,
not by Newton's method: :data:`GENERIC` directions spread over the sphere in a frame of the pair,
:data:`CREASE` directions on each crease, the caps' and the sides' common normals, then
:data:`SPREADS` rounds of directions around the best so far, each with its projections onto both
creases (a crease's least is then sampled on the crease itself). The slot lies midway between the
two cylinders' points farthest into each other along the least direction (on a side or a cap
where that direction meets one flat: the point of it nearest to the other's).

Gradients: the depth moves with the poses as ``o`` at the sampled direction, which turns with the
pair's frame and stays on its crease (the least's own motion drops out where it is smooth, and a
crease's is followed); where the sampled best switches, the depth's slope may jump by the
sampling's error.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...parsers.shapes import fibonacci_sphere
from ..rims import Rings
from .cylinder import round_reach
from .geometry import across_axis, perpendicular, tolerance, unit
from .points import cylinder_distance
from .slots import Slots


GENERIC = fibonacci_sphere(64)
"""Directions spread over the sphere (in the pair's frame: a's axis, and across it towards b)."""
CREASE = 32
"""Directions on each crease, evenly turned about the axis."""
_CREASE_COS, _CREASE_SIN = np.cos(2 * np.pi * np.arange(CREASE) / CREASE), np.sin(2 * np.pi * np.arange(CREASE) / CREASE)
SPREADS = (0.3, 0.05, 0.008)
"""[rad] how far the directions of each refining round lie from the best so far."""
_RING = np.concatenate([radius * np.stack([np.cos(turn), np.sin(turn)], axis=-1)
                        for radius, turn in ((0.5, np.linspace(0, 2 * np.pi, 8, endpoint=False)),
                                             (1.0, np.linspace(0, 2 * np.pi, 8, endpoint=False) + np.pi / 8))])
_FLAT = 1e-9  # [-] a direction closer than this to a side's or a cap's normal meets it flat
RING_POINTS = 8
"""Points per rim ring of :func:`rim_depth` (a cylinder's default rim points: two rings of 8)."""
_RING_COS, _RING_SIN = np.cos(2 * np.pi * np.arange(RING_POINTS) / RING_POINTS), np.sin(2 * np.pi * np.arange(RING_POINTS) / RING_POINTS)
MISSED_MARGIN, MISSED_SHARE = 2e-3, 0.05
"""A least overlap deeper than the deepest slot by less than ``MISSED_MARGIN`` of the smaller
radius and ``MISSED_SHARE`` of that slot's depth is the slots' own: sampled, it exceeds the true
depth by much less, and a slot of its own may take a contact along another direction than the
least overlap's (two cans' caps along an axis), as deep within a few percent."""


def _onto(n: jax.Array, axis: jax.Array, fallback: jax.Array) -> jax.Array:
    """The unit directions ``n (K, 3)`` moved across ``axis`` onto its crease (``fallback (K, 3)``
    where one lies along it)."""
    across = across_axis(n, axis)
    squared = jnp.sum(across**2, axis=-1, keepdims=True)
    ok = squared > 1e-24
    return jnp.where(ok, across / jnp.sqrt(jnp.where(ok, squared, 1.0)), fallback)


def _farthest(n: jax.Array, centre: jax.Array, axis: jax.Array, size: jax.Array, toward: jax.Array) -> jax.Array:
    """The point ``(3,)`` of the cylinder farthest along the unit ``n (3,)``; where ``n`` meets its
    side or a cap flat, the point of that generator or cap nearest to ``toward (3,)``."""
    along = n @ axis
    offset = toward - centre
    axial = jnp.where(jnp.abs(along) > _FLAT, jnp.sign(along) * size[1], jnp.clip(offset @ axis, -size[1], size[1]))
    radial, width = unit(across_axis(n, axis), perpendicular(axis))
    beside, distance = unit(across_axis(offset, axis), radial)
    radial = jnp.where(width > _FLAT, size[0] * radial, jnp.minimum(distance, size[0]) * beside)
    return centre + axial * axis + radial


def least_overlap(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """1 slot: the least overlap of the cylinders a and b (world poses ``H (4, 4)``, sizes ``(3,)``:
    radius, half length) and its direction, the normal from b towards a (see the module)."""
    axis_a, axis_b = H_a[:3, 2], H_b[:3, 2]
    offset = H_a[:3, 3] - H_b[:3, 3]
    dtype = offset.dtype

    def overlap(n: jax.Array) -> jax.Array:  # n (K, 3)
        cylinder = jnp.asarray(True)
        return jax.vmap(lambda d: round_reach(H_a, size_a, cylinder, d) + round_reach(H_b, size_b, cylinder, d))(n) - n @ offset

    def crease(axis: jax.Array) -> jax.Array:
        u = unit(across_axis(-offset, axis), perpendicular(axis))[0]
        v = jnp.cross(axis, u)
        return _CREASE_COS.astype(dtype)[:, None] * u + _CREASE_SIN.astype(dtype)[:, None] * v

    u = unit(across_axis(-offset, axis_a), perpendicular(axis_a))[0]
    frame = jnp.stack([u, jnp.cross(axis_a, u), axis_a])
    sides = unit(jnp.cross(axis_a, axis_b), u)[0]
    # The spread directions, both creases, the caps' and the sides' common normals, and the centres' direction.
    candidates = jnp.concatenate([GENERIC.astype(dtype) @ frame, crease(axis_a), crease(axis_b),
                                  jnp.stack([axis_a, -axis_a, axis_b, -axis_b, sides, -sides, unit(offset, u)[0]])])
    best = candidates[jnp.argmin(overlap(candidates))]
    for spread in SPREADS:
        first = perpendicular(best)
        ring = best + spread * (_RING[:, :1].astype(dtype) * first + _RING[:, 1:].astype(dtype) * jnp.cross(best, first))
        ring = ring / jnp.linalg.norm(ring, axis=-1, keepdims=True)
        around = jnp.concatenate([best[None], ring, _onto(ring, axis_a, ring), _onto(ring, axis_b, ring)])
        best = around[jnp.argmin(overlap(around))]
    depth = overlap(best[None])[0]
    on_b = _farthest(best, H_b[:3, 3], axis_b, size_b, H_a[:3, 3])
    on_a = _farthest(-best, H_a[:3, 3], axis_a, size_a, on_b)
    on_b = _farthest(best, H_b[:3, 3], axis_b, size_b, on_a)
    return Slots((0.5 * (on_a + on_b))[None], best[None], depth[None], jnp.ones((1,), bool))


def missed_depth(slots: Slots, least: Slots, bound: jax.Array, H_a: jax.Array, size_a: jax.Array, H_b: jax.Array,
                 size_b: jax.Array) -> Slots:
    """``slots`` of the cylinders a and b (their first slot may take the other's place) with the
    first carrying what they miss of their ``least`` overlap (:func:`least_overlap`, no deeper than
    ``bound`` [m], the two's overlap along any other direction): where that exceeds both their
    deepest valid slot and the deepest of their rim points (:func:`rim_depth`, the rims' contacts
    of the pair table's points) by more than :data:`MISSED_MARGIN` of the smaller radius and
    :data:`MISSED_SHARE` of that depth, the first slot takes the least overlap's position and
    normal, and its depth grows by that excess (continuously from its own, or from 0 where it
    was no contact)."""
    rims = jnp.maximum(rim_depth(H_a, size_a, H_b, size_b), rim_depth(H_b, size_b, H_a, size_a))
    known = jnp.maximum(jnp.max(jnp.where(slots.valid, slots.depth, 0.0)), jnp.maximum(rims, 0.0))  # what touches, if anything
    margin = tolerance(known.dtype, MISSED_MARGIN) * jnp.minimum(size_a[0], size_b[0])
    excess = jnp.minimum(least.depth[0], bound) - (1 + MISSED_SHARE) * known - margin
    take = excess > 0
    own = jnp.where(slots.valid[0], jnp.maximum(slots.depth[0], 0.0), 0.0)
    grown = least._replace(depth=(own + excess)[None])
    return jax.tree.map(lambda slot, instead: slot.at[0].set(jnp.where(take, instead[0], slot[0])), slots, grown)


def rim_depth(H: jax.Array, size: jax.Array, H_other: jax.Array, size_other: jax.Array) -> jax.Array:
    """How deep [m] the cylinder at ``H (4, 4)`` of ``size (3,)`` presses the deepest point of its
    rims' rings into the cylinder at ``H_other`` (negative: none touches): each ring of
    :data:`RING_POINTS` points turned as the pair table's rim points are (:mod:`..rims`: its first
    point where the other's outward normal at the cap's centre points into the cap's plane)."""
    axis, R_other, origin = H[:3, 2], H_other[:3, :3], H_other[:3, 3]
    caps = H[:3, 3] + jnp.stack([size[1], -size[1]])[:, None] * axis
    normal = jax.vmap(lambda centre: R_other @ cylinder_distance(R_other.T @ (centre - origin), size_other)[1])(caps)
    rings = Rings(caps, jnp.broadcast_to(axis, caps.shape), jnp.broadcast_to(perpendicular(axis), caps.shape))
    first = rings.direction(normal)
    second = jnp.cross(axis, first)
    cos, sin = (x.astype(axis.dtype)[:, None] for x in (_RING_COS, _RING_SIN))
    points = caps[:, None] + size[0] * (cos * first[:, None] + sin * second[:, None])
    distance = jax.vmap(lambda p: cylinder_distance(R_other.T @ (p - origin), size_other)[0])(points.reshape(-1, 3))
    return -jnp.min(distance)
