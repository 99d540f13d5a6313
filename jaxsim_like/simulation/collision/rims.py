"""Two cylinders' rims pressed across each other, rim on rim (``size = (radius, half length along z, 0)``).

Neither the caps' slot (:func:`.cylinder.caps_facing`) nor the rim points carry such a contact:
a rim point is no deeper than its distance to the other's surface, and where two rims cross,
that is less than the depth along their edge-on-edge direction. Where the two cylinders' least
overlap (their support functions' sum over the unit directions) lies along a direction within
both rims' normal cones, the support points lie on the rims and the overlap is the length of a
chord between them square to both: a stationary point of their distance (:func:`rims_crossing`).
The work is scalar per candidate, on the dots of the pair's vectors (stored once), so that XLA
fuses it into few kernels; turns are kept as ``(cos, sin)`` pairs and turned by Cayley rotations
(no trigonometry).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...dynamics.spatial import dot, matmul, safe_sqrt
from .geometry import across_axis, cayley_turn, unit
from .slots import Slots

_SAMPLES = 8  # points of a's rim (constant turns) that start the Newton steps to its points nearest to b's rim's circle
_SAMPLE_COS = np.cos(np.linspace(0.0, 2 * np.pi, _SAMPLES, endpoint=False))
_SAMPLE_SIN = np.sin(np.linspace(0.0, 2 * np.pi, _SAMPLES, endpoint=False))
_NEWTON = 6  # Newton steps along a rim to its points nearest to the other's circle
_STEP = 0.15  # the most a Newton step turns along a rim (the tangent of half its angle)
_SLIDE = 0.05  # the turn (the tangent of half its angle) down the slope where the distance does not curve up
_LEAN = 0.2  # a chord whose direction's least part along the rims' caps' and sides' outward normals at its ends is less than this fades out ...
_FLAT = 0.1  # ... to none at this part: a cap's or a side's contact (the caps', the sides' slots and the rim points carry it)


def _unit_turn(x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(x, y) / |(x, y)|`` (``(1, 0)`` where that is zero)."""
    norm = safe_sqrt(x**2 + y**2)
    safe = jnp.where(norm > 0, norm, 1.0)
    return jnp.where(norm > 0, x / safe, 1.0), jnp.where(norm > 0, y / safe, 0.0)


