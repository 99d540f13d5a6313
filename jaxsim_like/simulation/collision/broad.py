"""The broad phase: bounding spheres and the cull that keeps a static number of nearest pairs,
counting the overlapping pairs it had no room for."""

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


def nearest(
    first_centre: jax.Array, first_radius: jax.Array, second_centre: jax.Array, second_radius: jax.Array, keep: int
) -> tuple[jax.Array, jax.Array]:
    """Indices ``(keep,)`` of the candidate pairs ``(K,)`` whose bounding spheres (centres ``(K, 3)``,
    radii ``(K,)``) have the smallest gaps (overlapping ones first), by ``lax.top_k``, and the
    overflow ``()`` (int32): how many overlapping pairs (those that may touch) were left out."""
    offset = first_centre - second_centre
    distance = jnp.sqrt(jnp.sum(offset**2, axis=-1) + 1e-30)
    gap = jax.lax.stop_gradient(distance - first_radius - second_radius)
    closeness, kept = jax.lax.top_k(-gap, keep)
    overflow = jnp.sum(gap <= 0, dtype=jnp.int32) - jnp.sum(closeness >= 0, dtype=jnp.int32)
    return kept, overflow
