"""The narrow phases of an ellipsoid (b) against a sphere, a capsule, a cylinder, an ellipsoid, a
box or a convex hull (a): one slot.

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
started from the last one's (:data:`WARM_STEPS`). Fixed work, one program for every pair of the family. A cylinder
is a disc (an ellipsoid of no thickness) swept along its segment, its caps' normals candidates
of their own; a box or a hull overlaps least along a face's normal or where one of its edges is
deepest (:func:`_polytope`).

Gradients: the depth at the optimum has the gradient of ``s`` there (the optimum's own motion
drops out); the normal's is that of one Newton step from the optimum with the pose's
derivatives (the implicit function theorem), so the contact's normal and place move with the
shapes as central differences see them.
"""

from __future__ import annotations

import math
from typing import Callable

import jax
import jax.numpy as jnp

from ...dynamics.spatial import safe_sqrt
from .geometry import perpendicular, unit
from .hull import HullData
from .slots import Slots

NORMAL_STEPS = 10
"""Newton steps on the unit sphere that find the normal of one segment parameter from the
direction between the centres (and at the segment's ends)."""
WARM_STEPS = 3
"""Newton steps that find the normal of a golden-section step's parameter from the normal of the
step before (near it: Newton's steps converge quadratically)."""
SEGMENT_STEPS = 20
"""Golden-section steps along a capsule's segment (the interval shrinks by 0.618 each)."""
_GOLDEN = 0.5 * (math.sqrt(5.0) - 1.0)
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
    least = 0.5 * (a + c) - safe_sqrt(0.25 * (a - c) ** 2 + b**2)
    shift = jnp.maximum(1e-6 * scale - least, 0.0)
    a, c = a + shift, c + shift
    step = -jnp.stack([c * g[0] - b * g[1], a * g[1] - b * g[0]]) / (a * c - b * b)
    length = safe_sqrt(jnp.dot(step, step))
    step = step * jnp.minimum(1.0, _LARGEST_TURN / jnp.maximum(length, _LARGEST_TURN))
    moved = n + T @ step
    return moved / jnp.linalg.norm(moved)


def _across_newton(n: jax.Array, offset: jax.Array, axis: jax.Array, S_a: jax.Array, S_b: jax.Array) -> jax.Array:
    """One Newton step of the unit normal ``n`` towards the least overlap on the circle of normals
    across the unit ``axis`` (``n`` first put on it): that of a segment's deepest point inside
    its ends, where the overlap is flat along the segment and the normal lies across it."""
    n = _across(n, axis, jnp.zeros((), jnp.int32))
    w = jnp.cross(axis, n)
    _, g_a, H_a = _quadric(S_a, n)
    _, g_b, H_b = _quadric(S_b, n)
    gradient = offset + g_a + g_b
    curvature = w @ (H_a + H_b) @ w - jnp.dot(n, gradient)
    turn = -jnp.dot(gradient, w) / jnp.where(curvature > 1e-12, curvature, 1e-12)
    moved = n + jnp.clip(turn, -_LARGEST_TURN, _LARGEST_TURN) * w
    return moved / jnp.linalg.norm(moved)


def _settled(n: jax.Array, offset: jax.Array, axis: jax.Array, which: jax.Array, S_a: jax.Array, S_b: jax.Array,
             scale: jax.Array) -> jax.Array:
    """The normal ``n`` of a segment's deepest point (:func:`_deepest`, no gradients) moved by one
    Newton step with the shapes' gradients (the implicit function theorem): on the sphere of
    normals at an end (or a point), on the circle across the segment inside it."""
    n = jax.lax.stop_gradient(n)
    return jnp.where(which == 0, _across_newton(n, offset, axis, S_a, S_b), _newton(n, offset, S_a, S_b, scale))


def _overlap(n: jax.Array, offset: jax.Array, S_a: jax.Array, S_b: jax.Array, radius: jax.Array) -> jax.Array:
    """``s``: how far the shapes overlap along the unit normal ``n`` (see the module docstring)."""
    return jnp.dot(offset, n) + _quadric(S_a, n)[0] + _quadric(S_b, n)[0] + radius


