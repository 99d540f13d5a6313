"""The narrow phase of an ellipsoid (b) against a sphere, a capsule or an ellipsoid (a): one slot.

Each shape is given by its support function. Shape a is an ellipsoid ``c_a + M_a y`` (``|y| <=
1``) swept along the segment ``t e``, ``|t| <= h``, by a ball of radius ``r`` (a sphere: ``M_a =
0, h = 0``; a capsule: ``M_a = 0``; an ellipsoid: ``h = r = 0``); b is an ellipsoid. Along a unit
normal ``n`` (from b towards a), the two overlap by

    ``s(n, t) = (c_b - c_a - t e) . n + |M_b^T n| + |M_a^T n| + r``,

b's farthest extent along ``n`` less a's nearest. For a given ``t``, ``min_n s`` is the signed
depth of the two convex shapes (their penetration where positive, less their distance where
negative; ``s`` is smooth in ``n``, both ellipsoids' support functions being so): it is found by
Newton's method on the unit sphere (:data:`NORMAL_STEPS` steps from the direction between the
centres, each step bounded and its Hessian shifted to be positive). The depth is concave in
``t`` (a minimum of functions affine in ``t``): the segment's deepest ``t`` is found by golden
section (:data:`SEGMENT_STEPS` steps, then compared with both ends), the normal of each step
started from the last one's. Fixed work, one program for every pair of the family.

Gradients: the depth at the optimum has the gradient of ``s`` there (the optimum's own motion
drops out); the normal's is that of one Newton step from the optimum with the pose's
derivatives (the implicit function theorem), so the contact's normal and place move with the
shapes as central differences see them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .geometry import perpendicular, unit
from .slots import Slots

NORMAL_STEPS = 10
"""Newton steps on the unit sphere that find the normal of one segment parameter."""
SEGMENT_STEPS = 20
"""Golden-section steps along a capsule's segment (the interval shrinks by 0.618 each)."""
_GOLDEN = 0.5 * (jnp.sqrt(5.0) - 1.0)
_LARGEST_TURN = 0.5  # [rad] the most one Newton step turns the normal


