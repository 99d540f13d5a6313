"""Cylinders in the narrow phases (``size = (radius, half length along z, 0)``).

A sphere meets a cylinder as a swept point (the signed distance of its centre, :mod:`.points`).
Against capsules, boxes and cylinders a cylinder is the capsule of its radius and segment with
only the contacts on its side kept (their position lies within its length, each as deep as the side reaches along its normal:
:func:`on_side`): the caps and rims are met by
the cylinder's rim points and by the other shape's points, which the pair table keeps for these
kinds (see :mod:`.kinds`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .geometry import tolerance
from .slots import Slots

_SIDE_TOLERANCE = 1e-7  # relative to the half length: side contacts this far past a cap still count


def on_side(slots: Slots, H: jax.Array, size: jax.Array, cylinder: jax.Array, pushed: float) -> Slots:
    """``slots`` of the capsule of the shape at ``H (4, 4)`` of ``size (3,)`` as its cylinder's side,
    where it is a ``cylinder`` (a bool, traced or not; else unchanged): only the contacts whose
    position lies within its length, each as deep as the side reaches along its normal. The
    capsule's ball at a point of the segment reaches ``radius`` along the normal, the side only
    ``radius`` times the normal's part across the axis: the depth is less by the difference and
    the position moves by half of it along the normal (``pushed``: +1 where the shape is pushed
    along the normal, its slots' a; -1 where it is b)."""
    axis = H[:3, 2]
    axial = (slots.position - H[:3, 3]) @ axis
    within = jnp.abs(axial) <= size[1] * (1 + tolerance(axial.dtype, _SIDE_TOLERANCE)) + 1e-12
    across = jnp.sqrt(jnp.maximum(1 - (slots.normal @ axis) ** 2, 1e-30))  # a normal along the axis: no NaN slope
    shortfall = jnp.where(cylinder, size[0] * (1 - across), 0.0)
    return slots._replace(position=slots.position + (0.5 * pushed * shortfall)[:, None] * slots.normal,
                          depth=slots.depth - shortfall, valid=slots.valid & (within | ~cylinder))