def _deepest(offset: jax.Array, axis: jax.Array, half: jax.Array, S_a: jax.Array, S_b: jax.Array, radius: jax.Array,
             scale: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The deepest parameter ``t`` of a's segment, the normal ``n (3,)`` there, which it is
    (0: inside the segment, 1: its -end, 2: its +end) and the overlap [m] there, without
    gradients: ``max_t min_n s(n, t)`` for ``offset = c_b - c_a (3,)`` (see the module docstring)."""
    fixed = jax.lax.stop_gradient
    offset, axis, half, S_a, S_b, radius = (fixed(x) for x in (offset, axis, half, S_a, S_b, radius))

    def solve(t, n, steps=NORMAL_STEPS):
        moved = offset - t * axis
        n = jax.lax.fori_loop(0, steps, lambda _, n: _newton(n, moved, S_a, S_b, scale), n)
        return _overlap(n, moved, S_a, S_b, radius), n

    start, _ = unit(-offset, jnp.array([0.0, 0.0, 1.0], offset.dtype))
    lo, hi = -half, half
    t1, t2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    f1, n1 = solve(t1, start)
    f2, n2 = solve(t2, n1)

    def golden(_, carry):
        lo, hi, t1, t2, f1, f2, n1, n2 = carry
        left = f1 > f2  # the deepest lies in [lo, t2]
        lo, hi = jnp.where(left, lo, t1), jnp.where(left, t2, hi)
        t_new = jnp.where(left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        f_new, n_new = solve(t_new, jnp.where(left, n1, n2), WARM_STEPS)
        t1, t2 = jnp.where(left, t_new, t2), jnp.where(left, t1, t_new)
        f1, f2 = jnp.where(left, f_new, f2), jnp.where(left, f1, f_new)
        n1, n2 = jnp.where(left, n_new, n2), jnp.where(left, n1, n_new)
        return lo, hi, t1, t2, f1, f2, n1, n2

    _, _, t1, t2, f1, f2, n1, n2 = jax.lax.fori_loop(0, SEGMENT_STEPS, golden, (lo, hi, t1, t2, f1, f2, n1, n2))
    inner, t_inner, n_inner = jnp.where(f1 > f2, f1, f2), jnp.where(f1 > f2, t1, t2), jnp.where(f1 > f2, n1, n2)
    f_lo, n_lo = solve(-half, n_inner)
    f_hi, n_hi = solve(half, n_inner)
    which = jnp.argmax(jnp.stack([inner, f_lo, f_hi]))
    return t_inner, jnp.stack([n_inner, n_lo, n_hi])[which], which, jnp.stack([inner, f_lo, f_hi])[which]


def _on_segment(t: jax.Array, which: jax.Array, half: jax.Array) -> jax.Array:
    """The parameter of :func:`_deepest`'s result: an end's is the shape's own (with its
    gradient); an interior optimum's is fixed (the depth is flat in ``t`` there)."""
    return jnp.where(which == 1, -half, jnp.where(which == 2, half, t))


def _slot(n: jax.Array, depth: jax.Array, H_b: jax.Array, S_b: jax.Array) -> Slots:
    """The slot of unit normal ``n`` (from b towards a) and ``depth``: midway between the
    surfaces, half the depth inside b's farthest point along ``n``."""
    point_b = H_b[:3, 3] + _quadric(S_b, n)[1]
    return Slots((point_b - 0.5 * depth * n)[None], n[None], depth[None], jnp.ones((1,), bool))


