"""The contact law of collision pairs: the terrain's law with tangential memory, sized per contact.

At a slot with depth ``d``, normal ``n`` (from b towards a), the velocity ``v`` of a's material
point relative to b's at the contact and the slot's tangential deformation ``m`` (its memory,
kept per candidate slot across steps, see :attr:`.collide.Contacts.slot`): the terrain's
Hunt-Crossley normal force and Coulomb friction with stick and slip (:mod:`..contacts`). A
contact inside its friction cone sticks: its tangential force is a spring-damper on ``m``, so a
body resting on another one does not creep. The force on a is ``f_n n + f_t``; b gets the
opposite.

The law of each slot is sized for the two links it touches (:class:`PairLaw`): from their
effective mass ``m = 1 / (w_a + w_b)``, with ``w`` a link's translational inverse weight (zero for
a link welded to the world), a body of mass ``m`` resting on ``RESTING_CONTACTS`` such contacts
sinks by ``max_penetration`` under standard gravity, with the given damping ratio. The touching
contacts between two links share their laws in proportion to their depths, up to
``RESTING_CONTACTS`` of them (:func:`shared_pair_law`), so that the two links push as hard
whichever contacts the narrow phases report (at a corner where two faces' edges meet; a
cylinder's rim points and its side); a contact through which a body rests on fewer (a
sphere's one, a capsule's two: :data:`.kinds.RESTS_ON`) counts as that many more, down to the
law's depth.

Linearised for a step of ``h`` (:class:`..contacts.ImplicitContacts`): the force on a at the end
of the step is ``step_forces - resist(dv_a - dv_b)``, with the velocity changes of the two
material points over the step; a contact on a round surface drifts from its material point with
the surface's turning (:func:`pair_drift`), which ``step_forces`` includes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...dynamics.kinematics import STANDARD_GRAVITY
from ...pytree import pytree_dataclass
from ..contacts import ContactParams, ImplicitContacts, contact_forces, implicit_contact_forces, overdamped_weight, round_drift
from .collide import Contacts
from .kinds import KINDS, POINT_CHUNK, POINTS, rests_on
from .table import CollisionTable

RESTING_CONTACTS = 4
"""The contacts a body rests on that a pair law is sized for (a box on a box: the corners of the
faces' overlap); more touching contacts between two links share that many laws (:func:`shared_pair_law`)."""


@pytree_dataclass()
class PairLaw:
    """The sizing of the contacts between links: a body of the contact's effective mass resting
    on four contacts sinks by ``max_penetration`` [m] under standard gravity, damped with
    ``damping_ratio``; exponents ``1 >= p >= q >= 0`` of the Hunt-Crossley law."""

    max_penetration: jax.Array
    damping_ratio: jax.Array
    p: jax.Array
    q: jax.Array

    @staticmethod
    def build(max_penetration: float = 0.0002, damping_ratio: float = 1.0, p: float = 0.5, q: float = 0.5) -> "PairLaw":
        """ValueError unless ``max_penetration > 0``, ``damping_ratio > 0`` and ``1 >= p >= q >= 0``."""
        if not (max_penetration > 0 and damping_ratio > 0 and 1 >= p >= q >= 0):
            raise ValueError(
                f"a pair law needs max_penetration > 0, damping_ratio > 0 and 1 >= p >= q >= 0; got "
                f"max_penetration={max_penetration}, damping_ratio={damping_ratio}, p={p}, q={q}"
            )
        return PairLaw(*(jnp.asarray(float(x)) for x in (max_penetration, damping_ratio, p, q)))

    def contact_params(self, mass: jax.Array, friction: jax.Array) -> ContactParams:
        """The :class:`..contacts.ContactParams` ``(C,)`` of contacts of effective ``mass (C,)`` [kg]
        and ``friction (C,)``: as :meth:`..contacts.ContactParams.from_mass` on four points."""
        dtype = mass.dtype
        depth, ratio, p, q = (jnp.asarray(x, dtype) for x in (self.max_penetration, self.damping_ratio, self.p, self.q))
        share = mass / RESTING_CONTACTS
        stiffness = share * STANDARD_GRAVITY / depth ** (1 + p)
        linear_stiffness = (1 + p) * stiffness * depth**p
        damping = 2 * ratio * jnp.sqrt(linear_stiffness * share) / depth**q
        shape = mass.shape
        return ContactParams(
            stiffness, damping, friction, jnp.broadcast_to(p, shape), jnp.broadcast_to(q, shape),
            jnp.broadcast_to(overdamped_weight(ratio), shape),
        )


@pytree_dataclass()
class ExplicitPairs:
    """The law of the pairs of a collision table (``table.pairs``: MJCF ``<contact><pair>``, and
    two geoms' friction, margins and gaps combined), in place of the models' (``(E,)`` each):
    the Coulomb ``friction`` and the ``margin`` [m] by which their contacts are deeper (the
    pair's: since MuJoCo 3.9 a gap only widens which contacts MuJoCo reports, without force),
    and a factor on the friction per link of the table ``friction_scale (L,)`` (None: 1; a
    contact's is the larger of its two links': domain randomisation's, see
    :func:`jaxsim_like.tasks.randomisation.apply`); the torsional and rolling friction
    coefficients ``torsion`` and ``rolling`` ``(E,)`` [m] (MuJoCo's condim 4 and 6; None when no
    pair has any)."""

    friction: jax.Array
    margin: jax.Array
    friction_scale: jax.Array | None = None
    torsion: jax.Array | None = None
    rolling: jax.Array | None = None

    @staticmethod
    def of(table: CollisionTable | None) -> "ExplicitPairs":
        """The file's values of the pairs of ``table`` (none without a table)."""
        pairs = () if table is None else table.pairs
        spins = any(p.torsion or p.rolling for p in pairs)
        return ExplicitPairs(
            jnp.asarray([float(p.friction) for p in pairs], dtype=float),
            jnp.asarray([float(p.margin) for p in pairs], dtype=float),
            torsion=jnp.asarray([float(p.torsion) for p in pairs], dtype=float) if spins else None,
            rolling=jnp.asarray([float(p.rolling) for p in pairs], dtype=float) if spins else None,
        )

    def slot_values(
        self, table: CollisionTable, values: jax.Array, slot: jax.Array, default: jax.Array, factor: jax.Array | None = None
    ) -> jax.Array:
        """Per contact of memory ``slot (C,)``: its pair's ``values (E,)`` (:attr:`friction` or
        :attr:`margin`), times ``factor (C,)`` if given, else ``default (C,)``."""
        explicit = jnp.asarray(table.explicit_slots).at[slot].get(mode="fill", fill_value=-1)
        picked = values.astype(default.dtype)[jnp.maximum(explicit, 0)]
        return jnp.where(explicit >= 0, picked if factor is None else factor * picked, default)

    def contact_friction(
        self, table: CollisionTable, link_a: jax.Array, link_b: jax.Array, slot: jax.Array, default: jax.Array
    ) -> jax.Array:
        """Per contact between the links ``link_a`` and ``link_b`` ``(C,)`` (global) of memory ``slot
        (C,)``: its pair's friction, times the larger :attr:`friction_scale` of its links, else
        ``default (C,)``."""
        scale = None if self.friction_scale is None else self.friction_scale.astype(default.dtype)
        factor = None if scale is None else jnp.maximum(scale[link_a], scale[link_b])
        return self.slot_values(table, self.friction, slot, default, factor)

    def memory_margin(self, table: CollisionTable, dtype) -> jax.Array:
        """``(table.candidate_slots,)`` [m]: the margin of each candidate memory (0 for dynamic pairs)."""
        explicit = np.asarray(table.explicit_slots)
        return jnp.where(explicit >= 0, self.margin.astype(dtype)[np.maximum(explicit, 0)], 0.0)


@jax.tree_util.register_pytree_node_class
class PairSlots:
    """The slot protocol of :class:`..contact_slots.Slots` for the contacts between links: every
    contact is its own slot, and a slot's link totals sum over the contacts of its link a
    (``link (C,)``, global indices among ``links``, static)."""

    def __init__(self, link: jax.Array, links: int):
        self.link, self.links = link, links

    def tree_flatten(self):
        return (self.link,), self.links

    @classmethod
    def tree_unflatten(cls, links, children):
        return cls(children[0], links)

    def take(self, values: jax.Array) -> jax.Array:
        return jnp.asarray(values)

    def mask(self, values: jax.Array) -> jax.Array:
        return values

    def scatter(self, values: jax.Array, count: int) -> jax.Array:
        return values

    def link_totals(self, values: jax.Array) -> jax.Array:
        return jax.ops.segment_sum(values, self.link, self.links)[self.link]


def contact_pairs(table: CollisionTable) -> np.ndarray:
    """``(C,)``: per contact slot of :func:`.collide.query` on ``table``, the index of the candidate
    pair that fills it (every kept pair of every group, in table order)."""
    slots = [KINDS[group.kind].slots for group in table.groups for _ in range(group.keep)]
    return np.repeat(np.arange(len(slots), dtype=np.int32), slots)


def link_pairs(contacts: Contacts, pairs: np.ndarray, links: int) -> jax.Array:
    """``(C,)``: per contact slot, the index of the two links that the candidate pair filling it
    touches (``pairs (C,)``, :func:`contact_pairs`), the same for every candidate pair between
    those two links (their shapes' pairs, and their points against shapes), among ``links``."""
    count = int(pairs.max(initial=-1)) + 1
    first = np.searchsorted(pairs, np.arange(count))
    a, b = contacts.link_a[first], contacts.link_b[first]
    key = jnp.minimum(a, b) * links + jnp.maximum(a, b)
    order = jnp.argsort(key)
    ordered = key[order]
    group = jnp.cumsum(jnp.concatenate([jnp.ones(min(count, 1), bool), ordered[1:] != ordered[:-1]])) - 1
    return jnp.zeros(count, group.dtype).at[order].set(group)[pairs]


def memory_weights(table: CollisionTable) -> np.ndarray:
    """``(table.candidate_slots,)``: per candidate memory (:attr:`.collide.Contacts.slot`), the
    contacts that its contact counts as in :func:`shared_pair_law`: ``RESTING_CONTACTS / r``
    where a body rests on ``r`` contacts at most through the pair (:func:`.kinds.rests_on`: a
    sphere's 1, a capsule's 2; a collidable point: :attr:`.table.CollisionTable.point_rests_on`
    of its round shape), else 1."""
    blocks = []
    for group in table.groups:
        if group.kind == POINTS:
            points = np.asarray(group.first, dtype=int).reshape(-1, POINT_CHUNK)
            rests = np.where(points >= 0, np.asarray(table.point_rests_on, dtype=int)[np.maximum(points, 0)], 0)
        else:
            rests = np.full((group.candidates, group.memory), rests_on(group.kind))
        blocks.append(np.where(rests > 0, RESTING_CONTACTS / np.maximum(rests, 1), 1.0).reshape(-1))
    return np.concatenate(blocks) if blocks else np.zeros(0)


LINK_PAIR_KEYS = 1 << 16
"""The most pairs of links (``links^2``) that :func:`row_link_pairs` labels by their key: a
table of more links labels them by a sort."""


def row_link_pairs(contacts: Contacts, links: int) -> tuple[jax.Array, int]:
    """``(C,)``: per contact of any rows ``contacts`` (global links among ``links``), a label of
    the two links it touches (either order), the same for every contact between them and
    different for any other two, and the number of labels: for at most ``LINK_PAIR_KEYS`` pairs
    of links the pair's key ``min * links + max`` (no sort), else the index of the pair among
    the distinct pairs of the rows (below ``C``)."""
    key = jnp.minimum(contacts.link_a, contacts.link_b) * links + jnp.maximum(contacts.link_a, contacts.link_b)
    if links * links <= LINK_PAIR_KEYS:
        return key, links * links
    order = jnp.argsort(key)
    ordered = key[order]
    group = jnp.cumsum(jnp.concatenate([jnp.ones(min(key.shape[0], 1), bool), ordered[1:] != ordered[:-1]])) - 1
    return jnp.zeros(key.shape[0], group.dtype).at[order].set(group), key.shape[0]


def shared_pair_law(params: ContactParams, contacts: Contacts, table: CollisionTable, max_penetration: jax.Array,
                    segments: tuple[jax.Array, int] | None = None) -> ContactParams:
    """The laws ``(C,)`` of ``contacts`` shared by the touching contacts between each two links:
    ``contacts`` are those of :func:`.collide.query` on ``table`` (the pairs of links by
    :func:`link_pairs`), or any rows of them with the labels of their pairs of links and the
    number of labels ``segments`` (:func:`row_link_pairs`; every touching contact of a pair of
    links among the rows). Stiffness and damping
    times ``min(n, RESTING_CONTACTS) w d / sum w d``, with the depths ``d`` [m] of the touching
    contacts of the two links, each counting as ``w`` contacts, and their number ``n = sum w d /
    max d`` counted by depth (unchanged where not touching). A contact of a pair through which
    a body rests on fewer than ``RESTING_CONTACTS`` contacts counts as ``c`` of them
    (:func:`memory_weights`: a sphere's as 4, a capsule's as 2) down to the pair law's
    ``max_penetration`` [m] and as ``w = 1 + (c - 1) (max_penetration / d)^(1 + p)`` deeper (the
    law's exponent ``p``); any other contact, and any between links of one model, as one.

    Contacts at one depth keep their laws up to ``RESTING_CONTACTS`` of them, and more push as
    hard together as that many, whichever narrow phases report them (a cylinder on another
    one's cap rests on the rim points of both); a shallower contact is softer in proportion, so
    that the force between the links changes continuously as a contact comes or goes. Two boxes
    with flush side faces meet at corners that the narrow phase reports as a corner inside the
    other box, as an edge crossing, or as both, from one step to the next: each contact with its
    own law, the pair's force would jump with that count, and a stack rocks on it.

    A body rests on a sphere's one contact, or a capsule's two, where a box rests on four
    corners: counted as four and as two, a sphere and a lying capsule rest on another body at
    ``max_penetration``, as a box does (a capsule lying across two bodies, at it on each). The
    extra contacts push no harder than at that depth (``w d^(1 + p)`` grows as one contact's
    law beyond it), so that a landing meets the law of one contact: with four laws on a lone
    contact at any depth, a pile of bodies dropped into a bin landed harder, and the load-aware
    laws (:func:`..world._loaded`) took those landings for loads and stiffened further. A box's
    corner alone on a face keeps one law of four (a tilted box is not at rest on it). The links
    of one model are held by their joints, not by their contacts (a self-contact is not where a
    body rests)."""
    pairs = contact_pairs(table) if segments is None else None
    touching = contacts.active & (contacts.depth > 0)
    depth = jnp.where(touching, contacts.depth, 0.0)
    model = jnp.asarray(table.link_model)
    counted = jnp.asarray(memory_weights(table), depth.dtype).at[contacts.slot].get(mode="fill", fill_value=1.0)
    rest = jnp.asarray(max_penetration, depth.dtype)
    beyond = jnp.where(depth > rest, (rest / jnp.where(depth > rest, depth, 1.0)) ** (1 + params.p), 1.0)
    weight = jnp.where(model[contacts.link_a] == model[contacts.link_b], 1.0, 1 + (counted - 1) * beyond)
    weighted = weight * depth
    if segments is None:
        segments, count = link_pairs(contacts, pairs, table.links), int(pairs.max(initial=-1)) + 1
    else:
        segments, count = segments
    total = jax.ops.segment_sum(weighted, segments, count)[segments]
    deepest = jax.ops.segment_max(depth, segments, count)[segments]
    number = total / jnp.where(deepest > 0, deepest, 1.0)
    share = jnp.where(touching, jnp.minimum(number, RESTING_CONTACTS) * weighted / jnp.where(total > 0, total, 1.0), 1.0)
    return params.replace(stiffness=params.stiffness * share, damping=params.damping * share)


def pair_forces(
    params: ContactParams,
    contacts: Contacts,
    relative_velocity: jax.Array,
    deformation: jax.Array,
    dt: jax.Array,
    mass: jax.Array,
    links: int,
    turning: tuple[jax.Array, jax.Array, jax.Array, jax.Array] | None = None,
) -> ImplicitContacts:
    """The linearly implicit contact forces (:class:`..contacts.ImplicitContacts`, forces on a) of
    ``contacts`` with per-slot ``params (C,)``, the velocity ``relative_velocity (C, 3)`` [m/s] of
    a's material point minus b's, the slots' tangential ``deformation (C, 3)`` [m], the step ``dt``
    [s], the contacts' effective ``mass (C,)`` [kg] and the number of global ``links``; with
    ``turning``, the angular velocities [rad/s] of the links a and b and the velocities [m/s] of
    their material points at the contacts (``(C, 3)`` each: ``(omega_a, omega_b, v_a, v_b)``),
    the contacts on their round surfaces drift with them (:func:`pair_drift`; None: no drift)."""
    return implicit_contact_forces(
        params, contacts.depth, contacts.normal, relative_velocity, deformation, contacts.active, dt, mass,
        PairSlots(contacts.link_a, links), None if turning is None else pair_drift(contacts, *turning, dt),
    )


def pair_drift(contacts: Contacts, omega_a: jax.Array, omega_b: jax.Array, velocity_a: jax.Array, velocity_b: jax.Array,
               dt: jax.Array) -> jax.Array | None:
    """``(C, 3)`` [m/s]: the :func:`..contacts.round_drift` of ``contacts`` over a step of ``dt``
    [s], a's minus b's, for links a and b turning at ``omega_a, omega_b (C, 3)`` [rad/s], their
    material at the contacts moving at ``velocity_a, velocity_b (C, 3)`` [m/s] (None where the
    contacts have no radii). A round surface's centre of curvature lies its radius from its
    surface along the normal, and its surface half the depth from the contact's position."""
    if contacts.radius_a is None or contacts.radius_b is None:
        return None
    normal, half = contacts.normal, 0.5 * jnp.maximum(contacts.depth, 0.0)
    radius_a = jnp.where(contacts.radius_a > 0, contacts.radius_a - half, 0.0)
    radius_b = jnp.where(contacts.radius_b > 0, contacts.radius_b - half, 0.0)
    return round_drift(omega_a, velocity_a, radius_a, normal, dt) - round_drift(omega_b, velocity_b, radius_b, -normal, dt)


def explicit_pair_forces(
    params: ContactParams, contacts: Contacts, relative_velocity: jax.Array, deformation: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """The forces ``(C, 3)`` [N] on a at the start of a step and the deformation rate ``(C, 3)``
    [m/s] of ``contacts`` (as :func:`pair_forces`, for the explicit integrators)."""
    return contact_forces(params, contacts.depth, contacts.normal, relative_velocity, deformation, contacts.active)

