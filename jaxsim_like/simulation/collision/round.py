"""The narrow phase of round shapes: capsules, and spheres as capsules of no length.

A sphere is ``size = (radius, 0, 0)`` at its frame's origin; a capsule ``(radius, half length, 0)``
around the segment of its frame's z axis. A sphere is the capsule of its radius and a segment of
length zero: :func:`capsule_capsule` serves sphere-sphere, sphere-capsule and capsule-capsule
pairs alike (its second slot is never a candidate when either segment has no length).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .geometry import closest_on_segment, perpendicular, segments_closest, unit
from .slots import Slots


def spheres(centre_a: jax.Array, radius_a: jax.Array, centre_b: jax.Array, radius_b: jax.Array, fallback: jax.Array) -> Slots:
    """One slot between two spheres; ``fallback (3,)`` is the normal of coincident centres."""
    normal, distance = unit(centre_a - centre_b, fallback)
    position = 0.5 * (centre_a - radius_a * normal + centre_b + radius_b * normal)
    return Slots(position[None], normal[None], (radius_a + radius_b - distance)[None], jnp.ones((1,), bool))


def capsule_capsule(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """2 slots of shapes a and b (world poses ``H (4, 4)``, sizes ``(3,)``; the normal from b towards
    a): the closest points of the two segments, and the end of the overlap of the segments
    (b projected on a) farther from them, paired with its nearest point on b. The second is a
    candidate only where it lies at least the smaller radius away along a's axis, so crossing
    capsules touch at one point and side by side ones at the two ends of their overlap (they rest
    without rocking). Intersecting axes push a along ``axis_a x axis_b``."""
    axis_a, axis_b = H_a[:3, 2], H_b[:3, 2]
    centre_a, centre_b = H_a[:3, 3], H_b[:3, 3]
    half_a, half_b = size_a[1], size_b[1]
    s, t = segments_closest(centre_a, axis_a, half_a, centre_b, axis_b, half_b)
    across = unit(jnp.cross(axis_a, axis_b), perpendicular(axis_a))[0]
    fallback = jnp.where(jnp.dot(across, centre_a - centre_b) >= 0, 1.0, -1.0) * across
    b = jnp.dot(axis_a, axis_b)
    middle = jnp.dot(centre_b - centre_a, axis_a)
    low = jnp.clip(middle - half_b * jnp.abs(b), -half_a, half_a)
    high = jnp.clip(middle + half_b * jnp.abs(b), -half_a, half_a)
    s_far = jnp.where(jnp.abs(low - s) > jnp.abs(high - s), low, high)
    point_far = centre_a + s_far * axis_a
    t_far = closest_on_segment(point_far, centre_b, axis_b, half_b)
    first = spheres(centre_a + s * axis_a, size_a[0], centre_b + t * axis_b, size_b[0], fallback)
    second = spheres(point_far, size_a[0], centre_b + t_far * axis_b, size_b[0], fallback)
    apart = jnp.abs(s_far - s) >= jnp.minimum(size_a[0], size_b[0])
    return Slots(
        jnp.concatenate([first.position, second.position]),
        jnp.concatenate([first.normal, second.normal]),
        jnp.concatenate([first.depth, second.depth]),
        jnp.stack([True, apart]),
    )