def ellipsoid_round(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array,
                    cylinder_a: jax.Array | bool = False) -> Slots:
    """1 slot of a sphere, capsule, ellipsoid or cylinder a (``size_a``: a sphere's ``(radius, 0,
    0)``, a capsule's and a cylinder's ``(radius, half length along z, 0)``, an ellipsoid's radii;
    an ellipsoid is told by its third size, a cylinder by ``cylinder_a``) and an ellipsoid b of
    radii ``size_b (3,)`` (world poses ``H (4, 4)``; the normal from b towards a): the deepest
    point of a's segment and the normal there (see the module docstring), placed midway between
    the two surfaces. A cylinder is the disc of its radius (an ellipsoid of radii ``(r, r, 0)``)
    swept along its segment; its caps, where the disc's support is not smooth, are the normals
    along its axis, taken where they overlap less."""
    cylinder = jnp.asarray(cylinder_a)
    ellipsoid = (size_a[2] > 0) & ~cylinder
    R_a = H_a[:3, :3]
    M_a = jnp.where(ellipsoid, R_a * size_a[None, :], jnp.where(cylinder, R_a * jnp.stack([size_a[0], size_a[0], 0.0])[None, :], 0.0))
    radius = jnp.where(ellipsoid | cylinder, 0.0, size_a[0])
    half = jnp.where(ellipsoid, 0.0, size_a[1])
    axis = R_a[:, 2]
    M_b = H_b[:3, :3] * size_b[None, :]
    S_a, S_b = M_a @ M_a.T, M_b @ M_b.T
    scale = jnp.max(size_b) + jnp.max(size_a)
    centre = H_b[:3, 3] - H_a[:3, 3]  # c_b - c_a
    t, n, which, _ = _deepest(centre, axis, half, S_a, S_b, radius, scale)
    which = jnp.where(half > 0, which, 1)  # a point: no segment to lie across
    t = _on_segment(t, which, half)
    offset = centre - t * axis
    n = _settled(n, offset, axis, which, S_a, S_b, scale)
    caps = jnp.stack([n, axis, -axis])
    # The caps overlap as the whole segment does; the deepest t's own overlap is flat in t (an
    # inexact interior t changes it to second order only).
    values = jnp.stack([_overlap(n, offset, S_a, S_b, radius)]
                       + [_overlap(x, centre, S_a, S_b, radius) + half * jnp.abs(jnp.dot(axis, x)) for x in (axis, -axis)])
    # A cap is taken where it overlaps no more than the segment's deepest point (ties: the cap's
    # normal, exact, where the disc's support has its kink and Newton's steps do not settle).
    fixed = jax.lax.stop_gradient(values)
    cap = jnp.argmin(fixed[1:]) + 1
    chosen = jnp.where(cylinder & (fixed[cap] <= fixed[0] + 1e-9 * scale), cap, 0)
    n = caps[chosen]
    return _slot(n, values[chosen], H_b, S_b)


def _polytope(middle: jax.Array, axis: jax.Array, half: jax.Array, faces: jax.Array, lowest: Callable[[jax.Array], jax.Array],
              H_b: jax.Array, size_b: jax.Array, scale: jax.Array) -> Slots:
    """1 slot of a convex polytope a and an ellipsoid b of radii ``size_b (3,)`` at ``H_b (4, 4)``
    (the normal from b towards a): a's edges ``(E,)`` of ``middle (E, 3)``, unit ``axis (E, 3)``
    and ``half`` length ``(E,)`` [m], the unit normals ``faces (F, 3)`` from b towards a along which
    a face of a can meet b (its outward normals, reversed), and ``lowest(n) -> ()``, a's least
    extent along ``n``. The normal of least overlap is where one, two, or three and more of a's
    vertices are farthest along it: the deepest point of an edge (its vertices at its ends,
    :func:`_deepest`) or a face's normal, whichever overlaps least along its normal."""
    dtype = H_b.dtype
    M_b = H_b[:3, :3] * size_b[None, :]
    S_b = M_b @ M_b.T
    S_a, zero = jnp.zeros((3, 3), dtype), jnp.zeros((), dtype)
    offset = H_b[:3, 3] - middle
    t, n_edge, which, _ = jax.vmap(_deepest, (0, 0, 0, None, None, None, None))(offset, axis, half, S_a, S_b, zero, scale)

    def overlap(n):  # of a and the ellipsoid along n
        return jnp.dot(H_b[:3, 3], n) + _quadric(S_b, n)[0] - lowest(n)

    # Every candidate overlaps as a does along its normal (each is the least overlap where it is
    # the optimum); an edge's inside its ends has its normal across the edge, exactly so.
    edges = jax.vmap(_across)(n_edge, axis, which)
    candidates = jax.lax.stop_gradient(jnp.concatenate([edges, faces]))
    chosen = jnp.argmin(jax.vmap(overlap)(candidates))
    count = middle.shape[0]
    edge = jnp.minimum(chosen, count - 1)
    t = _on_segment(t[edge], which[edge], half[edge])
    n_edge = _settled(candidates[edge], offset[edge] - t * axis[edge], axis[edge], which[edge], S_a, S_b, scale)
    n = jnp.where(chosen < count, n_edge, faces[jnp.maximum(chosen - count, 0)])
    return _slot(n, overlap(n), H_b, S_b)


