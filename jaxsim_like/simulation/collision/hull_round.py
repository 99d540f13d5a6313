"""Spheres and capsules against convex hulls (:class:`.hull.HullData` in world axes): the exact
signed distance of points of the segment to the hull, as :func:`.box.capsule_box` takes them
against a box."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .box import end_fades, repeats_not
from .geometry import safe_divide
from .hull import HullData
from .slots import Slots


def signed_distance(point: jax.Array, hull: HullData) -> tuple[jax.Array, jax.Array]:
    """Signed distance [m] (negative inside) of ``point (3,)`` to ``hull`` and the outward unit
    normal there: the largest ``L . point - h(L)`` (``h`` the hull's support) over the face normals,
    the directions from each vertex and from each edge's nearest point to the point, which hold
    the direction of the nearest feature (and no direction gives more)."""
    from_vertex = point - hull.vertices
    start, along = hull.edges[:, 0], hull.edges[:, 1] - hull.edges[:, 0]
    fraction = jnp.clip(safe_divide(jnp.sum((point - start) * along, axis=-1), jnp.sum(along**2, axis=-1)), 0.0, 1.0)
    from_edge = point - (start + fraction[:, None] * along)
    free = jnp.concatenate([from_vertex, from_edge])
    squared = jnp.sum(free**2, axis=-1)
    usable = squared > 1e-24
    free = free / jnp.sqrt(jnp.where(usable, squared, 1.0))[:, None]
    directions = jnp.concatenate([hull.planes[:, :3], free])
    gap = directions @ point - jnp.max(jax.lax.optimization_barrier(directions @ hull.vertices.T), axis=1)  # apart, as in .hull._axes
    gap = jnp.where(jnp.concatenate([jnp.ones(hull.planes.shape[0], bool), usable]), gap, -jnp.inf)
    best = jnp.argmax(gap)
    return gap[best], directions[best]


_NEAREST_ITERATIONS = 40  # golden-section steps: the bracket shrinks 0.618^40 ~ 4e-9 of the segment


def round_hull(H_a: jax.Array, size_a: jax.Array, b: HullData) -> Slots:
    """3 slots of the capsule (sphere: no length) of ``size_a`` (radius, half length along its z)
    at ``H_a`` against the hull ``b`` (world axes), normal from b towards a: points of its segment
    as balls of its radius against the hull (:func:`signed_distance`), as
    :func:`.box.capsule_box` takes them: the two ends of the part of the segment over the hull
    (the hull projected on its axis) and the point of the segment nearest to the hull (the signed
    distance is convex along the segment: a golden-section search of fixed length), the second
    and third shallower within a radius of the others (:func:`.box.end_fades`)."""
    radius, half = size_a[0], size_a[1]
    axis, centre = H_a[:3, 2], H_a[:3, 3]
    along = (b.vertices - centre) @ axis
    low, high = jnp.clip(jnp.min(along), -half, half), jnp.clip(jnp.max(along), -half, half)

    def distance(t):
        return signed_distance(centre + t * axis, b)[0]

    ratio = 0.5 * (math.sqrt(5.0) - 1.0)

    def narrowed(_, bracket):
        left, right = bracket
        x1, x2 = right - ratio * (right - left), left + ratio * (right - left)
        closer = distance(x1) < distance(x2)
        return jnp.where(closer, left, x1), jnp.where(closer, x2, right)

    left, right = jax.lax.fori_loop(0, _NEAREST_ITERATIONS, narrowed, (-half, half))
    nearest = jax.lax.stop_gradient(0.5 * (left + right))

    def ball(t):
        point = centre + t * axis
        gap, normal = signed_distance(point, b)
        return point - 0.5 * (gap + radius) * normal, normal, radius - gap

    position, normal, depth = jax.vmap(ball)(jnp.stack([low, high, nearest]))
    return Slots(position, normal, depth - end_fades(low, high, nearest, radius, depth), repeats_not(low, high, nearest, centre.dtype, half + radius))
