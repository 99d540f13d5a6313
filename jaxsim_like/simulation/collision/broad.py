"""The broad phase: bounding spheres, and the cull that keeps a static budget of the candidate
pairs whose spheres overlap, counting those it had no room for.

The cull is one pass over a pair kind's candidates (a prefix sum of their overlap flags and a
scatter of the overlapping ones into the budget): its cost is linear in the candidates and it
sorts nothing.
"""

from __future__ import annotations

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
    first_centre: jax.Array, first_radius: jax.Array, second_centre: jax.Array, second_radius: jax.Array, keep: int
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The candidate pairs ``(K,)`` whose bounding spheres (centres ``(K, 3)`` [m], radii ``(K,)``
    [m]) overlap, packed into a budget of ``keep``: their indices ``(keep,)`` in candidate order
    (int32; the rest of the budget repeats candidate 0), which entries hold one ``(keep,)``
    (bool), and the overflow ``()`` (int32): the overlapping pairs left out."""
    offset = jax.lax.stop_gradient(first_centre - second_centre)
    reach = jax.lax.stop_gradient(first_radius + second_radius)
    touching = jnp.sum(offset**2, axis=-1) <= reach**2
    rank = jnp.cumsum(touching, dtype=jnp.int32) - 1
    place = jnp.where(touching, rank, keep)  # past the budget: dropped by the scatter
    kept = jnp.zeros(keep, jnp.int32).at[place].set(jnp.arange(touching.shape[0], dtype=jnp.int32), mode="drop")
    count = jnp.sum(touching, dtype=jnp.int32)
    return kept, jnp.arange(keep) < count, jnp.maximum(count - keep, 0)