def box_ellipsoid(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """1 slot of a box a of half extents ``size_a (3,)`` and an ellipsoid b of radii ``size_b
    (3,)`` (world poses ``H (4, 4)``; the normal from b towards a): :func:`_polytope` of its 12
    edges and 6 faces."""
    R_a, dtype = H_a[:3, :3], H_a.dtype
    signs = jnp.array([[sy, sz] for sy in (-1.0, 1.0) for sz in (-1.0, 1.0)], dtype)
    middles, axes, halves = [], [], []
    for k in range(3):  # the 4 edges along each axis
        others = [j for j in range(3) if j != k]
        middles.append(H_a[:3, 3] + (signs * size_a[jnp.array(others)]) @ R_a[:, others].T)
        axes.append(jnp.broadcast_to(R_a[:, k], (4, 3)))
        halves.append(jnp.broadcast_to(size_a[k], (4,)))

    def lowest(n):
        return jnp.dot(H_a[:3, 3], n) - jnp.dot(size_a, jnp.abs(R_a.T @ n))

    return _polytope(jnp.concatenate(middles), jnp.concatenate(axes), jnp.concatenate(halves), jnp.concatenate([R_a.T, -R_a.T]),
                     lowest, H_b, size_b, jnp.max(size_b) + jnp.max(size_a))


def hull_ellipsoid(a: HullData, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """1 slot of a convex hull ``a`` (:class:`.hull.HullData` in world axes, padded by repetition)
    and an ellipsoid b of radii ``size_b (3,)`` at ``H_b (4, 4)`` (the normal from b towards a):
    :func:`_polytope` of its edges and faces."""
    start, end = a.edges[:, 0], a.edges[:, 1]
    along = end - start
    length = safe_sqrt(jnp.sum(along**2, axis=-1))
    reach = jax.lax.stop_gradient(jnp.max(safe_sqrt(jnp.sum((a.vertices - jnp.mean(a.vertices, axis=0)) ** 2, axis=-1))))

    def lowest(n):
        return jnp.min(a.vertices @ n)

    axis = along / jnp.where(length > 0, length, 1.0)[:, None]
    return _polytope(0.5 * (start + end), axis, 0.5 * length, -a.planes[:, :3], lowest, H_b, size_b,
                     jnp.max(size_b) + reach)


def _across(n: jax.Array, axis: jax.Array, which: jax.Array) -> jax.Array:
    """The unit normal ``n (3,)`` of a segment's deepest point made exactly perpendicular to its
    unit ``axis (3,)`` where that point lies inside the segment (``which == 0``, :func:`_deepest`:
    the overlap is flat in ``t`` there; a normal along the axis: any across it), as it is elsewhere."""
    across = n - jnp.dot(n, axis) * axis
    squared = jnp.dot(across, across)
    usable = squared > 1e-24
    across = jnp.where(usable, across / jnp.sqrt(jnp.where(usable, squared, 1.0)), perpendicular(axis))
    return jnp.where(which == 0, across, n)
