"""A spatial tendon's segment around a sphere or a cylinder (MuJoCo's ``mju_wrap``, without side
sites).

In the shape's frame, the segment's ends ``p0, p1`` are projected on a plane: for a sphere the
plane through its centre and both ends (axes ``p0 / |p0|`` and its normal in the plane), for a
cylinder the plane normal to its axis ``z``. In that plane the tendon leaves the straight line
``d0 -> d1`` only when it crosses the circle of radius ``r`` (both ends outside it); it then runs
along a tangent from ``d0`` to the circle, an arc, and a tangent to ``d1``. Of the two pairs of
tangent points (one on each side), the one of the shorter chord is taken unless its tangents
cross each other; the arc is measured from the first tangent point to the second on that side.
On a cylinder the path climbs along ``z`` in proportion to the length travelled in the plane,
and the arc becomes a helix ``sqrt(arc^2 + height^2)``. The segment's length is ``|p0 - t0| +
arc + |t1 - p1|`` with the tangent points ``t0, t1``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import spatial

MIN_VALUE = 1e-15
"""MuJoCo's ``mjMINVAL``: lengths and determinants below it count as zero."""


def _intersect(p1: jax.Array, p2: jax.Array, p3: jax.Array, p4: jax.Array) -> jax.Array:
    """``(w,)``: whether the 2D segments ``p1 -> p2`` and ``p3 -> p4`` ``(w, 2)`` cross."""
    det = (p4[:, 1] - p3[:, 1]) * (p2[:, 0] - p1[:, 0]) - (p4[:, 0] - p3[:, 0]) * (p2[:, 1] - p1[:, 1])
    safe = jnp.where(jnp.abs(det) < MIN_VALUE, 1.0, det)
    a = ((p4[:, 0] - p3[:, 0]) * (p1[:, 1] - p3[:, 1]) - (p4[:, 1] - p3[:, 1]) * (p1[:, 0] - p3[:, 0])) / safe
    b = ((p2[:, 0] - p1[:, 0]) * (p1[:, 1] - p3[:, 1]) - (p2[:, 1] - p1[:, 1]) * (p1[:, 0] - p3[:, 0])) / safe
    return (jnp.abs(det) >= MIN_VALUE) & (a >= 0) & (a <= 1) & (b >= 0) & (b <= 1)


