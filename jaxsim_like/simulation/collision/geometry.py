"""Small differentiable geometric helpers shared by the narrow phases (single pairs; vmap them).

Every function stays finite, with finite gradients, at its degenerate configurations (zero
vectors, parallel segments, points on a surface): divisions and square roots are guarded with
``jnp.where`` on both branches.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...dynamics.spatial import safe_sqrt

TINY = 1e-12


def tolerance(dtype, floor: float) -> float:
    """A relative tolerance: ``floor`` in float64, no less than 50 ulps in lower precisions (float32)."""
    return max(floor, 50 * float(jnp.finfo(dtype).eps))


def unit(v: jax.Array, fallback: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(v / |v|, |v|)`` for ``v (3,)``, or ``(fallback, 0)`` where ``|v|`` is (numerically) zero."""
    squared = jnp.dot(v, v)
    nonzero = squared > TINY**2
    norm = jnp.sqrt(jnp.where(nonzero, squared, 1.0))
    return jnp.where(nonzero, v / norm, fallback), jnp.where(nonzero, norm, 0.0)


def perpendicular(u: jax.Array) -> jax.Array:
    """A unit vector ``(3,)`` perpendicular to the unit vector ``u (3,)`` (x or y crossed with it)."""
    helper = jnp.where(jnp.abs(u[0]) < 0.9, jnp.array([1.0, 0.0, 0.0], u.dtype), jnp.array([0.0, 1.0, 0.0], u.dtype))
    return unit(jnp.cross(u, helper), jnp.array([0.0, 0.0, 1.0], u.dtype))[0]


def safe_divide(numerator: jax.Array, denominator: jax.Array, default: jax.Array | float = 0.0) -> jax.Array:
    """``numerator / denominator`` where ``|denominator| > TINY``, else ``default``."""
    ok = jnp.abs(denominator) > TINY
    return jnp.where(ok, numerator / jnp.where(ok, denominator, 1.0), default)


def first_least(x: jax.Array) -> jax.Array:
    """``jnp.argmin`` of ``x (n,)`` (no NaN), as two plain reductions: the least, then the first
    index that holds it (XLA's CPU backend runs an argmin's paired reduction element by element)."""
    return jnp.min(jnp.where(x == jnp.min(x), jnp.arange(x.shape[0]), x.shape[0] - 1))


def closest_on_segment(point: jax.Array, centre: jax.Array, axis: jax.Array, half_length: jax.Array) -> jax.Array:
    """Parameter ``t`` in ``[-half_length, half_length]`` of the point of the segment
    ``centre + t axis`` (unit ``axis``) closest to ``point``."""
    return jnp.clip(jnp.dot(point - centre, axis), -half_length, half_length)


