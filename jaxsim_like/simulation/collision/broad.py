"""The broad phase: bounding spheres, and the cull that keeps a static budget of the candidate
pairs whose spheres overlap, counting those it had no room for.

The cull is one pass over the candidates of every pair kind (a prefix sum of their overlap flags
and a scatter of the overlapping ones into their kind's budget): its cost is linear in the
candidates, it sorts nothing, and its compiled program does not grow with the number of kinds.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .points import KIND_CODES


def bounding_radius(code: np.ndarray, size: jax.Array) -> jax.Array:
    """Radius ``(S,)`` [m] of the sphere about each shape's origin that holds it, from its kind
    ``code (S,)`` and ``size (S, 3)``."""
    box = jnp.sqrt(jnp.sum(size**2, axis=-1) + 1e-30)
    cylinder = jnp.sqrt(size[:, 0] ** 2 + size[:, 1] ** 2 + 1e-30)
    round_ = size[:, 0] + size[:, 1]
    return jnp.where(code == KIND_CODES["box"], box, jnp.where(code == KIND_CODES["cylinder"], cylinder, round_))


def overlapping(
    first_centre: jax.Array, first_radius: jax.Array, second_centre: jax.Array, second_radius: jax.Array,
    counts: Sequence[int], keeps: Sequence[int],
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The candidate pairs whose bounding spheres (centres ``(K, 3)`` [m], radii ``(K,)`` [m])
    overlap, of pair kinds whose ``counts[g]`` candidates lie end to end, each kind's packed into its
    budget of ``keeps[g]`` (budgets end to end, ``(B,)``, ``B = sum(keeps)``): their indices ``(B,)``
    in their kind's candidate order (int32; the rest of a budget repeats candidate 0), which entries
    hold one ``(B,)`` (bool), and the overflow ``(G,)`` (int32): each kind's overlapping pairs left
    out. One pass for every kind (a prefix sum and a scatter), whatever their number."""
    offset = jax.lax.stop_gradient(first_centre - second_centre)
    reach = jax.lax.stop_gradient(first_radius + second_radius)
    touching = jnp.sum(offset**2, axis=-1) <= reach**2
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
