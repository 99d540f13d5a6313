"""Spheres and capsules against convex hulls (:class:`.hull.HullData`, in the axes of the slots): the exact
signed distance of points of the segment to the hull, as :func:`.box.capsule_box` takes them
against a box."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .box import end_fades, repeats_not
from .geometry import first_least, safe_divide, segments_closest, unit
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


def _nearest(centre: jax.Array, axis: jax.Array, half: jax.Array, hull: HullData) -> jax.Array:
    """``t`` in ``[-half, half]``: the point ``centre + t axis`` of the segment (``axis`` a unit
    vector) nearest to ``hull``, or deepest in it, among candidates in closed form. The signed
    distance is convex along the segment. Inside the hull it is the largest of the faces' plane
    distances, linear in ``t``: its least is at an end or where two are equal. Outside it is the
    distance to the nearest vertex or edge (or face, at a constant distance while the segment runs
    along it): each of the segment's closest approaches to a vertex and to an edge
    (:func:`.geometry.segments_closest`) is a candidate, valued at its distance to that vertex or
    edge, no less than the hull's distance there and equal to it at the least; the ends at their
    signed distances. Fixed work, no iteration."""
    normals, offsets = hull.planes[:, :3], hull.planes[:, 3]
    alpha, beta = normals @ centre - offsets, normals @ axis  # the planes' distances alpha + beta t
    first, second = np.triu_indices(alpha.shape[0], 1)  # each pair of planes once
    crossing = safe_divide(alpha[second] - alpha[first], beta[first] - beta[second], -half)
    ends = jnp.stack([-half, half])
    inner = jnp.clip(jnp.concatenate([ends, crossing]), -half, half)
    depth = jnp.max(alpha[None, :] + inner[:, None] * beta[None, :], axis=1)  # the signed distance where < 0
    middle = 0.5 * (hull.edges[:, 0] + hull.edges[:, 1])
    direction, length = jax.vmap(unit)(hull.edges[:, 1] - hull.edges[:, 0], jnp.zeros_like(middle))
    to_edge, on_edge = jax.vmap(segments_closest, in_axes=(None, None, None, 0, 0, 0))(centre, axis, half, middle, direction, 0.5 * length)
    to_vertex = jnp.clip((hull.vertices - centre) @ axis, -half, half)
    apart = jnp.concatenate([
        jnp.stack([signed_distance(centre + t * axis, hull)[0] for t in (-half, half)]),
        jnp.linalg.norm(centre + to_vertex[:, None] * axis - hull.vertices, axis=-1),
        jnp.linalg.norm(centre + to_edge[:, None] * axis - middle - on_edge[:, None] * direction, axis=-1),
    ])
    outer = jnp.concatenate([ends, to_vertex, to_edge])
    return jnp.where(jnp.min(depth) < 0.0, inner[first_least(depth)], outer[jnp.argmin(apart)])


def round_hull(H_a: jax.Array, size_a: jax.Array, b: HullData) -> Slots:
    """3 slots of the capsule (sphere: no length) of ``size_a`` (radius, half length along its z)
    at ``H_a`` against the hull ``b`` (in the same axes, those of the slots), normal from b towards a: points of its segment
    as balls of its radius against the hull (:func:`signed_distance`), as
    :func:`.box.capsule_box` takes them: the two ends of the part of the segment over the hull
    (the hull projected on its axis) and the point of the segment nearest to the hull
    (:func:`_nearest`), the second and third shallower within a radius of the others
    (:func:`.box.end_fades`)."""
    radius, half = size_a[0], size_a[1]
    axis, centre = H_a[:3, 2], H_a[:3, 3]
    along = (b.vertices - centre) @ axis
    low, high = jnp.clip(jnp.min(along), -half, half), jnp.clip(jnp.max(along), -half, half)

    nearest = jax.lax.stop_gradient(_nearest(centre, axis, half, b))

    def ball(t):
        point = centre + t * axis
        gap, normal = signed_distance(point, b)
        return point - 0.5 * (gap + radius) * normal, normal, radius - gap

    position, normal, depth = jax.vmap(ball)(jnp.stack([low, high, nearest]))
    return Slots(position, normal, depth - end_fades(low, high, nearest, radius, depth), repeats_not(low, high, nearest, centre.dtype, half + radius))
