"""Cylinders in the narrow phases (``size = (radius, half length along z, 0)``).

A sphere meets a cylinder as a swept point (the signed distance of its centre, :mod:`.points`).
Against capsules, boxes and cylinders a cylinder is the capsule of its radius and segment with
only the contacts on its side kept (their position lies within its length, :func:`on_side`): the caps and rims are met by
the cylinder's rim points and by the other shape's points, which the pair table keeps for these
kinds (see :mod:`.kinds`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .geometry import tolerance
from .slots import Slots

_SIDE_TOLERANCE = 1e-7  # relative to the half length: side contacts this far past a cap still count


def on_side(slots: Slots, H: jax.Array, size: jax.Array, cylinder: jax.Array) -> Slots:
    """``slots`` with only the contacts whose position lies within the length of the shape at
    ``H (4, 4)`` of ``size (3,)`` where it is a ``cylinder`` (a bool, traced or not; else all)."""
    axial = (slots.position - H[:3, 3]) @ H[:3, 2]
    within = jnp.abs(axial) <= size[1] * (1 + tolerance(axial.dtype, _SIDE_TOLERANCE)) + 1e-12
    return slots._replace(valid=slots.valid & (within | ~cylinder))