def _circle(d0: jax.Array, d1: jax.Array, radius: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The 2D wrap of ``d0 -> d1 (w, 2)`` around the circle of ``radius (w,)`` at the origin:
    whether it wraps ``(w,)``, the tangent points ``(w, 2)`` and the arc length ``(w,)`` [m]."""
    square0, square1, r2 = jnp.sum(d0 * d0, -1), jnp.sum(d1 * d1, -1), radius**2
    difference = d1 - d0
    dd = jnp.sum(difference * difference, -1)
    along = jnp.clip(-jnp.sum(difference * d0, -1) / jnp.where(dd < MIN_VALUE, 1.0, dd), 0.0, 1.0)
    nearest = d0 + along[:, None] * difference
    crosses = (square0 >= r2) & (square1 >= r2) & (radius >= MIN_VALUE) & (dd >= MIN_VALUE) & (jnp.sum(nearest**2, -1) <= r2)
    # (Kept above the smallest normal number: a finite gradient where an end is inside the circle.)
    tiny = jnp.finfo(d0.dtype).tiny
    root0 = jnp.sqrt(jnp.maximum(square0 - r2, tiny))[:, None]
    root1 = jnp.sqrt(jnp.maximum(square1 - r2, tiny))[:, None]
    q0, q1 = jnp.where(square0 > 0, square0, 1.0)[:, None], jnp.where(square1 > 0, square1, 1.0)[:, None]
    r, rr = radius[:, None], r2[:, None]
    solutions, goodness = [], []
    for sign in (1.0, -1.0):
        s0 = (d0 * rr + sign * r * jnp.stack([d0[:, 1], -d0[:, 0]], -1) * root0) / q0
        s1 = (d1 * rr + sign * r * jnp.stack([-d1[:, 1], d1[:, 0]], -1) * root1) / q1
        good = -jnp.sum((s0 - s1) ** 2, -1)
        solutions.append((s0, s1))
        goodness.append(jnp.where(_intersect(d0, s0, d1, s1), -10000.0, good))
    first = goodness[0] > goodness[1]  # MuJoCo's solution 0, else 1
    t0 = jnp.where(first[:, None], solutions[0][0], solutions[1][0])
    t1 = jnp.where(first[:, None], solutions[0][1], solutions[1][1])
    wraps = crosses & ~_intersect(d0, t0, d1, t1)
    cross = t0[:, 1] * t1[:, 0] - t0[:, 0] * t1[:, 1]
    angle = jnp.arctan2(jnp.abs(cross), jnp.sum(t0 * t1, -1))  # in [0, pi], smooth where acos is not
    flip = ((cross > 0) & ~first) | ((cross < 0) & first)
    angle = jnp.where(flip, 2 * jnp.pi - angle, angle)
    return wraps, t0, t1, radius * angle


def _plane(p0: jax.Array, p1: jax.Array, sphere: np.ndarray) -> tuple[jax.Array, jax.Array]:
    """The in-plane axes ``(w, 3)`` of each wrap (shape frame): a sphere's through its centre and
    both ends, a cylinder's normal to its axis."""
    dtype = p0.dtype
    axis0 = p0 / jnp.where(spatial.safe_norm(p0) > 0, spatial.safe_norm(p0), 1.0)[:, None]
    normal = jnp.cross(p0, p1)
    size = spatial.safe_norm(normal)
    # Parallel ends: MuJoCo's normal to axis0 and the ones vector without axis0's largest component.
    a = jnp.abs(axis0)
    largest = jnp.where((a[:, 1] > a[:, 0]) & (a[:, 1] > a[:, 2]), 1, jnp.where((a[:, 2] > a[:, 0]) & (a[:, 2] > a[:, 1]), 2, 0))
    ones = 1.0 - jax.nn.one_hot(largest, 3, dtype=dtype)
    fallback = jnp.cross(axis0, ones)
    normal = jnp.where((size < MIN_VALUE)[:, None], fallback / spatial.safe_norm(fallback)[:, None], normal / jnp.where(size > 0, size, 1.0)[:, None])
    axis1 = jnp.cross(normal, axis0)
    axis1 = axis1 / jnp.where(spatial.safe_norm(axis1) > 0, spatial.safe_norm(axis1), 1.0)[:, None]
    count = p0.shape[0]
    x, y = jnp.broadcast_to(jnp.eye(3, dtype=dtype)[0], (count, 3)), jnp.broadcast_to(jnp.eye(3, dtype=dtype)[1], (count, 3))
    sphere = jnp.asarray(sphere)[:, None]
    return jnp.where(sphere, axis0, x), jnp.where(sphere, axis1, y)


def wrap_segments(
    G_p0: jax.Array, G_p1: jax.Array, G_H_W: jax.Array, radius: jax.Array, sphere: np.ndarray
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Segments from ``G_p0`` to ``G_p1 (w, 3)`` around shapes at ``G_H_W (w, 4, 4)`` of ``radius
    (w,)`` [m], spheres where the static ``sphere (w,)`` else cylinders (along their z): whether
    each wraps ``(w,)``, its tangent points ``(w, 3)`` and the length between them ``(w,)`` [m]
    (world axes in ``G``, see the module docstring)."""
    R, o = G_H_W[:, :3, :3], G_H_W[:, :3, 3]
    R_T = jnp.swapaxes(R, -1, -2)
    p0, p1 = spatial.rotate(R_T, G_p0 - o), spatial.rotate(R_T, G_p1 - o)
    axis0, axis1 = _plane(p0, p1, sphere)
    d0 = jnp.stack([jnp.sum(p0 * axis0, -1), jnp.sum(p0 * axis1, -1)], -1)
    d1 = jnp.stack([jnp.sum(p1 * axis0, -1), jnp.sum(p1 * axis1, -1)], -1)
    wraps, t0, t1, arc = _circle(d0, d1, radius)
    wraps = wraps & (spatial.safe_norm(p0) >= MIN_VALUE) & (spatial.safe_norm(p1) >= MIN_VALUE)
    r0 = axis0 * t0[:, :1] + axis1 * t0[:, 1:]
    r1 = axis0 * t1[:, :1] + axis1 * t1[:, 1:]
    # A cylinder's path climbs along z in proportion to the length travelled in the plane.
    before = spatial.safe_norm(p0[:, :2] - r0[:, :2])
    after = spatial.safe_norm(p1[:, :2] - r1[:, :2])
    total = before + arc + after
    total = jnp.where(total > 0, total, 1.0)
    z0 = p0[:, 2] + (p1[:, 2] - p0[:, 2]) * before / total
    z1 = p0[:, 2] + (p1[:, 2] - p0[:, 2]) * (before + arc) / total
    cylinder = ~jnp.asarray(sphere)
    r0 = jnp.where(cylinder[:, None], r0.at[:, 2].set(z0), r0)
    r1 = jnp.where(cylinder[:, None], r1.at[:, 2].set(z1), r1)
    arc = jnp.where(cylinder, jnp.sqrt(arc**2 + (z1 - z0) ** 2), arc)
    return wraps, spatial.rotate(R, r0) + o, spatial.rotate(R, r1) + o, arc
