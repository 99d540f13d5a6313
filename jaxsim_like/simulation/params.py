"""Simulation parameters: one pytree, so that changing any value never recompiles."""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import zero_pose
from ..pytree import pytree_dataclass
from ..dynamics.kinematics import STANDARD_GRAVITY
from ..dynamics.model import Model
from ..host import to_device
from .contact_slots import PlaneSlots, facet_counts, plane_slots
from .collision.collisions import Collisions
from .collision.table import welded_links
from .contacts import ContactParams
from .scenery import boxes_model, without_boxes
from .terrain import Terrain, is_plane

INTEGRATORS = ("implicit_euler", "semi_implicit_euler", "rk4")

DEFAULT_FRICTION = 0.5
"""The Coulomb friction of a model's contact law when neither the call nor the file gives one."""

EXPLICIT_INTEGRATORS = ("semi_implicit_euler", "rk4")
IMPLICIT_FRICTION_VELOCITY = 0.01
"""[rad/s or m/s]: the default ``friction_velocity`` of the implicit step (a joint held below its
Coulomb friction creeps at ``v_s atanh(load / F)``)."""
RESTING_LINKS = 2
"""The default contact law sinks a model resting on this many of its links (or on all of them,
when fewer carry collidable points; one for a model without any) by ``max_penetration``. Sized
for one link, the light hand of the limp shipped humanoid, a single swept point, chattered at 5 ms."""
LIMIT_FREQUENCY_FLOOR = 20.0
"""[rad/s]: the explicit integrators' joint limits have the frequency ``0.2 / dt``, but not below
this (that of 10 ms): softer, a limp robot at larger steps sinks far past its limits."""
LIMIT_FREQUENCY = 200.0
"""[rad/s]: the implicit step's joint limits have this frequency, or ``LIMIT_STEP_FREQUENCY / dt``
at steps above ``LIMIT_STEP_FREQUENCY / LIMIT_FREQUENCY``, or ``0.2 / dt`` at steps below 1 ms. A
joint pressed into its limit by an acceleration ``a`` [rad/s^2] rests ``a / w^2`` past it (``a /
40,000`` at 200 rad/s, ``a / 10,000`` at 10 ms); MuJoCo's default ``solreflimit`` and
``solimplimit`` at steps up to 10 ms rest it ``(1 - d) a / (d^2 k)``, ``a / 22,000`` to ``a /
50,000``."""
LIMIT_STEP_FREQUENCY = 1.0
"""``w dt`` of the implicit step's joint limits at large steps: the spring is linearised only past
``joint_effects.LIMIT_BLEND``, and from ``w dt = 2`` on a joint can chatter at its limit."""
CONTACT_SLOT_TOLERANCE = 5.0
"""With ``contact_slots="auto"``, a link's slots are the most of its points within this many
``max_penetration`` of one supporting plane (see :func:`.contact_slots.facet_counts`)."""
TERRAIN_FACES = 2
"""On a terrain that is not a plane (static boxes, a height function), a link may rest on this
many faces at once (a box in the corner of a floor and a wall, on a step's edge): with
``contact_slots="auto"`` its slots are this many times its facet count, at most its points;
except a link with cylinder rim rings, whose rings turn their points to the surface they meet."""


@pytree_dataclass(static=["integrator"])
class WorldParams:
    """The settings a world shares: step size ``dt`` [s], ``gravity (3,)`` [m/s^2], the
    ``terrain`` and the ``integrator`` (static; see :func:`~.step.step`)."""

    dt: jax.Array
    gravity: jax.Array
    terrain: Terrain
    integrator: str = "implicit_euler"


@pytree_dataclass(static=["contact_slots", "plane_slots"])
class ModelParams:
    """The settings of one model of a world: its contact law (with the terrain, and its side of
    the contacts with other links), the per-link contact switch ``contact_enabled (N,)``, the
    joints' ``limit_stiffness``, ``limit_damping`` and Coulomb ``friction_velocity`` ``(n,)``,
    its constraints' ``coupling_time_constant`` [s] and ``coupling_damping_ratio`` ``(c + l,)``
    with which a violation decays (the joint couplings', then the loop closures', see
    :mod:`.couplings`) and its ``contact_slots`` (static): the implicit
    step rests each link on at most that many of its deepest points ``(N,)`` (None: every point;
    see :mod:`.contact_slots`), and on a plane (no terrain boxes or height function) on its
    ``plane_slots`` (static; None: as ``contact_slots``): of a cylinder's rim rings only their
    squares (:func:`.contact_slots.square_points`).
    Defaults: :meth:`SimulationParams.build`."""

    contact: ContactParams
    contact_enabled: jax.Array
    limit_stiffness: jax.Array
    limit_damping: jax.Array
    friction_velocity: jax.Array
    coupling_time_constant: jax.Array
    coupling_damping_ratio: jax.Array
    contact_slots: tuple[int, ...] | None = None
    plane_slots: PlaneSlots | None = None


