"""Narrow phases against cylinders (``size = (radius, half length along z, 0)``).

A sphere against a cylinder is exact (the signed distance of its centre). Against capsules, boxes
and cylinders a cylinder is the capsule of its radius and segment with only the contacts on its
side kept (their position lies within its length, :func:`on_side`): the caps and rims are met by
the cylinder's rim points and by the other shape's points, which the pair table keeps for these
kinds (see :mod:`.kinds`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...dynamics.tree import CYLINDER
from .geometry import to_frame, tolerance
from .points import KIND_CODES, signed_distance
from .slots import Slots

_SIDE_TOLERANCE = 1e-7  # relative to the half length: side contacts this far past a cap still count


def sphere_cylinder(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """1 slot: the sphere (world pose ``H_a (4, 4)``, size ``(3,)``) against the nearest point of
    the surface of the cylinder b, the normal from b towards a."""
    centre = H_a[:3, 3]
    distance, B_normal = signed_distance(to_frame(H_b, centre), KIND_CODES[CYLINDER], size_b)
    normal = H_b[:3, :3] @ B_normal
    position = centre - 0.5 * (size_a[0] + distance) * normal
    return Slots(position[None], normal[None], (size_a[0] - distance)[None], jnp.ones((1,), bool))


def on_side(slots: Slots, H: jax.Array, size: jax.Array, cylinder: jax.Array) -> Slots:
    """``slots`` with only the contacts whose position lies within the length of the shape at
    ``H (4, 4)`` of ``size (3,)`` where it is a ``cylinder`` (a bool, traced or not; else all)."""
    axial = (slots.position - H[:3, 3]) @ H[:3, 2]
    within = jnp.abs(axial) <= size[1] * (1 + tolerance(axial.dtype, _SIDE_TOLERANCE)) + 1e-12
    return slots._replace(valid=slots.valid & (within | ~cylinder))