def segments_closest(
    centre_a: jax.Array, axis_a: jax.Array, half_a: jax.Array, centre_b: jax.Array, axis_b: jax.Array, half_b: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """Parameters ``(s, t)`` of the closest points ``centre_a + s axis_a`` and ``centre_b + t axis_b``
    of two segments (unit axes, half lengths >= 0; Ericson's clamped solution). Parallel segments
    take ``s`` at the start of the overlap of b's projection on a (or a's nearest end); so do
    segments parallel to within the dtype's rounding (:func:`tolerance`), whose solution it would
    scatter along the overlap."""
    r = centre_a - centre_b
    b = jnp.dot(axis_a, axis_b)
    c = jnp.dot(axis_a, r)
    f = jnp.dot(axis_b, r)
    denominator = 1.0 - b * b
    parallel = denominator < tolerance(denominator.dtype, 1e-10)  # 1 - b b rounds to ~eps when parallel
    start = jnp.clip(-c - half_b * jnp.abs(b), -half_a, half_a)
    s = jnp.where(parallel, start, jnp.clip(safe_divide(b * f - c, denominator), -half_a, half_a))
    t = jnp.clip(b * s + f, -half_b, half_b)
    s = jnp.clip(b * t - c, -half_a, half_a)
    return s, t


def box_closest(point: jax.Array, half_extents: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """For a ``point (3,)`` in the frame of a box of ``half_extents (3,)``: the nearest point of its
    surface ``(3,)``, the outward normal there ``(3,)`` and the signed distance (negative inside;
    inside, the face of least penetration; a point on the centre picks the +axis face; a point
    outside but numerically on the surface takes that face's normal too)."""
    clipped = jnp.clip(point, -half_extents, half_extents)
    to_faces = half_extents - jnp.abs(point)
    inside = jnp.all(to_faces >= 0)
    face = jnp.argmin(to_faces)
    sign = jnp.where(point[face] >= 0, 1.0, -1.0)
    face_normal = jax.nn.one_hot(face, 3, dtype=point.dtype) * sign
    outward, distance = unit(point - clipped, face_normal)
    on_face = point + face_normal * to_faces[face]
    return (
        jnp.where(inside, on_face, clipped),
        jnp.where(inside, face_normal, outward),
        jnp.where(inside, -to_faces[face], distance),
    )


def to_frame(H: jax.Array, point: jax.Array) -> jax.Array:
    """``point (3,)`` (world) in the frame whose world pose is ``H (4, 4)``."""
    return H[:3, :3].T @ (point - H[:3, 3])


def across_axis(v: jax.Array, axis: jax.Array) -> jax.Array:
    """The part of ``v (..., 3)`` across the unit ``axis (3,)``."""
    return v - (v @ axis)[..., None] * axis


def cayley_turn(cos: jax.Array, sin: jax.Array, n: jax.Array, d: jax.Array | float) -> tuple[jax.Array, jax.Array]:
    """The unit turn ``(cos, sin)`` turned by ``2 atan(n / d)`` (``d > 0``): its Cayley rotation,
    with no sine or cosine (XLA's CPU fusion recomputes a chain of them in every kernel that
    reads it) and no division but the one that keeps it a unit."""
    c, s, scale = d**2 - n**2, 2 * n * d, d**2 + n**2
    return (c * cos - s * sin) / scale, (c * sin + s * cos) / scale


def nearest_to_rim(start: jax.Array, direction: jax.Array, t: jax.Array, radius: jax.Array, cap: jax.Array, steps: int,
                   bounds: tuple[jax.Array, jax.Array] | None = None) -> jax.Array:
    """The parameters ``(..., k)`` of the points of the lines ``start + t direction`` (a cylinder's
    frame; ``start``, ``direction`` ``(..., 1, 3)`` or ``(3,)``) nearest to its rim's circle of
    ``radius`` at height ``cap`` (signed, along z): ``steps`` Newton steps on half the squared
    distance from ``t (..., k)``, each clipped to ``bounds`` (low, high) where given (projected)."""
    def across(u: jax.Array, v: jax.Array) -> jax.Array:
        return u[..., 0] * v[..., 0] + u[..., 1] * v[..., 1]

    flat = across(direction, direction)
    if bounds is not None:
        t = jnp.clip(t, *bounds)
    for _ in range(steps):
        p = start + t[..., None] * direction
        rho = safe_sqrt(across(p, p))
        safe_rho = jnp.where(rho > 0, rho, 1.0)
        slope = across(p, direction) / safe_rho
        gradient = (rho - radius) * slope + (p[..., 2] - cap) * direction[..., 2]
        gauss_newton = slope**2 + direction[..., 2] ** 2
        curvature = gauss_newton + (rho - radius) * (flat - slope**2) / safe_rho
        # Inside the circle the distance may curve down: there the Gauss-Newton curvature still descends.
        curvature = jnp.where(curvature > 0, curvature, gauss_newton)
        step = jnp.where((curvature > 0) & (rho > 0), gradient / jnp.where(curvature > 0, curvature, 1.0), 0.0)
        t = t - step
        if bounds is not None:
            t = jnp.clip(t, *bounds)
    return t