@pytree_dataclass()
class SceneryParams:
    """The terrain's static boxes as a model of the world of one model: ``model``, welded to the
    world (:func:`.scenery.boxes_model`), and its :class:`ModelParams` ``params``."""

    model: Model
    params: ModelParams


STATIC_BOXES = ("shapes", "points")
"""How a model meets the terrain's static boxes (:meth:`SimulationParams.build`)."""

_WORLD_FIELDS = tuple(field.name for field in dataclasses.fields(WorldParams))
_MODEL_FIELDS = tuple(field.name for field in dataclasses.fields(ModelParams))


@pytree_dataclass()
class SimulationParams:
    """The parameters of the world of one model: its ``world`` settings (:class:`WorldParams`),
    the ``model``'s (:class:`ModelParams`), the contacts between its own links and with the
    terrain's static boxes, ``collisions`` (:class:`.collision.collisions.Collisions`: the
    collision table and the pair law, as a world of this model and the boxes has them; None:
    none), and those boxes as a model of that world, ``scenery`` (:class:`SceneryParams`; None:
    no boxes, or the model's points meet them). Every field of ``world`` and ``model`` reads as
    an attribute (``params.dt``, ``params.contact``) and :meth:`replace` changes any of them by
    its name."""

    world: WorldParams
    model: ModelParams
    collisions: Collisions | None = None
    scenery: SceneryParams | None = None

    def replace(self, **changes: Any) -> "SimulationParams":
        """A copy with fields of ``world`` or ``model`` changed by name (``world``, ``model`` and
        ``collisions`` and ``scenery`` themselves too); TypeError naming any other."""
        unknown = sorted(set(changes) - set(_WORLD_FIELDS) - set(_MODEL_FIELDS) - {"world", "model", "collisions", "scenery"})
        if unknown:
            raise TypeError(f"SimulationParams has no fields {unknown}")
        world, model = changes.get("world", self.world), changes.get("model", self.model)
        return SimulationParams(
            world=world.replace(**{k: v for k, v in changes.items() if k in _WORLD_FIELDS}),
            model=model.replace(**{k: v for k, v in changes.items() if k in _MODEL_FIELDS}),
            collisions=changes.get("collisions", self.collisions),
            scenery=changes.get("scenery", self.scenery),
        )

    @staticmethod
    def build(
        model: Model,
        *,
        dt: float = 0.001,
        integrator: str = "implicit_euler",
        gravity: Any = (0.0, 0.0, -STANDARD_GRAVITY),
        terrain: Terrain | None = None,
        contact: ContactParams | None = None,
        max_penetration: float = 0.001,
        friction: float | None = None,
        torsional_friction: float | None = None,
        rolling_friction: float | None = None,
        damping_ratio: float = 1.0,
        contact_enabled_links: Any = None,
        limit_frequency: float | None = None,
        self_collision: bool = False,
        srdf: Any = None,
        contact_slots: str | None = "auto",
        coupling_time_constant: float | None = None,
        coupling_damping_ratio: float | None = None,
        static_boxes: str = "shapes",
    ) -> "SimulationParams":
        """Parameters for ``model`` with defaults derived from it.

        Contacts default to :meth:`ContactParams.from_mass` with the model's mass, ``max_penetration``
        [m], ``friction`` (None: ``DEFAULT_FRICTION``) and ``damping_ratio`` (default 1, critically damped: impacts are nearly
        inelastic; larger, overdamped: a body stops at touchdown and its contact forces carry its
        weight within a few steps, while its depth creeps to ``max_penetration``): the law of a link's
        terrain contact, which its touching points share in proportion to their depth
        (:func:`.contacts.shared_law`), so that the model resting on ``RESTING_LINKS`` of its
        links (a biped on its feet; a body of one link on it) sinks by ``max_penetration``, on one
        point or many. A model whose file gives its collisions their own friction
        (``Model.point_friction``, MJCF) keeps those for its terrain contacts; a ``friction``
        given for it then warns (``model.replace(point_friction=None)`` makes it apply there too).
        ``torsional_friction`` and ``rolling_friction`` [m] (MuJoCo's condim 4 and 6 coefficients,
        None: none) bound the contact's torque about the normal and across it by that coefficient
        times the normal force (:mod:`.contact_torques`; the implicit integrator only; they
        replace those of a given ``contact`` law): a ball rolling on the ground slows down and stops.
        With an explicit
        integrator the damping is capped so that the lightest link carrying collidable points
        stays stable (``c dt / m <= 0.5``), which makes impacts bounce; the implicit integrator
        needs no cap. Joint limits are spring-dampers giving each
        joint, with its effective inertia ``1 / (M^-1)_ii`` at the zero configuration, the
        frequency ``limit_frequency`` [rad/s] (default :func:`default_limit_frequency`),
        critically damped. The
        Coulomb friction is smoothed over a ``friction_velocity`` of ``IMPLICIT_FRICTION_VELOCITY``
        with the implicit integrator, and one that keeps the explicit step stable with the others.

        ``self_collision=True`` makes the links of the model touch each other as the links of the
        models of a world do (:meth:`.world.WorldModel.build` with ``self_collision=[True]``):
        through the collision table (shapes against shapes and points against shapes; parent and
        child, and the pairs that ``srdf``, default ``model.srdf``, disables, never touch; see
        :mod:`.collision.table`), with the pair law sized from the effective masses at each
        contact, tangential memory (static friction) and the implicit contact solve. It sets
        :attr:`collisions` (None when no two links can touch). The step's state then carries
        the tangential deformation of the self-contacts (``State.pair_deformation``, see
        :func:`.step.step`).

        The terrain's static boxes (:meth:`.terrain.Terrain.with_boxes`: a table, a step, a
        bin's walls) are met by the model's shapes with ``static_boxes="shapes"`` (the default):
        they become a model welded to the world (:attr:`scenery`, :func:`.scenery.boxes_model`)
        whose box shapes the model's shapes and points meet as the links of a world meet each
        other, through the narrow phases and the pairs' law (a box foot over a step's edge rests
        on the edge, at the pairs' depth ``PairLaw.max_penetration``). :attr:`collisions` then
        holds those pairs, the step's state their tangential deformation, and
        ``StepOutput.self_contacts`` reports them; the model's own terrain is the ground alone.
        ``"points"``: the model's collidable points meet the boxes as they meet the ground
        (:func:`.terrain.penetration`); a box's edge under a face is then no contact.

        ``contact_slots="auto"``: the implicit step rests each link on its deepest points, as many
        as can rest on flat ground together (within ``CONTACT_SLOT_TOLERANCE * max_penetration``
        of one plane: 4 for a box's corners, 8 for a cylinder's cap, 4 on a plane, whose rim rings
        rest on their squares: ``plane_slots``); while no more points of a link touch, the step is
        the same as with every point, and it costs less (see :mod:`.contact_slots`). On a
        ``terrain`` that is not a plane, ``TERRAIN_FACES`` times as many (a box in a corner of
        the floor and a wall touches with 6 corners; resting on its 4 deepest, it rocked between
        the floor's and the wall's). ``None``: every point.

        ``contact_enabled_links (N,)`` switches the terrain contacts of each link, with the ground
        and with the static boxes either way; by default every link but one welded to the world
        (:func:`welded_free`). Of a model with collision rules
        (MJCF), the points whose collisions do not touch the terrain never do
        (``Model.point_terrain``).

        The joint couplings (mimic joints) and loop closures (MJCF connect and weld) hold in
        velocity at every step; a violation of their positions (a state set off the rule,
        rounding) decays as a damped oscillator of time constant ``coupling_time_constant >= 0``
        [s] and ``coupling_damping_ratio > 0`` (MuJoCo's ``solref``; 0: removed within one
        step), see :mod:`.couplings`. None (the default) takes each constraint's from the file
        (``model.couplings`` and ``model.loops``' ``time_constant`` and ``damping_ratio``: an
        MJCF equality's ``solref``, otherwise 0.02 s and 1); a number sets every one's.
        """
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {INTEGRATORS}, not {integrator!r}")
        if static_boxes not in STATIC_BOXES:
            raise ValueError(f"static_boxes must be one of {STATIC_BOXES}, not {static_boxes!r}")
        if not dt > 0:
            raise ValueError(f"dt must be positive, got {dt}")
        if not (damping_ratio > 0 and math.isfinite(damping_ratio)):
            raise ValueError(f"damping_ratio must be finite and positive, got {damping_ratio}")
        if contact_slots not in (None, "auto"):
            raise ValueError(f"contact_slots must be 'auto' or None, not {contact_slots!r}")
        if coupling_time_constant is not None and not (coupling_time_constant >= 0 and math.isfinite(coupling_time_constant)):
            raise ValueError(f"coupling_time_constant must be finite and >= 0 [s], got {coupling_time_constant}")
        if coupling_damping_ratio is not None and not (coupling_damping_ratio > 0 and math.isfinite(coupling_damping_ratio)):
            raise ValueError(f"coupling_damping_ratio must be finite and positive, got {coupling_damping_ratio}")
        gravity = np.asarray(gravity, dtype=float)
        if gravity.shape != (3,) or not np.isfinite(gravity).all():
            raise ValueError(f"gravity must be a finite 3-vector, got {gravity!r}")
        if friction is not None and contact is None and model.point_friction is not None:
            warnings.warn(
                f"model '{model.name}' gives its collisions their own friction (Model.point_friction, from its file), which its "
                f"terrain contacts keep: friction={friction} applies only to its contacts without one (pass "
                "model.replace(point_friction=None) to apply it everywhere)", UserWarning, stacklevel=2)
        friction = DEFAULT_FRICTION if friction is None else friction
        if integrator != "implicit_euler" and (model.point_torsion is not None or model.point_rolling is not None):
            warnings.warn(
                f"model '{model.name}' gives its collisions torsional or rolling friction (its file's condim 4 or 6), which "
                f"only the implicit_euler integrator applies: {integrator!r} leaves them out", UserWarning, stacklevel=2)
        for name, value in (("torsional_friction", torsional_friction), ("rolling_friction", rolling_friction)):
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be finite and >= 0 [m], got {value}")
        if (torsional_friction is not None or rolling_friction is not None) and integrator != "implicit_euler":
            raise ValueError(f"torsional_friction and rolling_friction need the implicit_euler integrator, not {integrator!r}")
        if contact is not None and (torsional_friction is not None or rolling_friction is not None):
            contact = contact.replace(torsion=None if torsional_friction is None else jnp.asarray(float(torsional_friction)),
                                      rolling=None if rolling_friction is None else jnp.asarray(float(rolling_friction)))
        if contact is None:
            contact = ContactParams.from_mass(
                max(float(model.total_mass), 1e-3),
                points_in_contact=max(1, min(len(set(model.point_link)), RESTING_LINKS)),
                gravity=max(float(np.linalg.norm(gravity)), STANDARD_GRAVITY),
                max_penetration=max_penetration,
                friction=friction,
                damping_ratio=damping_ratio,
                torsion=torsional_friction,
                rolling=rolling_friction,
                max_linear_damping=_stable_point_damping(model, dt) if integrator in EXPLICIT_INTEGRATORS else float("inf"),
            )
        if contact_enabled_links is None:
            enabled = welded_free(model)
        else:
            enabled = np.asarray(contact_enabled_links, bool)
        if enabled.shape != (model.number_of_links,):
            raise ValueError(f"contact_enabled_links must have shape ({model.number_of_links},), got {enabled.shape}")
        inertia = _joint_effective_inertia(model)
        frequency = default_limit_frequency(dt, integrator) if limit_frequency is None else float(limit_frequency)
        if integrator in EXPLICIT_INTEGRATORS:
            friction_velocity = np.maximum(np.asarray(model.joint_friction) * dt / (0.5 * inertia), 1e-3)
        else:
            friction_velocity = np.full(model.dofs, IMPLICIT_FRICTION_VELOCITY)
        terrain = Terrain.plane() if terrain is None else terrain
        walls = boxes_model(terrain) if static_boxes == "shapes" and terrain.box_transforms.shape[0] > 0 else None
        models = [model] if walls is None else [model, walls]
        collisions = None
        if self_collision or walls is not None:
            collisions = Collisions.build(models, self_collision=[self_collision, False][: len(models)], srdf=[srdf, None][: len(models)],
                                          others=[enabled, None][: len(models)])
        scenery = None
        if walls is not None and collisions is not None:
            terrain = without_boxes(terrain)
            scenery = SceneryParams(model=walls, params=SimulationParams.build(
                walls, dt=dt, integrator=integrator, gravity=gravity, terrain=terrain).model)
        world = WorldParams(dt=jnp.asarray(float(dt)), gravity=jnp.asarray(gravity), terrain=terrain, integrator=integrator)
        faces = 1 if is_plane(world.terrain) else TERRAIN_FACES
        slots = _contact_slots(model, contact_slots, CONTACT_SLOT_TOLERANCE * max_penetration, faces)
        return SimulationParams(world=world, model=ModelParams(
            contact=contact,
            contact_enabled=to_device(enabled),
            limit_stiffness=to_device(inertia * frequency**2),
            limit_damping=to_device(2.0 * inertia * frequency),
            friction_velocity=to_device(friction_velocity),
            coupling_time_constant=_per_row(_constraints(model, "time_constant"), coupling_time_constant),
            coupling_damping_ratio=_per_row(_constraints(model, "damping_ratio"), coupling_damping_ratio),
            contact_slots=slots,
            plane_slots=plane_slots(model, slots, CONTACT_SLOT_TOLERANCE * max_penetration),
        ), collisions=collisions, scenery=scenery)