def _plane_crossings(u: jax.Array, v: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The two turns ``(cos (2,), sin (2,))`` where ``u cos + v sin = w`` (a circle crossing a
    plane); where there are none, twice the turn nearest to one."""
    flat = u**2 + v**2
    spread, sign = safe_sqrt(flat - w**2), jnp.array([1.0, -1.0], u.dtype)
    return _unit_turn(u * w + sign * v * spread, v * w - sign * u * spread)


def _nearest_to_circle(cos: jax.Array, sin: jax.Array, P: tuple, Z: tuple, radius: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The turns ``(cos, sin)`` (each ``(K,)``) of a rim's points nearest to another rim's circle
    of ``radius`` [m] (each a stationary point of their distance), by :data:`_NEWTON` Newton
    steps from ``(cos, sin)``, each turning by no more than
    :data:`_STEP` (by :data:`_SLIDE` down the slope where the distance does not curve up): the
    point's squared distance from the circle's centre is ``P[0] + P[1] cos + P[2] sin`` and its
    height over the circle's plane ``Z[0] + Z[1] cos + Z[2] sin`` (each ``(K,)``), so that its
    squared distance to the circle is ``P + radius^2 - 2 radius sqrt(P - Z^2)``."""

    def step(cos: jax.Array, sin: jax.Array) -> tuple[jax.Array, jax.Array]:
        p, p_, p__ = P[0] + P[1] * cos + P[2] * sin, P[2] * cos - P[1] * sin, -(P[1] * cos + P[2] * sin)
        z, z_, z__ = Z[0] + Z[1] * cos + Z[2] * sin, Z[2] * cos - Z[1] * sin, -(Z[1] * cos + Z[2] * sin)
        q, q_, q__ = p - z**2, p_ - 2 * z * z_, p__ - 2 * (z_**2 + z * z__)  # the squared distance across the circle's axis
        root = safe_sqrt(q)
        slope = p_ * root - radius * q_  # the squared distance's slope and curvature, times root and 2 q root
        curvature = 2 * q * root * p__ - radius * (2 * q * q__ - q_**2)
        # The turn's tan of half its angle as n / d (Newton's: half the slope over the curvature, negated).
        newton = curvature > 0
        d = jnp.where(newton, curvature, 1.0)
        n = jnp.where(newton, -q * slope, -jnp.sign(slope) * _SLIDE)
        return cayley_turn(cos, sin, jnp.clip(n, -_STEP * d, _STEP * d), d)

    for _ in range(_NEWTON):  # unrolled (a few small steps)
        cos, sin = step(cos, sin)
    return cos, sin


def rims_crossing(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array, guard: jax.Array) -> tuple[Slots, jax.Array]:
    """1 slot and an upper bound [m] of the penetration depth: the rims of the facing caps (on the
    side of the other's centre) of two cylinders (world poses ``H (4, 4)``, sizes ``(3,)``; the
    normal from b towards a) pressed across each other. The candidates are the chords square to
    both rims from a's rim's points nearest to b's rim's circle (:func:`_nearest_to_circle`,
    from :data:`_SAMPLES` points of a's rim and its two crossings of b's cap's plane) and from
    b's (from its crossings of a's cap's plane), each with the other's nearest point. Each is as
    deep as the two overlap along its direction, faded as that direction's least part along the
    rims' caps' and sides' outward normals at its ends falls from :data:`_LEAN` to :data:`_FLAT`
    (a cap or a side meets the other there: the caps', the sides' slots and the rim points carry
    that contact), and less its excess over the least overlap found (along the chords, ``guard
    (3,)``, the caps' normals and the sides' directions facing the other's centre), so that it
    fades out as it grows to twice that. The slot: the deepest so kept (none where none is
    positive), along its chord, midway between its ends; the bound: that least overlap, the
    two's penetration depth where it is a chord's. Fixed work; each candidate's depth is
    continuous but where its rims meet (the slot's normal may turn at once where another becomes
    the deepest)."""
    axis_a, axis_b = H_a[:3, 2], H_b[:3, 2]
    offset = H_b[:3, 3] - H_a[:3, 3]
    out_a = jnp.where(dot(offset, axis_a) >= 0, 1.0, -1.0) * axis_a  # the facing caps' outward normals
    out_b = jnp.where(dot(offset, axis_b) <= 0, 1.0, -1.0) * axis_b
    ra, rb, la, lb = size_a[0], size_b[0], size_a[1], size_b[1]
    w = la * out_a - lb * out_b - offset  # a's rim's centre less b's
    # Every dot of the pair's vectors, stored once (one XLA dot: fused, each candidate's element would recompute them).
    rows = jnp.stack([H_a[:3, 0], H_a[:3, 1], H_b[:3, 0], H_b[:3, 1], w, out_a, out_b, offset])  # the rims' in-plane units first
    G = matmul(rows, rows.T, fused=False)
    E1, E2, F1, F2, W, A, B, OFF = range(8)
    wa, wb = (G[W, E1], G[W, E2]), (G[W, F1], G[W, F2])
    E = (G[E1, F1], G[E1, F2], G[E2, F1], G[E2, F2])
    # Rims' points nearest to the other's circle: a's from its samples and its crossings of b's cap's plane, b's from its crossings of a's.
    cos, sin = jnp.asarray(_SAMPLE_COS.astype(w.dtype)), jnp.asarray(_SAMPLE_SIN.astype(w.dtype))
    cross_a = _plane_crossings(ra * G[E1, B], ra * G[E2, B], -G[W, B])
    cross_b = _plane_crossings(rb * G[F1, A], rb * G[F2, A], G[W, A])
    on_a = jnp.arange(cos.shape[0] + 4) < cos.shape[0] + 2  # a's points first, then b's two

    def by_rim(of_a: jax.Array, of_b: jax.Array) -> jax.Array:  # per candidate: a's value on a's points, b's on b's
        return jnp.where(on_a, of_a, of_b)

    c, s = jnp.concatenate([cos, cross_a[0], cross_b[0]]), jnp.concatenate([sin, cross_a[1], cross_b[1]])
    # A point's squared distance from the other's rim's centre and its height over that rim's plane, in its turn.
    P = (G[W, W] + by_rim(ra**2, rb**2), by_rim(2 * ra * G[W, E1], -2 * rb * G[W, F1]), by_rim(2 * ra * G[W, E2], -2 * rb * G[W, F2]))
    Z = (by_rim(G[W, B], -G[W, A]), by_rim(ra * G[E1, B], rb * G[F1, A]), by_rim(ra * G[E2, B], rb * G[F2, A]))
    c, s = _nearest_to_circle(c, s, P, Z, by_rim(rb, ra))
    near_b = _unit_turn(wb[0] + ra * (E[0] * c + E[2] * s), wb[1] + ra * (E[1] * c + E[3] * s))
    near_a = _unit_turn(-wa[0] + rb * (E[0] * c + E[1] * s), -wa[1] + rb * (E[2] * c + E[3] * s))
    ca, sa, cb, sb = by_rim(c, near_a[0]), by_rim(s, near_a[1]), by_rim(near_b[0], c), by_rim(near_b[1], s)
    # The chords d = p - q (a's point less b's) through the dots: a chord's normal is -d / |d|.
    uv = ca * (E[0] * cb + E[1] * sb) + sa * (E[2] * cb + E[3] * sb)
    wa_u, wb_v = wa[0] * ca + wa[1] * sa, wb[0] * cb + wb[1] * sb
    length = safe_sqrt(G[W, W] + ra**2 + rb**2 + 2 * ra * wa_u - 2 * rb * wb_v - 2 * ra * rb * uv)

    def along(x: int) -> jax.Array:  # -d . x for the row x of the pair's vectors
        return rb * (cb * G[F1, x] + sb * G[F2, x]) - G[W, x] - ra * (ca * G[E1, x] + sa * G[E2, x])

    safe = jnp.where(length > 0, length, 1.0)
    lean = jnp.minimum(jnp.minimum(-along(A), wa_u + ra - rb * uv), jnp.minimum(along(B), rb - wb_v - ra * uv)) / safe
    tilt_a, tilt_b = along(A) / safe, along(B) / safe  # the normals' parts along the axes (up to sign)
    overlaps = (along(OFF) / safe + la * jnp.abs(tilt_a) + ra * safe_sqrt(1 - tilt_a**2)
                + lb * jnp.abs(tilt_b) + rb * safe_sqrt(1 - tilt_b**2))
    # The fixed directions (any length: the overlap is homogeneous): guard, the caps' normals, the sides' facing ones.
    others = jnp.stack([guard, -out_a, out_b, across_axis(-offset, axis_a), across_axis(-offset, axis_b)])
    size, tilt_a, tilt_b = dot(others, others), dot(others, out_a), dot(others, out_b)
    fixed = (dot(others, offset) + la * jnp.abs(tilt_a) + ra * safe_sqrt(size - tilt_a**2)
             + lb * jnp.abs(tilt_b) + rb * safe_sqrt(size - tilt_b**2)) / jnp.where(size > 0, safe_sqrt(size), 1.0)
    # Rims that meet give no direction (their candidate is none; no infinity in a product: its slope would be NaN).
    least = jnp.minimum(jnp.min(jnp.where(size > 0, fixed, jnp.inf)), jnp.min(jnp.where(length > 0, overlaps, jnp.inf)))
    faded = jnp.where(length > 0, jnp.clip((lean - _FLAT) / (_LEAN - _FLAT), 0.0, 1.0) * overlaps, 0.0)
    kept = jnp.minimum(faded, 2 * least - faded)
    ca, sa, cb, sb, depth = jnp.stack([ca, sa, cb, sb, kept])[:, jnp.argmax(kept)]  # one gather
    p = H_a[:3, 3] + la * out_a + ra * (ca * H_a[:3, 0] + sa * H_a[:3, 1])
    q = H_b[:3, 3] + lb * out_b + rb * (cb * H_b[:3, 0] + sb * H_b[:3, 1])
    normal = unit(q - p, unit(out_b - out_a, out_b)[0])[0]
    return Slots((0.5 * (p + q))[None], normal[None], jnp.maximum(depth, 0.0)[None], jnp.ones((1,), bool)), least
