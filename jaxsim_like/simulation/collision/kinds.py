"""The pair kinds of the narrow phase: their names, kernels and fixed number of contact slots."""

from __future__ import annotations

from typing import Callable, NamedTuple

from ...dynamics.tree import BOX, CAPSULE, CYLINDER, SPHERE
from .box import BOX_BOX_FEATURES, BOX_BOX_SLOTS, box_box, capsule_box, sphere_box
from .cylinder import box_cylinder, capsule_cylinder, cylinder_cylinder, sphere_cylinder
from .points import point_shape
from .round import capsule_capsule, sphere_capsule, sphere_sphere

SOLID = (SPHERE, CAPSULE, BOX, CYLINDER)
"""The shape kinds with shape-shape narrow phases, in pair order (a pair's first shape comes first here)."""

POINTS = "point-shape"
POINT_CHUNK = 8
"""Collidable points meet a shape in chunks of this many points of one link (the last one padded):
one bounding sphere, one candidate of the cull, per chunk."""


class Kind(NamedTuple):
    """A pair kind: its ``kernel``, the ``slots`` it fills per pair (per chunk of points) and the
    number of ``features`` its slots are chosen from (:attr:`.slots.Slots.feature`; 0: the slots
    themselves)."""

    kernel: Callable
    slots: int
    features: int = 0

    @property
    def memory(self) -> int:
        """Tangential memories kept per candidate pair: one per feature (per slot without features)."""
        return self.features or self.slots


KINDS: dict[str, Kind] = {
    "sphere-sphere": Kind(sphere_sphere, 1),
    "sphere-capsule": Kind(sphere_capsule, 1),
    "capsule-capsule": Kind(capsule_capsule, 2),
    "sphere-box": Kind(sphere_box, 1),
    "capsule-box": Kind(capsule_box, 3),
    "box-box": Kind(box_box, BOX_BOX_SLOTS, BOX_BOX_FEATURES),
    "sphere-cylinder": Kind(sphere_cylinder, 1),
    "capsule-cylinder": Kind(capsule_cylinder, 2),
    "box-cylinder": Kind(box_cylinder, 3),
    "cylinder-cylinder": Kind(cylinder_cylinder, 2),
    POINTS: Kind(point_shape, POINT_CHUNK),
}


PARTIAL = frozenset({"capsule-cylinder", "box-cylinder", "cylinder-cylinder"})
"""Pair kinds whose narrow phase sees only the cylinder's side: the points of both shapes still
meet the other shape (caps and rims)."""


def solid_kind(first: str, second: str) -> str:
    """The name of the pair kind of two solid shapes given in pair order."""
    return f"{first}-{second}"