def default_limit_frequency(dt: float, integrator: str) -> float:
    """The joint limits' default frequency [rad/s] at a step ``dt`` [s] of ``integrator``: with an
    explicit one ``max(0.2 / dt, LIMIT_FREQUENCY_FLOOR)``; with the implicit step
    ``LIMIT_FREQUENCY``, ``LIMIT_STEP_FREQUENCY / dt`` if that is lower, and ``0.2 / dt`` if that
    is higher (steps below 1 ms)."""
    if integrator in EXPLICIT_INTEGRATORS:
        return max(0.2 / dt, LIMIT_FREQUENCY_FLOOR)
    return max(0.2 / dt, min(LIMIT_FREQUENCY, LIMIT_STEP_FREQUENCY / dt))


def _read_through(part: str, name: str) -> property:
    """The property that reads field ``name`` of the ``part`` (``world`` or ``model``) of a :class:`SimulationParams`."""
    return property(lambda self: getattr(getattr(self, part), name), doc=f"``{part}.{name}``")


for _part, _names in (("world", _WORLD_FIELDS), ("model", _MODEL_FIELDS)):
    for _name in _names:
        setattr(SimulationParams, _name, _read_through(_part, _name))


def _constraints(model: Model, field: str) -> jax.Array:
    """``(c + l,)``: the file's ``field`` of each joint coupling, then of each loop closure."""
    couplings, loops = getattr(model.couplings, field), getattr(model.loops, field)
    return jnp.concatenate([couplings, loops]) if model.loops.count else couplings


