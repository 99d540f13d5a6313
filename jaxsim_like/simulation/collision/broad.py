"""The broad phase: bounding spheres and boxes, and the cull that keeps a static budget of the
candidate pairs whose spheres and world-axis boxes overlap, counting those it had no room for.

A long body's sphere reaches far beyond it across its length (a 3 m plank's, 1.5 m to each side
of a 0.3 m width): the boxes along the world axes cull the neighbours beside it that the spheres
would keep, and with them the budget they would take. Spheres and capsules meet one another's
exact test too (:func:`segments_near`): two capsules side by side in a pile overlap each other's
spheres and boxes far more often than they touch, and would spend the budget of their kind on
pairs apart. A pair with a hull meets a separating test along the line through the two shapes'
origins (:func:`near_along_centres`): its narrow phase costs the most, in chunks of its budget that
run only where they hold a pair.

The cull is one pass over the candidates of every pair kind (a prefix sum of their overlap flags
and a scatter of the overlapping ones into their kind's budget): its cost is linear in the
candidates, it sorts nothing, and its compiled program does not grow with the number of kinds.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .geometry import segments_closest, tolerance
from .points import KIND_CODES


def bounding_radius(code: np.ndarray, size: jax.Array) -> jax.Array:
    """Radius ``(S,)`` [m] of the sphere about each shape's origin that holds it, from its kind
    ``code (S,)`` and ``size (S, 3)``."""
    box = jnp.sqrt(jnp.sum(size**2, axis=-1) + 1e-30)
    cylinder = jnp.sqrt(size[:, 0] ** 2 + size[:, 1] ** 2 + 1e-30)
    round_ = size[:, 0] + size[:, 1]
    ellipsoid = jnp.max(size, axis=-1)
    return jnp.where(code == KIND_CODES["box"], box, jnp.where(code == KIND_CODES["cylinder"], cylinder,
                     jnp.where(code == KIND_CODES["ellipsoid"], ellipsoid, round_)))


def half_extents(code: np.ndarray, size: jax.Array, W_R_S: jax.Array, radius: jax.Array) -> jax.Array:
    """Half extents ``(S, 3)`` [m] along the world axes of the box about each shape's origin that
    holds it, from its kind ``code (S,)``, ``size (S, 3)`` (a box's half extents; a capsule's and a
    cylinder's radius and half length along its z axis; a sphere's radius; an ellipsoid's radii), its orientation
    ``W_R_S (S, 3, 3)`` and its bounding ``radius (S,)`` (:func:`bounding_radius`, a hull's box)."""
    box = jnp.einsum("sij,sj->si", jnp.abs(W_R_S), size)
    axis = W_R_S[:, :, 2]
    across = jnp.sqrt(jnp.clip(1.0 - axis**2, 0.0, 1.0) + 1e-30)
    along = jnp.abs(axis) * size[:, 1:2]
    capsule = along + size[:, :1]
    cylinder = along + size[:, :1] * across
    sphere = jnp.broadcast_to(radius[:, None], box.shape)
    ellipsoid = jnp.sqrt(jnp.einsum("sij,sj->si", W_R_S**2, size**2) + 1e-30)
    code = code[:, None]
    return jnp.where(code == KIND_CODES["box"], box, jnp.where(code == KIND_CODES["capsule"], capsule,
                     jnp.where(code == KIND_CODES["cylinder"], cylinder, jnp.where(code == KIND_CODES["ellipsoid"], ellipsoid, sphere))))


def segments_near(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array, slack: jax.Array | float) -> jax.Array:
    """Whether round shapes a and b (spheres and capsules at world poses ``H (K, 4, 4)``, sizes
    ``(K, 3)``: radius and half length along z) lie within ``slack`` [m] of touching ``(K,)``: the
    distance of their segments at most their radii plus ``slack``."""
    H_a, H_b = jax.lax.stop_gradient(H_a), jax.lax.stop_gradient(H_b)
    centre_a, axis_a, centre_b, axis_b = H_a[:, :3, 3], H_a[:, :3, 2], H_b[:, :3, 3], H_b[:, :3, 2]
    s, t = jax.vmap(segments_closest)(centre_a, axis_a, size_a[:, 1], centre_b, axis_b, size_b[:, 1])
    apart = centre_a + s[:, None] * axis_a - centre_b - t[:, None] * axis_b
    reach = size_a[:, 0] + size_b[:, 0] + slack
    return jnp.sum(apart**2, axis=-1) <= reach**2


def support(code: np.ndarray, H: jax.Array, size: jax.Array, vertices: jax.Array, direction: jax.Array) -> jax.Array:
    """How far [m] each shape reaches along the unit ``direction (K, 3)`` (world axes): the
    largest ``direction . x`` over its points ``x``, from its kind ``code (K,)``, world pose
    ``H (K, 4, 4)``, ``size (K, 3)`` (as :func:`half_extents` reads it) and, for a hull, its
    ``vertices (K, V, 3)`` in its frame (any rows elsewhere); ``code`` is static (numpy), and
    only the kinds among it are computed. A cylinder reaches as far as its round rims, farther
    than the prism a hull meets (:mod:`.hull`)."""
    local = jnp.einsum("kji,kj->ki", H[:, :3, :3], direction)
    along_axis = jnp.abs(local[:, 2])
    reaches = {  # in the shape's frame, from its origin
        "box": lambda: jnp.sum(jnp.abs(local) * size, axis=-1),
        "sphere": lambda: size[:, 0],
        "capsule": lambda: size[:, 0] + size[:, 1] * along_axis,
        "cylinder": lambda: size[:, 0] * jnp.sqrt(jnp.clip(1.0 - local[:, 2] ** 2, 0.0, 1.0)) + size[:, 1] * along_axis,
        "ellipsoid": lambda: jnp.sqrt(jnp.sum((size * local) ** 2, axis=-1) + 1e-30),
        "hull": lambda: jnp.max(jnp.einsum("kvi,ki->kv", vertices, local), axis=-1),
    }
    present = [kind for kind in reaches if np.any(np.asarray(code) == KIND_CODES[kind])] or ["sphere"]
    reach = reaches[present[0]]()
    for kind in present[1:]:  # only the kinds among the shapes
        reach = jnp.where(code == KIND_CODES[kind], reaches[kind](), reach)
    return jnp.sum(H[:, :3, 3] * direction, axis=-1) + reach


def near_along_centres(code_a: np.ndarray, H_a: jax.Array, size_a: jax.Array, vertices_a: jax.Array, code_b: np.ndarray, H_b: jax.Array,
                       size_b: jax.Array, vertices_b: jax.Array, slack: jax.Array | float) -> jax.Array:
    """Whether shapes a and b (as :func:`support` reads them, ``K`` pairs) may lie within ``slack``
    [m] of touching ``(K,)``: False where their projections on the line through their origins
    leave a gap wider than ``slack`` (a separating axis: they are that far apart at least), beyond
    the rounding of the projections."""
    H_a, H_b = jax.lax.stop_gradient(H_a), jax.lax.stop_gradient(H_b)
    offset = H_a[:, :3, 3] - H_b[:, :3, 3]
    squared = jnp.sum(offset**2, axis=-1)
    usable = squared > 1e-24
    u = offset / jnp.sqrt(jnp.where(usable, squared, 1.0))[:, None]
    reach_a, reach_b = support(code_a, H_a, size_a, vertices_a, -u), support(code_b, H_b, size_b, vertices_b, u)
    rounding = tolerance(squared.dtype, 1e-9) * (jnp.abs(reach_a) + jnp.abs(reach_b))
    return ~usable | (-reach_a - reach_b <= slack + rounding)


def overlapping(
    first_centre: jax.Array, first_radius: jax.Array, first_extent: jax.Array,
    second_centre: jax.Array, second_radius: jax.Array, second_extent: jax.Array,
    counts: Sequence[int], keeps: Sequence[int], near: jax.Array | None = None,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The candidate pairs whose bounding spheres (centres ``(K, 3)`` [m], radii ``(K,)`` [m]) and
    boxes along the world axes (about the same centres, half extents ``(K, 3)`` [m]) overlap, and
    that are ``near (K,)`` where given (an exact test of some kinds: :func:`segments_near`), of pair kinds whose ``counts[g]`` candidates lie end to end, each kind's packed into its
    budget of ``keeps[g]`` (budgets end to end, ``(B,)``, ``B = sum(keeps)``): their indices ``(B,)``
    in their kind's candidate order (int32; the rest of a budget repeats candidate 0), which entries
    hold one ``(B,)`` (bool), and the overflow ``(G,)`` (int32): each kind's overlapping pairs left
    out. One pass for every kind (a prefix sum and a scatter), whatever their number."""
    offset = jax.lax.stop_gradient(first_centre - second_centre)
    reach = jax.lax.stop_gradient(first_radius + second_radius)
    span = jax.lax.stop_gradient(first_extent + second_extent)
    touching = (jnp.sum(offset**2, axis=-1) <= reach**2) & jnp.all(jnp.abs(offset) <= span, axis=-1)
    if near is not None:
        touching = touching & near
    counts, keeps = np.asarray(counts, dtype=np.int32), np.asarray(keeps, dtype=np.int32)
    ends, budget_ends = np.cumsum(counts), np.cumsum(keeps)
    starts, budget_starts = ends - counts, budget_ends - keeps
    kind = np.repeat(np.arange(len(counts)), counts)
    total = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(touching, dtype=jnp.int32)])
    before = total[starts]  # (G,): the overlapping pairs of the kinds before
    rank = total[1:] - 1 - before[kind]
    # Past its budget (or not overlapping): past every budget, dropped by the scatter.
    place = jnp.where(touching & (rank < keeps[kind]), budget_starts[kind] + rank, int(budget_ends[-1]))
    local = (np.arange(kind.size) - starts[kind]).astype(np.int32)
    kept = jnp.zeros(int(budget_ends[-1]), jnp.int32).at[place].set(local, mode="drop")
    count = total[ends] - before
    entry = np.concatenate([np.arange(k) for k in keeps])
    return kept, entry < count[np.repeat(np.arange(len(keeps)), keeps)], jnp.maximum(count - keeps, 0)
