"""Collidable (swept) points against solid shapes: signed distance, outward normal, one slot per point.

Shape kinds are coded ``SPHERE, CAPSULE, BOX, CYLINDER, HULL, ELLIPSOID = 0, 1, 2, 3, 4, 5`` (:data:`KIND_CODES`);
sizes as in :class:`~jaxsim_like.dynamics.model.Model`: sphere ``(radius, 0, 0)``, capsule and
cylinder ``(radius, half length along z, 0)``, box half extents. Points never meet hulls nor ellipsoids here
(a hull's size is its bounding radius: the broad phase's, :func:`.broad.bounding_radius`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...dynamics.tree import BOX, CAPSULE, CYLINDER, ELLIPSOID, HULL, SPHERE
from .geometry import box_closest, to_frame, unit
from .slots import Slots

KIND_CODES = {SPHERE: 0, CAPSULE: 1, BOX: 2, CYLINDER: 3, HULL: 4, ELLIPSOID: 5}


def _round(p: jax.Array, radius: jax.Array, half_length: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Capsule (a sphere: half length 0): signed distance and outward normal; on the segment +x."""
    t = jnp.clip(p[2], -half_length, half_length)
    normal, distance = unit(p - jnp.array([0.0, 0.0, 1.0], p.dtype) * t, jnp.array([1.0, 0.0, 0.0], p.dtype))
    return distance - radius, normal


def cylinder_distance(p: jax.Array, size: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Signed distance [m] and outward normal ``(3,)`` of a point ``p (3,)`` in the frame of the
    cylinder of ``size`` ``(radius, half length along z, 0)``."""
    radial, rho = unit(p * jnp.array([1.0, 1.0, 0.0], p.dtype), jnp.array([1.0, 0.0, 0.0], p.dtype))
    up = jnp.array([0.0, 0.0, 1.0], p.dtype) * jnp.where(p[2] >= 0, 1.0, -1.0)
    to_side, to_cap = rho - size[0], jnp.abs(p[2]) - size[1]
    inside = (to_side <= 0) & (to_cap <= 0)
    outside_normal, outside_distance = unit(radial * jnp.maximum(to_side, 0.0) + up * jnp.maximum(to_cap, 0.0), radial)
    inside_normal = jnp.where(to_side > to_cap, radial, up)
    return (
        jnp.where(inside, jnp.maximum(to_side, to_cap), outside_distance),
        jnp.where(inside, inside_normal, outside_normal),
    )


def signed_distance(S_p: jax.Array, kind: jax.Array, size: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Signed distance [m] (negative inside) and outward normal ``(3,)`` (shape axes) of a point
    ``S_p (3,)`` in the frame of a shape of ``kind`` (code, traced or not) and ``size (3,)``."""
    half_length = jnp.where(kind == KIND_CODES[SPHERE], 0.0, size[1])
    round_distance, round_normal = _round(S_p, size[0], half_length)
    _, box_normal, box_distance = box_closest(S_p, size)
    to_cylinder, cylinder_normal = cylinder_distance(S_p, size)
    distances = jnp.stack([round_distance, round_distance, box_distance, to_cylinder])
    normals = jnp.stack([round_normal, round_normal, box_normal, cylinder_normal])
    return distances[kind], normals[kind]


def point_shape(point: jax.Array, radius: jax.Array, kind: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """1 slot: the swept point of a (the ball of ``radius`` [m] around the world ``point (3,)``)
    against the shape of ``kind`` at ``H_b (4, 4)``: ``radius`` deeper than its centre, at the
    middle of the ball's surface point ``point - radius n`` and the shape's."""
    distance, S_normal = signed_distance(to_frame(H_b, point), kind, size_b)
    normal = H_b[:3, :3] @ S_normal
    position = point - 0.5 * (distance + radius) * normal
    return Slots(position[None], normal[None], (radius - distance)[None], jnp.ones((1,), bool))
