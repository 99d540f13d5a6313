"""Narrow phases against cylinders (``size = (radius, half length along z, 0)``).

A sphere against a cylinder is exact (the signed distance of its centre). Against capsules, boxes
and cylinders a cylinder is the capsule of its radius and segment with only the contacts on its
side kept (their position lies within its length): the caps and rims are met by the cylinder's
rim points and by the other shape's points, which the pair table keeps for these kinds.
Each function takes the world poses ``H (4, 4)`` and sizes ``(3,)`` of shapes a and b and returns
:class:`.Slots` with the normal from b towards a.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...dynamics.tree import CYLINDER
from .box import capsule_box
from .geometry import to_frame, tolerance
from .points import KIND_CODES, signed_distance
from .round import capsule_capsule
from .slots import Slots

_SIDE_TOLERANCE = 1e-7  # relative to the half length: side contacts this far past a cap still count


def sphere_cylinder(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """1 slot: the sphere's centre against the nearest point of the cylinder's surface."""
    centre = H_a[:3, 3]
    distance, B_normal = signed_distance(to_frame(H_b, centre), KIND_CODES[CYLINDER], size_b)
    normal = H_b[:3, :3] @ B_normal
    position = centre - 0.5 * (size_a[0] + distance) * normal
    return Slots(position[None], normal[None], (size_a[0] - distance)[None], jnp.ones((1,), bool))


def _on_side(slots: Slots, H: jax.Array, size: jax.Array) -> Slots:
    """``slots`` with only the contacts whose position lies within the length of the cylinder at ``H``."""
    axial = (slots.position - H[:3, 3]) @ H[:3, 2]
    within = jnp.abs(axial) <= size[1] * (1 + tolerance(axial.dtype, _SIDE_TOLERANCE)) + 1e-12
    return slots._replace(valid=slots.valid & within)


def capsule_cylinder(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """2 slots: :func:`.round.capsule_capsule` on the cylinder's side."""
    return _on_side(capsule_capsule(H_a, size_a, H_b, size_b), H_b, size_b)


def cylinder_cylinder(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """2 slots: :func:`.round.capsule_capsule` on both cylinders' sides."""
    return _on_side(_on_side(capsule_capsule(H_a, size_a, H_b, size_b), H_b, size_b), H_a, size_a)


def box_cylinder(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """3 slots: :func:`.box.capsule_box` (the cylinder against the box) on the cylinder's side."""
    slots = capsule_box(H_b, size_b, H_a, size_a)
    return _on_side(slots._replace(normal=-slots.normal), H_b, size_b)