def _quadric(S: jax.Array, n: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``sqrt(n^T S n)``, its gradient ``(3,)`` and Hessian ``(3, 3)`` in ``n`` (all zero where it is)."""
    Sn = S @ n
    squared = jnp.dot(n, Sn)
    positive = squared > 1e-30
    q = jnp.sqrt(jnp.where(positive, squared, 1.0))
    gradient = jnp.where(positive, Sn / q, 0.0)
    hessian = jnp.where(positive, (S - jnp.outer(gradient, gradient)) / q, 0.0)
    return jnp.where(positive, q, 0.0), gradient, hessian


def _newton(n: jax.Array, offset: jax.Array, S_a: jax.Array, S_b: jax.Array, scale: jax.Array) -> jax.Array:
    """One bounded Newton step of the unit normal ``n`` towards the least of
    ``offset . n + |M_a^T n| + |M_b^T n|`` on the unit sphere (``S = M M^T``; ``scale`` [m], the
    shapes' size, sets how positive the shifted Hessian is kept)."""
    _, g_a, H_a = _quadric(S_a, n)
    _, g_b, H_b = _quadric(S_b, n)
    gradient = offset + g_a + g_b
    first = perpendicular(n)
    T = jnp.stack([first, jnp.cross(n, first)], axis=1)  # (3, 2): the tangent plane
    g = T.T @ gradient
    H = T.T @ (H_a + H_b) @ T - jnp.dot(n, gradient) * jnp.eye(2, dtype=n.dtype)
    a, b, c = H[0, 0], H[0, 1], H[1, 1]
    least = 0.5 * (a + c) - jnp.sqrt(0.25 * (a - c) ** 2 + b**2)
    shift = jnp.maximum(1e-6 * scale - least, 0.0)
    a, c = a + shift, c + shift
    step = -jnp.stack([c * g[0] - b * g[1], a * g[1] - b * g[0]]) / (a * c - b * b)
    length = jnp.sqrt(jnp.dot(step, step) + 1e-300)
    step = step * jnp.minimum(1.0, _LARGEST_TURN / length)
    moved = n + T @ step
    return moved / jnp.linalg.norm(moved)


def _overlap(n: jax.Array, offset: jax.Array, S_a: jax.Array, S_b: jax.Array, radius: jax.Array) -> jax.Array:
    """``s``: how far the shapes overlap along the unit normal ``n`` (see the module docstring)."""
    return jnp.dot(offset, n) + _quadric(S_a, n)[0] + _quadric(S_b, n)[0] + radius


def ellipsoid_round(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """1 slot of a sphere, capsule or ellipsoid a (``size_a``: a sphere's ``(radius, 0, 0)``, a
    capsule's ``(radius, half length along z, 0)``, an ellipsoid's radii; an ellipsoid is told by
    its third size) and an ellipsoid b of radii ``size_b (3,)`` (world poses ``H (4, 4)``; the normal
    from b towards a): the deepest point of a's segment and the normal there (see the module
    docstring), placed midway between the two surfaces."""
    dtype = H_a.dtype
    ellipsoid = size_a[2] > 0
    M_a = jnp.where(ellipsoid, H_a[:3, :3] * size_a[None, :], 0.0)
    radius = jnp.where(ellipsoid, 0.0, size_a[0])
    half = jnp.where(ellipsoid, 0.0, size_a[1])
    axis = H_a[:3, 2]
    M_b = H_b[:3, :3] * size_b[None, :]
    S_a, S_b = M_a @ M_a.T, M_b @ M_b.T
    scale = jnp.max(size_b) + jnp.max(size_a)
    centre = H_b[:3, 3] - H_a[:3, 3]  # c_b - c_a

    def solve(t, n):
        offset = centre - t * axis
        n = jax.lax.fori_loop(0, NORMAL_STEPS, lambda _, n: _newton(n, offset, S_a, S_b, scale), n)
        return _overlap(n, offset, S_a, S_b, radius), n

    fixed = jax.lax.stop_gradient
    start, _ = unit(-fixed(centre), jnp.array([0.0, 0.0, 1.0], dtype))
    lo, hi = -fixed(half), fixed(half)
    t1, t2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    f1, n1 = solve(t1, start)
    f2, n2 = solve(t2, n1)

    def golden(_, carry):
        lo, hi, t1, t2, f1, f2, n1, n2 = carry
        left = f1 > f2  # the deepest lies in [lo, t2]
        lo, hi = jnp.where(left, lo, t1), jnp.where(left, t2, hi)
        t_new = jnp.where(left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        f_new, n_new = solve(t_new, jnp.where(left, n1, n2))
        t1, t2 = jnp.where(left, t_new, t2), jnp.where(left, t1, t_new)
        f1, f2 = jnp.where(left, f_new, f2), jnp.where(left, f1, f_new)
        n1, n2 = jnp.where(left, n_new, n2), jnp.where(left, n1, n_new)
        return lo, hi, t1, t2, f1, f2, n1, n2

    _, _, t1, t2, f1, f2, n1, n2 = jax.lax.fori_loop(0, SEGMENT_STEPS, golden, (lo, hi, t1, t2, f1, f2, fixed(n1), fixed(n2)))
    inner, t_inner, n_inner = jnp.where(f1 > f2, f1, f2), jnp.where(f1 > f2, t1, t2), jnp.where(f1 > f2, n1, n2)
    f_lo, n_lo = solve(-fixed(half), n_inner)
    f_hi, n_hi = solve(fixed(half), n_inner)
    best = jnp.argmax(jnp.stack([inner, f_lo, f_hi]))
    t = fixed(t_inner)
    n = fixed(jnp.stack([n_inner, n_lo, n_hi])[best])
    # An end's parameter is the shape's own; an interior optimum's is fixed (the depth is flat in t there).
    t = jnp.where(best == 1, -half, jnp.where(best == 2, half, t))
    offset = centre - t * axis
    n = _newton(n, offset, S_a, S_b, scale)  # the optimum's motion with the poses (one step from it)
    q_a, g_a, _ = _quadric(S_a, n)
    q_b, g_b, _ = _quadric(S_b, n)
    point_a = H_a[:3, 3] + t * axis - g_a - radius * n
    point_b = H_b[:3, 3] + g_b
    depth = jnp.dot(point_b - point_a, n)
    return Slots((0.5 * (point_a + point_b))[None], n[None], depth[None], jnp.ones((1,), bool))
