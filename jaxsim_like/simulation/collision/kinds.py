"""The pair kinds of the narrow phase: their names, fixed number of contact slots, and the
narrow phase (family) that evaluates them.

Pair kinds that are one computation on their shapes' data share a :class:`Family`, which the
collision query evaluates once for all their pairs (one narrow phase in the compiled program,
however many of its kinds a world has): a sphere is a capsule of no length, and a cylinder
against a capsule, a box or a cylinder is the capsule of its radius and segment with only the
contacts on its side kept (:func:`.cylinder.on_side`, switched per pair; two cylinders' caps
refine their first slot and their rims their second, for their pairs only: :func:`.cylinder.caps_facing`,
:func:`.rims.rims_crossing`; a capsule's segment
meets a cylinder's rim in 2 more slots, for their pairs only: :func:`.cylinder.capsule_on_rim`), and a sphere against a
cylinder is the swept point of its centre and radius (:func:`.points.point_shape`). Each kind takes
the first ``slots`` of its family's slots: the others are never candidates for its shapes.
Convex hulls meet hulls, boxes and cylinders in one narrow phase of their own (:data:`HULLS`, a
box being the hull of its corners and a cylinder the prism on its rims: :mod:`.hull`), spheres
and capsules in another (:data:`ROUND_HULLS`); both take the hulls' data besides their poses.
Ellipsoids meet spheres, capsules, cylinders (the disc of their radius swept along their
segment) and ellipsoids in one narrow phase on their support functions
(:func:`.ellipsoid.ellipsoid_round`, one slot), boxes in another (:func:`.ellipsoid.box_ellipsoid`:
the box's edges and faces) and hulls in a third (:data:`HULL_ELLIPSOIDS`, on the hulls' data).
"""

from __future__ import annotations

from typing import Callable, Iterable, NamedTuple

import jax
import jax.numpy as jnp

from ...dynamics.tree import BOX, CAPSULE, CYLINDER, ELLIPSOID, HULL, SPHERE
from .box import BOX_BOX_FEATURES, BOX_BOX_SLOTS, box_box, capsule_box
from .box_caps import FEATURES as CAP_FEATURES
from .box_caps import SLOTS as CAP_SLOTS
from .box_caps import box_on_cap
from .ellipsoid import box_ellipsoid, ellipsoid_round, hull_ellipsoid
from .cylinder import capsule_on_rim, caps_facing, on_side, past_caps, rims_on_box, round_reach
from .hull import HULL_SLOTS, hull_hull
from .hull_round import round_hull
from .least_overlap import least_overlap, missed_depth
from .points import KIND_CODES, point_shape
from .rims import rims_crossing
from .round import capsule_capsule
from .slots import Slots

SOLID = (SPHERE, CAPSULE, BOX, CYLINDER, HULL, ELLIPSOID)
"""The shape kinds with shape-shape narrow phases, in pair order (a pair's first shape comes first here)."""

POINTS = "point-shape"
HULLS = "hull"
"""The family of the pairs of a hull and a hull or a box: its kernel is :func:`.hull.hull_hull`
of the two (:class:`.hull.HullData` in world axes, the normal from b towards a), its tangential
memories per pair depend on the world's hulls (:attr:`.table.PairGroup.memory`)."""
ROUND_HULLS = "round-hull"
"""The family of the pairs of a sphere or a capsule (a) and a hull (b): its kernel is
:func:`.hull_round.round_hull` of a's pose and size and b's :class:`.hull.HullData` in world axes, 3 slots."""
HULL_ELLIPSOIDS = "hull-ellipsoid"
"""The family of the pairs of a hull (a) and an ellipsoid (b): its kernel is
:func:`.ellipsoid.hull_ellipsoid` of a's :class:`.hull.HullData` in world axes and b's pose and size, 1 slot."""
POINT_CHUNK = 8
"""Collidable points meet a shape in chunks of this many points of one link (the last one padded):
one bounding sphere, one candidate of the cull, per chunk."""