def _per_row(file_values: jax.Array, value: float | None) -> jax.Array:
    """``(c,)``: the file's per-row ``file_values``, or ``value`` for every row."""
    return jnp.asarray(file_values) if value is None else jnp.full(file_values.shape, float(value))


def welded_free(model: Model) -> np.ndarray:
    """``(N,)``: the links that are not welded to the world. The base body of a fixed-base model
    (its root link and the links lumped into it by fixed joints) cannot move, so it does not
    touch the terrain (the ground and the static boxes): as Gazebo skips collisions between
    static links, and its points below the ground would push the arm at every step. Its
    contacts with the links of moving models stay."""
    return ~welded_links(model)


def _contact_slots(model: Model, choice: str | None, tolerance: float, faces: int = 1) -> tuple[int, ...] | None:
    """The slot count of each link for ``choice`` (see :meth:`SimulationParams.build`), resting
    on ``faces`` faces of the terrain at once; None when every point of every link is a slot."""
    if choice is None:
        return None
    links = np.asarray(model.point_link, dtype=int)
    counts = np.bincount(links, minlength=model.number_of_links)
    ringed = np.zeros(model.number_of_links, bool)  # a ring turns its points to the surface it meets
    if model.point_ring is not None:
        ringed[links[np.asarray(model.point_ring) > 0]] = True
    facets = np.asarray(facet_counts(model, tolerance))
    slots = np.minimum(np.where(ringed, facets, faces * facets), counts)
    return None if np.all(slots >= counts) else tuple(int(k) for k in slots)


def _joint_effective_inertia(model: Model) -> np.ndarray:
    """``1 / (M^-1)_ii (n,)``: each joint's inertia with all other joints free, at the zero configuration."""
    if not model.dofs:
        return np.zeros(0)
    M = zero_pose.mass_matrix(model)
    return np.maximum(1.0 / np.diag(np.linalg.inv(M))[-model.dofs :], 1e-9)


def _stable_point_damping(model: Model, dt: float) -> float:
    """The largest linear damping [N s/m] of a link's terrain contact (shared by its touching
    points) that keeps the lightest contact-carrying link stable under an explicit step."""
    links = np.asarray(model.point_link, dtype=int)
    if links.size == 0:
        return float("inf")
    return float(0.5 * np.asarray(model.link_mass)[np.unique(links)].min() / dt)