def _clear(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array, cylinder_a: jax.Array,
           cylinder_b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """How far [m] b must move along a's axis to clear a past its nearer cap, and a along b's
    (:func:`.cylinder.past_caps`; a ``cylinder`` reaches as far as its rims, else as its capsule)."""
    return (past_caps(H_a, size_a, H_b[:3, 3], round_reach(H_b, size_b, cylinder_b, H_a[:3, 2])),
            past_caps(H_b, size_b, H_a[:3, 3], round_reach(H_a, size_a, cylinder_a, H_b[:3, 2])))


def _round(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array, cylinder_a: jax.Array, cylinder_b: jax.Array) -> Slots:
    """2 slots: :func:`.round.capsule_capsule`, on the side of either shape that is a cylinder."""
    slots = capsule_capsule(H_a, size_a, H_b, size_b)
    clear_a, clear_b = _clear(H_a, size_a, H_b, size_b, cylinder_a, cylinder_b)
    return on_side(on_side(slots, H_b, size_b, cylinder_b, -1.0, clear_b), H_a, size_a, cylinder_a, 1.0, clear_a)


def _round_refined(sided: Slots, H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array,
                   cylinders: tuple[bool, bool]) -> Slots:
    """The :func:`_round` slots ``sided`` of two cylinders (``cylinders``: both) with their caps'
    contact (:func:`_caps`), or of a capsule (a) and a cylinder (b) followed by the capsule's
    on the cylinder's rim (:func:`.cylinder.capsule_on_rim`, 2 slots)."""
    if cylinders == (True, True):
        return _caps(sided, H_a, size_a, H_b, size_b)
    rim = capsule_on_rim(H_a, size_a, H_b, size_b)
    return jax.tree.map(lambda side, on_rim: jnp.concatenate([side, on_rim]), sided, rim)


def _caps(sided: Slots, H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
    """The :func:`_round` slots ``sided`` of two cylinders with their first slot their caps'
    contact where that is deeper (:func:`.cylinder.caps_facing`), their second their rims'
    where that is deeper (:func:`.rims.rims_crossing`: a rim pressed across the other's rim,
    whose contact neither the caps' slot nor the rim points carry); none deeper than the least
    overlap of the two that the rims' slot found (along its candidates: an upper bound of their
    penetration depth, which it is where their rims press across each other); the first carries
    what the two miss of the cylinders' least overlap, found over every direction
    (:func:`.least_overlap.missed_depth`: a side near its end pressed on the other's end, the
    sides' slots then faded past the caps and the rim points between the deepest places)."""
    clear_a, clear_b = _clear(H_a, size_a, H_b, size_b, jnp.asarray(True), jnp.asarray(True))
    cap = caps_facing(H_a, size_a, H_b, size_b, clear_a, clear_b, sided.normal[0])
    rims, least = rims_crossing(H_a, size_a, H_b, size_b, sided.normal[0])
    deeper = cap.depth[0] > jnp.where(sided.valid[0], sided.depth[0], 0.0)
    sided = jax.tree.map(lambda side, caps: side.at[0].set(jnp.where(deeper, caps[0], side[0])), sided, cap)
    deeper = rims.depth[0] > jnp.where(sided.valid[1], sided.depth[1], 0.0)
    sided = jax.tree.map(lambda side, rim: side.at[1].set(jnp.where(deeper, rim[0], side[1])), sided, rims)
    sided = sided._replace(depth=jnp.minimum(sided.depth, least))
    return missed_depth(sided, least_overlap(H_a, size_a, H_b, size_b), least, H_a, size_a, H_b, size_b)


def _round_box(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array, cylinder_a: jax.Array, cylinder_b: jax.Array) -> Slots:
    """3 slots: :func:`.box.capsule_box` (b is the box), on the side and rims of a where it is a
    cylinder (:func:`.cylinder.rims_on_box`: its ends fade the nearest point's slot)."""
    return capsule_box(H_a, size_a, H_b, size_b, lambda slots: rims_on_box(slots, H_a, size_a, cylinder_a, H_b, size_b))


_ROUND_BOX_SLOTS = 3


def _box_caps(sided: Slots, H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array,
              cylinders: tuple[bool, bool]) -> Slots:
    """The :func:`_round_box` slots ``sided`` of a cylinder (a) and a box (b), then the box's edges
    and corners on the cylinder's cap (:func:`.box_caps.box_on_cap`), each slot with its feature:
    the first slots' their own, the cap's after them (``cylinders``: the kind's, unused)."""
    cap = box_on_cap(H_a, size_a, H_b, size_b)
    own = jnp.arange(_ROUND_BOX_SLOTS, dtype=jnp.int32)
    return Slots(*(jnp.concatenate([x, y]) for x, y in zip(sided[:4], cap[:4])), jnp.concatenate([own, _ROUND_BOX_SLOTS + cap.feature]))


def _alone(kernel: Callable) -> Callable:
    """The family kernel of a narrow phase that serves one kind (the cylinder switches unused)."""
    return lambda H_a, size_a, H_b, size_b, cylinder_a, cylinder_b: kernel(H_a, size_a, H_b, size_b)


class Family(NamedTuple):
    """A narrow phase shared by pair kinds: ``kernel(H_a, size_a, H_b, size_b, cylinder_a,
    cylinder_b) -> Slots`` of two shapes (world poses ``(4, 4)``, sizes ``(3,)``, whether each is
    a cylinder; the normal from b towards a) with ``slots`` slots; ``refine(slots, H_a, size_a,
    H_b, size_b, cylinders) -> Slots`` (None: none) turns the kernel's slots into those of the
    kinds that ask for it (:attr:`Kind.refined`; ``cylinders``: the kind's :attr:`Kind.cylinders`,
    static), and is evaluated for their pairs only."""

    kernel: Callable
    slots: int
    refine: Callable | None = None


FAMILIES: dict[str, Family] = {
    "round": Family(_round, 2, _round_refined),
    "round-box": Family(_round_box, _ROUND_BOX_SLOTS, _box_caps),
    "box-box": Family(_alone(box_box), BOX_BOX_SLOTS),
    "ellipsoid": Family(lambda H_a, size_a, H_b, size_b, cylinder_a, cylinder_b: ellipsoid_round(H_a, size_a, H_b, size_b, cylinder_a), 1),
    "box-ellipsoid": Family(_alone(box_ellipsoid), 1),
}


class Kind(NamedTuple):
    """A pair kind: the ``family`` that evaluates it (:data:`FAMILIES`, or :data:`POINTS`), the
    ``slots`` it fills per pair (per chunk of points: the first of its family's), the number of
    ``features`` its slots are chosen from (:attr:`.slots.Slots.feature`; 0: the slots
    themselves), whether its family takes its shapes the other way round (``swapped``: the
    family's a is the kind's b), which of the family's shapes are ``cylinders`` (switched
    per pair), whether the family's ``refine`` makes its slots (``refined``: known when the
    program is traced, so that other kinds' pairs never compute it), in the
    family of points, the kind of shape that a sphere meets as a swept point (``ball_against``;
    None: collidable points), and which of the kind's shapes (a, b) its slots touch on a round
    surface of the shape's radius (``rounded``: a sphere, a capsule, a cylinder's side; a
    cylinder's rim points against a box count as its side, as they do for a lying cylinder;
    collidable points are rounded by their own radius, and a sphere or a capsule that they meet
    by its own, whatever this says), b in its first ``round_slots`` slots only (None: all; a box's
    edges and corners and a capsule's balls on a cylinder's cap or rim touch it where it is flat
    or on its rim's edge)."""

    family: str
    slots: int
    features: int = 0
    swapped: bool = False
    cylinders: tuple[bool, bool] = (False, False)
    refined: bool = False
    ball_against: str | None = None
    rounded: tuple[bool, bool] = (False, False)
    round_slots: int | None = None

    @property
    def memory(self) -> int:
        """Tangential memories kept per candidate pair: one per feature (per slot without features)."""
        return self.features or self.slots

    def taken(self, slots: Slots) -> Slots:
        """The kind's slots ``(..., slots)`` of its family's ``slots`` of the same pairs, the normal from its b towards its a."""
        first = jax.tree.map(lambda x: x[..., : self.slots] if x.ndim == slots.valid.ndim else x[..., : self.slots, :], slots)
        return first._replace(normal=-first.normal) if self.swapped else first

    @property
    def kernel(self) -> Callable:
        """The narrow phase of one pair of this kind, ``(H_a, size_a, H_b, size_b) -> Slots``
        (collidable points: :func:`.points.point_shape`; hulls: :func:`.hull.hull_hull`,
        :func:`.hull_round.round_hull` and :func:`.ellipsoid.hull_ellipsoid`, on hull data)."""
        if self.family == HULLS:
            return hull_hull
        if self.family == ROUND_HULLS:
            return round_hull
        if self.family == HULL_ELLIPSOIDS:
            return hull_ellipsoid
        if self.family == POINTS and self.ball_against is None:
            return point_shape
        if self.family == POINTS:
            code = KIND_CODES[self.ball_against]
            return lambda H_a, size_a, H_b, size_b: point_shape(H_a[:3, 3], size_a[0], jnp.asarray(code), H_b, size_b)
        family = FAMILIES[self.family]

        def kernel(H_a: jax.Array, size_a: jax.Array, H_b: jax.Array, size_b: jax.Array) -> Slots:
            first, second = ((H_b, size_b), (H_a, size_a)) if self.swapped else ((H_a, size_a), (H_b, size_b))
            slots = family.kernel(*first, *second, *(jnp.asarray(c) for c in self.cylinders))
            return self.taken(family.refine(slots, *first, *second, self.cylinders) if self.refined else slots)

        return kernel


_BOTH, _FIRST, _SECOND = (True, True), (True, False), (False, True)

KINDS: dict[str, Kind] = {
    "sphere-sphere": Kind("round", 1, rounded=_BOTH),
    "sphere-capsule": Kind("round", 1, rounded=_BOTH),
    "capsule-capsule": Kind("round", 2, rounded=_BOTH),
    "sphere-box": Kind("round-box", 1, rounded=_FIRST),
    "capsule-box": Kind("round-box", 3, rounded=_FIRST),
    "box-box": Kind("box-box", BOX_BOX_SLOTS, BOX_BOX_FEATURES),
    "sphere-cylinder": Kind(POINTS, 1, ball_against=CYLINDER, rounded=_FIRST),
    "capsule-cylinder": Kind("round", 4, cylinders=(False, True), refined=True, rounded=_BOTH, round_slots=2),
    "box-cylinder": Kind("round-box", _ROUND_BOX_SLOTS + CAP_SLOTS, _ROUND_BOX_SLOTS + CAP_FEATURES, swapped=True,
                         cylinders=(True, False), refined=True, rounded=_SECOND, round_slots=_ROUND_BOX_SLOTS),
    "cylinder-cylinder": Kind("round", 2, cylinders=(True, True), refined=True, rounded=_BOTH),
    "sphere-hull": Kind(ROUND_HULLS, 1, rounded=_FIRST),
    "capsule-hull": Kind(ROUND_HULLS, 3, rounded=_FIRST),
    "box-hull": Kind(HULLS, HULL_SLOTS),
    "cylinder-hull": Kind(HULLS, HULL_SLOTS),
    "hull-hull": Kind(HULLS, HULL_SLOTS),
    "sphere-ellipsoid": Kind("ellipsoid", 1, rounded=_FIRST),
    "capsule-ellipsoid": Kind("ellipsoid", 1, rounded=_FIRST),
    "ellipsoid-ellipsoid": Kind("ellipsoid", 1),
    "cylinder-ellipsoid": Kind("ellipsoid", 1, cylinders=(True, False)),
    "box-ellipsoid": Kind("box-ellipsoid", 1),
    "hull-ellipsoid": Kind(HULL_ELLIPSOIDS, 1),
    POINTS: Kind(POINTS, POINT_CHUNK),
}


RESTS_ON = {SPHERE: 1, CAPSULE: 2, ELLIPSOID: 1}
"""The most contacts at which a body rests on another through one of its round shapes (a sphere
or an ellipsoid on anything: one; a lying capsule: two, its side or its end balls); through the other shapes it
rests on the four or more of a face (see :func:`.forces.shared_pair_law`)."""


def fewest_resting(shapes: Iterable[str]) -> int:
    """The fewest :data:`RESTS_ON` among the shape kinds ``shapes``; 0 where none is round."""
    return min((RESTS_ON[shape] for shape in shapes if shape in RESTS_ON), default=0)


def rests_on(kind: str) -> int:
    """The most contacts at which a body rests on another through one pair of the kind ``kind``
    (a key of :data:`KINDS`): the fewer of its two shapes' :data:`RESTS_ON`; 0 where neither
    shape is round, and for collidable points (each point's own: :attr:`.table.CollisionTable.point_rests_on`)."""
    return 0 if kind == POINTS else fewest_resting(kind.split("-"))


PARTIAL = frozenset({"capsule-cylinder", "box-cylinder", "cylinder-cylinder"})
"""Pair kinds whose narrow phase sees only the cylinder's side: the points of both shapes still
meet the other shape (caps and rims)."""


def solid_kind(first: str, second: str) -> str:
    """The name of the pair kind of two solid shapes given in pair order (a key of :data:`KINDS`)."""
    return f"{first}-{second}"
