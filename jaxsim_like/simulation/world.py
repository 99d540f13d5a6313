"""The world step: several models, their contacts with the terrain and with each other, and
their controllers, advanced together by one pure function.

A world is a :class:`WorldModel` (the models, their parameters, the world's settings and the
static collision table) and a :class:`WorldState` (per model: the physical state, the controller
state and the history of commanded torques; the tangential deformation of every candidate contact
slot between links and the load the links pressed on each other with; the number of physics
steps done). :func:`world_step` jits, vmaps and differentiates like :func:`.step.step`; the world
of one model without controllers is that step.

Per step and model: the controllers (:mod:`.control`) turn the control table into joint torques,
the timed wrenches (:mod:`.wrenches`) that are due are added to the user's link wrenches, the
terrain contacts are evaluated as in :func:`.step.step`, and the contacts between links of
different models (and, with self-collision, of one model) come from the collision table
(:mod:`.collision`): equal and opposite forces at each contact point, with the terrain's law and
tangential memory, sized per contact (:mod:`.collision.forces`).

With the implicit integrator the contacts between links are solved together with every model
they touch: a contact's linearised force ``step_forces - resist(dv_a - dv_b)`` depends on the
velocity changes of both links. Each model's articulated-body solve takes the terms of its own
links (added link inertias, as for the terrain) and the other side's latest velocity change as a
known wrench; a fixed number of block Gauss-Seidel sweeps over the models (``pair_sweeps``)
converges to the coupled solution, since the coupled system is symmetric positive definite. The
reported force is the linearised force at the last sweep's velocity changes.

Models of one structure are stepped as one batch (:mod:`.groups`): every per-model stage is
``vmap``-ped over the batch (in the world of one model, taken unbatched), and a sweep solves the
batches in turn, each in two half-sweeps that keep the solution of one colour of its members
(red-black), so that the traced step grows with the number of structures, not of models. A
batch of kinds (models that differ only in their collidable points, padded) solves, at each turn,
its members of one colour, every kind of them at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import configuration
from .. import host
from ..dynamics import kinematics as kin_module
from ..dynamics import representations as rep
from ..dynamics import spatial
from ..dynamics.crba import mass_matrix
from ..dynamics.hulls import Hulls
from ..dynamics.kinematics import STANDARD_GRAVITY
from ..dynamics.loops import path_bias_accelerations
from ..dynamics.model import Model
from ..dynamics.rnea import check_joint_vector
from ..dynamics.state import State
from ..dynamics.tendon_kinematics import tendon_joint_torques
from ..parsers.description import WorldClosure
from ..parsers.shapes import RIM_COLUMNS
from ..pytree import pytree_dataclass
from . import control, wrenches
from .model_step import (
    Accelerations, Prepared, Solved, StepOutput, accelerations, advance, at_rest, euler_advance, finish, is_finite, normalized,
    point_inertias, prepare, smallest_moments, solve, with_mocap_poses,
)
from .collision import CollisionTable, Contacts, Geometry, query
from .collision.collisions import Collisions
from .collision.forces import ExplicitPairs, PairLaw, PairSlots, explicit_pair_forces, pair_forces, row_link_pairs, shared_pair_law
from .contact_torques import ImplicitTorques, couple_inertias, implicit_torques
from .contact_slots import link_one_hot
from .contacts import ContactParams, implicit_deformation, overdamped_weight, relaxed_deformation
from .couplings import base_velocity_offset
from .groups import COLOURS, ModelGroup, from_global, group_models, groups_of, stack, stack_models, to_global, unstack
from .params import INTEGRATORS, ModelParams, SceneryParams, SimulationParams, WorldParams
from .scenery import boxes_model, without_boxes
from .terrain import Terrain
from .world_closures import WorldClosures, about_world_origin, closure_forces, closure_rows, end_velocity, row_wrenches, world_poses


LOAD_BOUND = 100.0
"""The most a law sized for the load it carries may exceed the law of its own mass (times),
so that the forces of a violent impact do not make the next step stiffer than that."""

TERRAIN_DAMPING_GROWTH = (4.0, 20.0)
"""``(g, bound)``: a model's terrain law sized ``s`` times its own mass for the load it carries is
damped ``min(1 + g (s - 1), bound)`` times its own damping ratio (:func:`_loaded`): what stands
on a body rocks on it, a mode whose inertia grows faster than the load."""

PAIR_DAMPING_GROWTH = (1.0, 8.0)
"""``(g, bound)``: the same for the laws of the contacts between links."""

TOUCHING_PER_LINK = 8
"""The default touching budget (:meth:`WorldModel.build`): this many touching contact slots
between links per link of the collision table, at most the table's slots (a pile at rest
touches about three per link)."""


@pytree_dataclass(static=["collision", "exact_velocity", "pair_sweeps", "load_aware", "touching", "scenery"])
class WorldModel:
    """The models of a world ``(M,)``, their :class:`.params.ModelParams`, the world's
    :class:`.params.WorldParams`, the :class:`.collision.forces.PairLaw` of the contacts between
    links and the friction and margins of the table's explicit pairs (``explicit_pairs``, None:
    none; :class:`.collision.forces.ExplicitPairs`), each link's translational inverse weight ``inverse_weight (L,)`` [1/kg] (global link
    order; zero for links welded to the world; see :func:`.collision.collisions.link_inverse_weights`), and the static
    structure: the collision table (None: links never touch each other), per model whether its
    velocity_follower_dart joints are tracked exactly (``exact_velocity``, which costs a dense
    solve per step), and the block Gauss-Seidel sweeps that solve the contacts between links
    together with the models they touch (``pair_sweeps``, implicit integrator), and whether the
    contact laws are sized for the load the links carry (``load_aware``, see :func:`_loaded`);
    ``closures``: the loop closures between links of two models (:mod:`.world_closures`; None:
    none); ``touching``: the touching budget, the most touching contact slots between links that
    the implicit step solves (static; see :meth:`build`; 0, or the table's size: every slot);
    ``scenery``: how many of the last models :meth:`build` made of the terrain's static boxes
    (:mod:`.scenery`; static, 0 or 1)."""

    models: tuple[Model, ...]
    model_params: tuple[ModelParams, ...]
    params: WorldParams
    pair_law: PairLaw
    inverse_weight: jax.Array
    explicit_pairs: ExplicitPairs | None = None
    collision: CollisionTable | None = None
    closures: WorldClosures | None = None
    exact_velocity: tuple[bool, ...] = ()
    pair_sweeps: int = 4
    load_aware: bool = True
    touching: int = 0
    scenery: int = 0

    @staticmethod
    def build(
        models: Sequence[Model],
        *,
        dt: float = 0.001,
        integrator: str = "implicit_euler",
        gravity: Any = (0.0, 0.0, -STANDARD_GRAVITY),
        terrain: Terrain | None = None,
        contact: Sequence[ContactParams | None] | None = None,
        max_penetration: float = 0.001,
        friction: float | None = None,
        torsional_friction: float | None = None,
        rolling_friction: float | None = None,
        collisions: bool = True,
        self_collision: Sequence[bool] | None = None,
        srdf: Sequence[Any] | None = None,
        budget: int | None = None,
        touching_budget: int | None = None,
        pair_law: PairLaw | None = None,
        pair_sweeps: int = 4,
        exact_velocity: Sequence[bool] | None = None,
        load_aware: bool = True,
        closures: Sequence[WorldClosure] = (),
    ) -> "WorldModel":
        """A world of ``models`` with one step size ``dt`` [s], ``integrator``, ``gravity (3,)``
        [m/s^2] and ``terrain`` (default: the plane z = 0). Each model's parameters are those of
        :meth:`.params.SimulationParams.build` (``contact`` per model, None: from its mass,
        ``max_penetration``, ``friction``, ``torsional_friction`` and ``rolling_friction``, which
        the contacts between links take too: the larger of the two models'). ``collisions``: links
        of different models touch each other (and those of one model too where ``self_collision``), through a table of at
        most ``budget`` candidate pairs per pair kind (see :mod:`.collision`), with the law
        ``pair_law`` (default: :meth:`.collision.forces.PairLaw.build`) and the larger friction
        of the two models, solved with ``pair_sweeps >= 1`` block Gauss-Seidel sweeps;
        ``load_aware``: with the implicit integrator, the laws of a model's terrain contacts and
        of the contacts between links are sized for the load that the links carry (see
        :func:`_loaded`); ``touching_budget``: with the implicit integrator, the most contact
        slots between links that touch (of the table's :attr:`.collision.CollisionTable.size`)
        that a step solves: after the collision query the touching slots are gathered into a
        buffer of this many rows, on which the pair laws, the solves and the tangential memories
        run (default: ``TOUCHING_PER_LINK`` per link of the table, at most its slots);
        :attr:`PairContacts.dropped` counts the touching slots it could not hold;
        :attr:`PairContacts.overflow` tells whether the budget held every pair. Static geometry
        (a bin, a table, walls) belongs in the ``terrain`` (its boxes): with ``collisions`` the
        boxes become the world's last model, ``terrain``, welded to the world
        (:func:`.scenery.boxes_model`; its state is made by :meth:`initial_state` and its inputs
        by the rollouts where they are given for the other models only), whose shapes the
        bodies' shapes meet through the pairs' narrow phases and law (a body over a table's edge
        rests on it); the models' own terrain is then the ground alone. Without ``collisions``
        the bodies' collidable points meet the boxes (:func:`.terrain.penetration`).
        ``closures``: the loop closures between links of two of the models (the
        :attr:`~jaxsim_like.parsers.description.WorldDescription.closures` of a world file, see
        :mod:`.world_closures`), by the models' names; they need the implicit integrator."""
        models = tuple(models)
        count = len(models)
        scenery = int(collisions and terrain is not None and terrain.box_transforms.shape[0] > 0)
        contact = (None,) * count if contact is None else tuple(contact)
        self_collision = (False,) * count if self_collision is None else tuple(bool(x) for x in self_collision)
        srdf = (None,) * count if srdf is None else tuple(srdf)
        exact_velocity = (False,) * count if exact_velocity is None else tuple(bool(x) for x in exact_velocity)
        for name, values in (("contact", contact), ("self_collision", self_collision), ("srdf", srdf), ("exact_velocity", exact_velocity)):
            if len(values) != count:
                raise ValueError(f"{name} must have one entry per model ({count}), got {len(values)}")
        if scenery:
            models, contact, self_collision = models + (boxes_model(terrain),), contact + (None,), self_collision + (False,)
            srdf, exact_velocity, terrain = srdf + (None,), exact_velocity + (False,), without_boxes(terrain)
        if not (isinstance(pair_sweeps, (int, np.integer)) and pair_sweeps >= 1):
            raise ValueError(f"pair_sweeps must be an integer >= 1, got {pair_sweeps!r}")
        if touching_budget is not None and not (isinstance(touching_budget, (int, np.integer)) and touching_budget >= 1):
            raise ValueError(f"touching_budget must be an integer >= 1, got {touching_budget!r}")
        built = [
            SimulationParams.build(
                model, dt=dt, integrator=integrator, gravity=gravity, terrain=terrain, contact=law,
                max_penetration=max_penetration, friction=friction, torsional_friction=torsional_friction,
                rolling_friction=rolling_friction, static_boxes="points",
            )
            for model, law in zip(models, contact)
        ]
        if not built:
            raise ValueError("a world needs at least one model")
        # None when nothing can touch: the step of each model alone.
        found = Collisions.build(models, self_collision=self_collision, srdf=srdf, budget=budget, pair_law=pair_law) if collisions else None
        fields = _collision_fields(built[0].world, found, pair_law)
        if touching_budget is not None and found is not None:
            fields["touching"] = min(int(touching_budget), found.table.size)
        return WorldModel(
            models=models,
            model_params=tuple(p.model for p in built),
            params=built[0].world,
            exact_velocity=exact_velocity,
            pair_sweeps=int(pair_sweeps),
            load_aware=bool(load_aware),
            closures=WorldClosures.build(models[:count], closures),  # the terrain's boxes hold none
            scenery=scenery,
            **fields,
        )

    @staticmethod
    def of(model: Model, world: WorldParams, params: ModelParams, collisions: Collisions | None = None,
           scenery: SceneryParams | None = None) -> "WorldModel":
        """The world of ``model`` under the ``world`` settings and its ``params``, with the
        contacts between its links ``collisions`` (:attr:`.params.SimulationParams.collisions`,
        None: none) and the terrain's boxes as its last model ``scenery``
        (:attr:`.params.SimulationParams.scenery`, None: none). No numpy work: a traced model
        and traced parameters make a traced world (the world that :func:`.step.step` advances)."""
        if scenery is None:
            return WorldModel.assemble((model,), (params,), world, collisions)
        return WorldModel.assemble((model, scenery.model), (params, scenery.params), world, collisions).replace(scenery=1)

    @staticmethod
    def assemble(
        models: Sequence[Model],
        model_params: Sequence[ModelParams],
        world: WorldParams,
        collisions: Collisions | None = None,
        exact_velocity: Sequence[bool] | None = None,
    ) -> "WorldModel":
        """The world of ``models`` with their ``model_params`` under the ``world`` settings, the
        contacts between their links ``collisions`` (:meth:`.collision.collisions.Collisions.build`
        of the same models, built once; None: none) and ``exact_velocity`` per model (default:
        none). No numpy work (the world the object API steps; :meth:`build` makes every part)."""
        exact_velocity = (False,) * len(models) if exact_velocity is None else tuple(bool(x) for x in exact_velocity)
        return WorldModel(models=tuple(models), model_params=tuple(model_params), params=world, exact_velocity=exact_velocity,
                          **_collision_fields(world, collisions))

    def initial_state(self, states: Sequence[State] | None = None, history: int = 0) -> "WorldState":
        """The :class:`WorldState` at ``states`` (default: each model's :meth:`State.build`; those of
        the models :meth:`build` made of the terrain may be left out), controllers fresh, with a
        history of the last ``history`` commanded torques."""
        states = tuple(State.build(m) for m in self.models) if states is None else tuple(states)
        if self.scenery and len(states) == len(self.models) - self.scenery:
            states += tuple(State.build(m) for m in self.models[len(states):])
        if len(states) != len(self.models):
            raise ValueError(f"states must have one entry per model ({_model_count(self)}), got {len(states)}")
        dtypes = [s.joint_positions.dtype for s in states]
        return WorldState(
            states=states,
            controllers=tuple(control.ControllerState.zeros(m.dofs, d) for m, d in zip(self.models, dtypes)),
            histories=tuple(host.zeros((history, m.dofs), d) for m, d in zip(self.models, dtypes)),
            steps=jnp.asarray(0, jnp.int32),
            pair_deformation=self.pair_deformation_zeros(dtypes[0]),
            pair_load=self.pair_load_zeros(dtypes[0]),
            wall_load=self.pair_load_zeros(dtypes[0]),
        )

    def pack(self, state: WorldState, inputs: Sequence["ModelInputs | None"] | None = None) -> "PackedWorldState":
        """``state`` with the models of each group of one structure stacked (under ``inputs``, which
        take part in the grouping: pass those the rollouts will get)."""
        return _grouped(self, state, inputs)[1]

    def unpack(self, packed: "PackedWorldState") -> WorldState:
        """The :class:`WorldState` of ``packed``, per model."""
        return _ungrouped(self, packed)

    def pair_deformation_zeros(self, dtype: Any) -> jax.Array:
        """``(K, 3)``: no tangential deformation at any candidate slot of the collision table."""
        count = 0 if self.collision is None else self.collision.candidate_slots
        return host.zeros((count, 3), dtype)

    def pair_load_zeros(self, dtype: Any) -> jax.Array:
        """``(L,)``: no link of the collision table pressed by another (``WorldState.pair_load``
        and ``WorldState.wall_load``)."""
        return host.zeros(0 if self.collision is None else self.collision.links, dtype)


def _collision_fields(world: WorldParams, collisions: Collisions | None, pair_law: PairLaw | None = None) -> dict[str, Any]:
    """The fields of a :class:`WorldModel` of the ``world`` settings that hold ``collisions``
    (None: no collision table, no inverse weights, in the dtype of ``world.dt``, and
    ``pair_law``, default :meth:`.collision.forces.PairLaw.build`, unused); the default touching
    budget of the table (``TOUCHING_PER_LINK`` per link, at most its slots)."""
    if collisions is None:
        return dict(pair_law=PairLaw.build() if pair_law is None else pair_law, inverse_weight=jnp.zeros(0, jnp.result_type(world.dt)))
    table = collisions.table
    return dict(pair_law=collisions.pair_law, inverse_weight=collisions.inverse_weight, explicit_pairs=collisions.explicit_pairs,
                collision=table, touching=min(TOUCHING_PER_LINK * table.links, table.size))


class WorldState(NamedTuple):
    """Per model: ``states`` (:class:`State`), ``controllers`` (:class:`.control.ControllerState`)
    and ``histories (H, n)``, the commanded torques of the last ``H`` physics steps (row ``s % H``
    holds step ``s``; ``H = 0``: none kept); ``steps``: the physics steps done (the time is
    ``steps * dt``); ``pair_deformation (K, 3)`` [m]: the tangential deformation (world axes) of
    every candidate contact slot of the collision table (:attr:`.collision.Contacts.slot`);
    ``pair_load (L,)`` [N]: per link of the collision table (global order), the force along
    gravity with which the links of other models pressed on it in the last step; ``wall_load
    (L,)`` [N]: per link, the force across gravity with which they pressed it into the terrain
    that its points meet (a body that a pile presses against a height function's steep slope, or
    against terrain boxes in a world of :meth:`WorldModel.assemble` whose models' terrain has
    them; see :func:`_walled` and :func:`_loaded`)."""

    states: tuple[State, ...]
    controllers: tuple[control.ControllerState, ...]
    histories: tuple[jax.Array, ...]
    steps: jax.Array
    pair_deformation: jax.Array
    pair_load: jax.Array
    wall_load: jax.Array


@pytree_dataclass(static=["members"])
class PackedWorldState:
    """A :class:`WorldState` with the models of each group of one structure (:mod:`.groups`)
    stacked: ``members``, the world indices of each group's models (static); per group, the
    ``states``, ``controllers`` and ``histories`` of its models stacked along a leading axis;
    ``steps``, ``pair_deformation``, ``pair_load`` and ``wall_load`` as in :class:`WorldState`. :func:`world_rollout` and
    :func:`world_step` take either form and return the form they were given; from this one, their
    compiled program does not grow with the number of models of a group (see
    :meth:`WorldModel.pack` and :meth:`WorldModel.unpack`)."""

    members: tuple[tuple[int, ...], ...]
    states: tuple[State, ...]
    controllers: tuple[control.ControllerState, ...]
    histories: tuple[jax.Array, ...]
    steps: jax.Array
    pair_deformation: jax.Array
    pair_load: jax.Array
    wall_load: jax.Array


class ModelInputs(NamedTuple):
    """What acts on one model during a step, each optional: ``joint_torques (n,)`` [N m or N]
    added to the controllers' command, ``link_wrenches (N, 6)`` (world axes, about each link
    origin, see :mod:`.wrenches`), the control ``table (n, control.COLUMNS)`` with its controller
    ``period`` [s] (None: no controllers), ``timed_wrenches (K, wrenches.COLUMNS)``,
    ``tendon_forces (t,)`` [N] along the model's tendons (their joint torques ``J^T f`` at the
    step's start join the command), and the pose of the mocap bodies its loop closures hold on
    (``model.loops.mocap_names``), ``mocap_positions (k, 3)`` [m] and ``mocap_quaternions (k,
    4)`` (wxyz, world frame; None: the model's, the file's pose; see :func:`.step.step`),
    ``com_wrenches (N, 6)``, as ``link_wrenches`` but about each link's centre of mass, and
    ``joint_damping (n,)`` [N m s/rad or N s/m], a viscous damping ``-c q_dot`` per degree of
    freedom added to the command (a ball joint's: about its child-frame axes), taken at the end of
    the step by the implicit integrator (as MuJoCo's implicit integrators take an actuator's
    ``kv``) and at its start otherwise."""

    joint_torques: jax.Array | None = None
    link_wrenches: jax.Array | None = None
    table: jax.Array | None = None
    period: jax.Array | None = None
    timed_wrenches: jax.Array | None = None
    tendon_forces: jax.Array | None = None
    mocap_positions: jax.Array | None = None
    mocap_quaternions: jax.Array | None = None
    com_wrenches: jax.Array | None = None
    joint_damping: jax.Array | None = None


class ModelReport(NamedTuple):
    """What the object API reads of a model's step, besides its :class:`.step.StepOutput`: the
    ``commanded (n,)`` torques (controllers and inputs, before the joint effects; a PID taken at
    the end of the step gives what it applied over the step), the user
    ``link_wrenches (N, 6)`` that acted (world axes, about each link origin), the mixed link
    accelerations ``(N, 6)`` (``[d^2 p_L/dt^2; dw/dt]``, world axes), the same in link axes
    ``body_accelerations (N, 6)``, the ``link_origins (N, 3)`` [m] (world frame) and the wrench
    each joint transmitted to its child link, ``joint_wrenches (n, 6)`` (body frame of the
    child, about its origin), all at the state the step started from."""

    commanded: jax.Array
    link_wrenches: jax.Array
    link_accelerations: jax.Array
    body_accelerations: jax.Array
    link_origins: jax.Array
    joint_wrenches: jax.Array


class PairContacts(NamedTuple):
    """The contacts between links of the step (:class:`.collision.Contacts`: global link
    indices ``link_a``, ``link_b``, ``position``, ``normal`` from b towards a, ``depth``,
    ``active``), the ``forces (C, 3)`` [N] on link a (b feels the opposite), world axes, and the
    broad phase's ``overflow (K,)`` (int32) per pair group of the collision table
    (``collision.groups``): the candidate pairs whose bounding spheres overlapped (that may
    touch) and that its budget could not hold. Any non-zero count means contacts may have been
    missed: raise that kind's ``budget`` (:meth:`WorldModel.build`) to at least its ``keep`` plus
    the largest overflow seen. ``torques (C, 3)`` [N m]: the torsional and rolling friction
    couples on link a (b feels the opposite; None: the laws have none). ``dropped`` (int32, ``()``):
    the touching slots that the world's touching budget could not hold (:meth:`WorldModel.build`),
    which felt no force in the step; any non-zero count: raise ``touching_budget`` to at least
    the budget plus the largest count seen (None: the step solved every slot)."""

    contacts: Contacts
    forces: jax.Array
    overflow: jax.Array
    torques: jax.Array | None = None
    dropped: jax.Array | None = None


class WorldOutputs(NamedTuple):
    """Per model, its :class:`.step.StepOutput` (terrain contacts, applied joint torques,
    accelerations, finite) and :class:`ModelReport` (None: not asked for, see :func:`world_step`);
    the ``pairs`` (None without a collision table) and ``finite``: whether every model's next state
    is finite."""

    models: tuple[StepOutput, ...]
    reports: tuple[ModelReport, ...]
    pairs: PairContacts | None
    finite: jax.Array


def _commands(
    model: Model, params: WorldParams, current: State, controller: control.ControllerState, inputs: ModelInputs,
    steps: jax.Array, implicit: bool,
) -> tuple[control.Commands, control.ControllerState]:
    """The :class:`.control.Commands` of ``model`` at ``current`` at the start of physics step
    ``steps`` (before exact velocity tracking; slopes only where the command is within the
    model's effort limits) and its next controller state. The controllers of the followers of
    joint couplings (mimic joints) are idle: their leaders drive them, as DART's mimic actuators."""
    dtype = current.joint_positions.dtype
    torques = check_joint_vector(model, "joint_torques", inputs.joint_torques, dtype)
    if inputs.tendon_forces is not None:
        torques = torques + tendon_joint_torques(model, current, inputs.tendon_forces)
    if inputs.table is None:
        commands = control.Commands.explicit(torques)
    else:
        dt = params.dt.astype(dtype)
        period = jnp.zeros((), dtype) if inputs.period is None else inputs.period
        table = inputs.table
        if model.couplings.rows:
            table = table.at[np.asarray(model.couplings.follower), control.MODE].set(int(control.JointControlMode.idle))
        commands, controller = control.joint_commands(
            table, period, controller, configuration.dof_positions(model, current.joint_positions), current.joint_velocities,
            steps.astype(dtype) * dt, dt, implicit,
        )
        commands = commands._replace(torques=torques + commands.torques)
    if inputs.joint_damping is not None:
        damping = check_joint_vector(model, "joint_damping", inputs.joint_damping, dtype)
        commands = commands.damped(damping, current.joint_velocities, implicit)
    if inputs.table is None and inputs.joint_damping is None:
        return commands, controller
    return commands.limited(jnp.abs(commands.torques) < model.effort_limit), controller


def _exact_velocity(
    model: Model,
    state: State,
    world: WorldParams,
    params: ModelParams,
    table: jax.Array,
    commands: control.Commands,
    link_wrenches: jax.Array,
) -> jax.Array:
    """The commanded torques plus, on velocity_follower_dart joints, the torques that bring their
    velocity to the (clipped) target in one step, clipped to the table's effort limits.

    The step of the model alone is affine in the joint torques, ``qd' = qd'_0 + R tau``: with the
    implicit integrator ``R`` is the derivative of the step's own solve (one articulated-body pass
    per joint: the joint damping, friction, limits and end-of-step PIDs as armature and the
    terrain contacts as added link inertias, all taken at the end of the step), otherwise ``dt
    M^-1``. The extra torques solve ``R_cc tau_c = target_c - qd'_0,c`` on those joints ``c``
    (exact up to the effort limits for the implicit and semi-implicit Euler steps of the model
    alone; the contacts with other models are left out, and RK4 is approximate)."""
    follower = table[:, control.MODE] == int(control.JointControlMode.velocity_follower_dart)
    n, dtype = model.dofs, state.joint_positions.dtype
    if world.integrator == "implicit_euler":
        slopes = (commands.stiffness, commands.damping)
        prepared = prepare(model, state, world, params, commands.torques, True, slopes)
        prepared = prepared._replace(G_f_ext=prepared.G_f_ext + wrenches.about_frame_origin(link_wrenches, prepared.kin.G_H_L[:, :3, 3]))

        def accelerations(extra: jax.Array) -> jax.Array:
            effects = prepared.effects._replace(torques=prepared.effects.torques + extra)
            return solve(model, state, world, params, prepared._replace(effects=effects), True).outputs.joint_accelerations

        accelerations_0, linear = jax.linearize(accelerations, jnp.zeros(n, dtype))
        free = state.joint_velocities + world.dt * accelerations_0
        response = world.dt * jax.vmap(linear)(jnp.eye(n, dtype=dtype)).T
    else:
        alone = WorldModel.of(model, world, params)
        inputs = [ModelInputs(joint_torques=commands.torques, link_wrenches=link_wrenches)]
        free = world_step(alone, alone.initial_state([state]), inputs, reports=False)[0].states[0].joint_velocities
        M = mass_matrix(model, state)
        selector = jnp.zeros((M.shape[0], n), dtype).at[M.shape[0] - n :, :].set(jnp.eye(n, dtype=dtype))
        response = world.dt * jnp.linalg.solve(M, selector)[M.shape[0] - n :, :]
    target = jnp.clip(table[:, control.VELOCITY_TARGET], table[:, control.VELOCITY_MIN], table[:, control.VELOCITY_MAX])
    system = jnp.where(follower[:, None] & follower[None, :], response, jnp.eye(n, dtype=dtype))
    extra = jnp.linalg.solve(system, jnp.where(follower, target - free, 0.0))
    return jnp.clip(commands.torques + jnp.where(follower, extra, 0.0), table[:, control.EFFORT_MIN], table[:, control.EFFORT_MAX])


def _material_velocity(W_v: jax.Array, link: jax.Array, arms: jax.Array) -> jax.Array:
    """``(C, 3)``: the velocity of the material points of links ``link (C,)`` at ``arms (C, 3)``
    from their model's ``G`` origin, given the global inertial link velocities ``W_v (L, 6)``."""
    v = W_v[link]
    return v[:, :3] + jnp.cross(v[:, 3:], arms)


def _on_links(force_a: jax.Array, force_b: jax.Array, contacts: Contacts, arms_a: jax.Array, arms_b: jax.Array, links: int) -> jax.Array:
    """``(L, 6)``: the wrenches (world axes, about each model's ``G`` origin) of the forces
    ``force_a (C, 3)`` on the links a and ``force_b (C, 3)`` on the links b of the contacts."""
    forces, arms = jnp.concatenate([force_a, force_b]), jnp.concatenate([arms_a, arms_b])
    return _link_sums(jnp.concatenate([forces, jnp.cross(arms, forces)], axis=-1), contacts, links)


def _couples_on_links(torque_a: jax.Array, torque_b: jax.Array, contacts: Contacts, links: int) -> jax.Array:
    """``(L, 6)``: the wrenches of the couples ``torque_a (C, 3)`` on the links a and ``torque_b
    (C, 3)`` on the links b of the contacts."""
    torques = jnp.concatenate([torque_a, torque_b])
    return _link_sums(jnp.concatenate([jnp.zeros_like(torques), torques], axis=-1), contacts, links)


def _link_sums(values: jax.Array, contacts: Contacts, links: int) -> jax.Array:
    """``(L, ...)``: the sums per link of ``values (2C, ...)``, those of the links a of the contacts
    and then those of their links b (one scatter: XLA's CPU backend compiles each into a loop)."""
    return jax.ops.segment_sum(values, jnp.concatenate([contacts.link_a, contacts.link_b]), links)


def _pair_law(world: WorldModel, batches: Sequence[_Batch], contacts: Contacts) -> tuple[ContactParams, jax.Array]:
    """The law ``(C,)`` of each contact (:meth:`.collision.forces.PairLaw.contact_params`, with the
    larger friction of the two models, as MuJoCo combines friction, or the friction of the
    table's pair at its slot: an explicit pair's, or the larger of two collisions' own, of one
    file or of two) and its effective mass
    ``(C,)`` [kg] (infinite between two links welded to the world). Torsional and rolling
    friction where a model's law or a table's pair has them: the larger coefficients of the two
    models' laws (none: 0), or the pair's."""
    dtype = contacts.depth.dtype
    friction = to_global([b.group for b in batches], "links", [
        jnp.broadcast_to(jnp.reshape(b.params.contact.friction, (-1, 1)), b.group.links.shape) for b in batches
    ]).astype(dtype)
    weight = world.inverse_weight.astype(dtype)
    total = weight[contacts.link_a] + weight[contacts.link_b]
    mass = 1 / jnp.where(total > 0, total, 1.0)
    friction = jnp.maximum(friction[contacts.link_a], friction[contacts.link_b])
    explicit = world.explicit_pairs
    if explicit is not None:
        friction = explicit.contact_friction(world.collision, contacts.link_a, contacts.link_b, contacts.slot, friction)
    law = world.pair_law.contact_params(mass, friction)
    if any(b.params.contact.spins for b in batches) or (explicit is not None and explicit.torsion is not None):
        spin = {}
        for name in ("torsion", "rolling"):
            per_link = to_global([b.group for b in batches], "links", [jnp.broadcast_to(jnp.reshape(
                jnp.zeros(()) if getattr(b.params.contact, name) is None else getattr(b.params.contact, name), (-1, 1)), b.group.links.shape)
                for b in batches]).astype(dtype)
            spin[name] = jnp.maximum(per_link[contacts.link_a], per_link[contacts.link_b])
            if explicit is not None and explicit.torsion is not None:
                spin[name] = explicit.slot_values(world.collision, getattr(explicit, name), contacts.slot, spin[name])
        law = law.replace(**spin)
    return law, jnp.where(total > 0, mass, jnp.inf)


def _loaded(law: ContactParams, mass: jax.Array, carried: jax.Array, growth: tuple[float, float],
            rocking: jax.Array | None = None) -> ContactParams:
    """``law``, sized for ``mass (B,)`` [kg] (stiffness and damping proportional to it, as
    :meth:`.contacts.ContactParams.from_mass` and :meth:`.collision.forces.PairLaw.contact_params`
    size them; fields ``(B, ...)``), sized instead for ``max(mass, carried)`` [kg], at most
    ``LOAD_BOUND`` times ``mass``, with its damping ratio ``min(1 + g (s - 1), bound)`` times its
    own for the scale ``s`` of ``rocking (B,)`` [kg] (default ``carried``; bounded alike) and
    ``growth = (g, bound)`` (the law kept firm as an overdamped one, see
    :func:`.contacts.overdamped_weight`); unchanged where ``mass`` is not finite and positive.

    The load-aware laws of the implicit world step: a model's terrain law is sized for its mass
    plus the load with which the links of other models pressed on its links along gravity in the
    last step (``WorldState.pair_load`` over ``|g|``) and into the terrain across gravity
    (``WorldState.wall_load`` over ``|g|``: what a wall carries of a pile), damped by
    ``TERRAIN_DAMPING_GROWTH`` for the load along gravity alone (what stands on a body rocks on
    it; a push across gravity only presses it); a
    contact between links for the lighter of its two sides, each a link's mass with the load on it
    (between two stacked boxes, what rests on the lower one; a box on a table, the box alone),
    damped by ``PAIR_DAMPING_GROWTH``. A body that carries others rests at ``max_penetration``,
    damped for the mass it carries and for the rocking of what stands on it; one that nothing
    presses on keeps its law (a robot alone on the ground steps as in :func:`.step.step`)."""
    valid = jnp.isfinite(mass) & (mass > 0)

    def scale_of(load: jax.Array) -> jax.Array:
        return jnp.where(valid, jnp.clip(load / jnp.where(valid, mass, 1.0), 1.0, LOAD_BOUND), 1.0)

    scale = scale_of(carried)
    ratio = jnp.minimum(1 + growth[0] * ((scale if rocking is None else scale_of(rocking)) - 1), growth[1])

    def scaled(x: jax.Array, factor: jax.Array) -> jax.Array:
        return x * jnp.reshape(factor, factor.shape + (1,) * (jnp.ndim(x) - factor.ndim))

    firm = scaled(jnp.ones_like(law.overdamped), overdamped_weight(ratio))
    overdamped = law.overdamped + (1 - law.overdamped) * firm
    return law.replace(stiffness=scaled(law.stiffness, scale), damping=scaled(law.damping, scale * ratio), overdamped=overdamped)


def _between_models(table: CollisionTable, contacts: Contacts) -> jax.Array:
    """``(C,)``: whether each contact is between the links of two models (not a self-contact)."""
    model = jnp.asarray(table.link_model)
    return model[contacts.link_a] != model[contacts.link_b]


def _pressed(table: CollisionTable, forces: jax.Array, contacts: Contacts, gravity: jax.Array, inverse_weight: jax.Array,
             origins: jax.Array, carried: jax.Array) -> jax.Array:
    """``(L,)`` [N]: per link of ``table``, the load on it: the sum over its contacts with the
    links of other models whose origins lie higher along ``-gravity (3,)`` of the force they
    pressed on it along ``gravity`` (where positive), from the ``forces (C, 3)`` on link a (a
    model's self-contacts put no load on its terrain contacts). What a link presses on the links
    below it is at most its weight plus the load ``carried (L,)`` [N] on it in the last step
    (``inverse_weight (L,)`` [1/kg], zero for a link welded to the world: no bound; ``origins (L,
    3)`` [m], world frame): a load is what rests on a link, and the forces of an impact, which
    exceed it, would size the laws (:func:`_loaded`) for more than that."""
    other = _between_models(table, contacts)
    norm = jnp.linalg.norm(gravity)
    down = gravity / jnp.where(norm > 0, norm, 1.0)
    along = jnp.where(contacts.active & other, forces @ down, 0.0)
    # Each contact's upper and lower link, by their origins' heights (no cycle of loads).
    depth = origins @ down
    a_below = depth[contacts.link_a] > depth[contacts.link_b]
    upper = jnp.where(a_below, contacts.link_b, contacts.link_a)
    lower = jnp.where(a_below, contacts.link_a, contacts.link_b)
    push = jnp.maximum(jnp.where(a_below, along, -along), 0.0)
    total = jax.ops.segment_sum(push, upper, table.links)
    bound = jnp.where(inverse_weight > 0, norm / jnp.where(inverse_weight > 0, inverse_weight, 1.0), jnp.inf) + carried
    factor = jnp.where(total > bound, bound / jnp.where(total > 0, total, 1.0), 1.0)
    return jax.ops.segment_sum(push * factor[upper], lower, table.links)


def _walled(table: CollisionTable, forces: jax.Array, contacts: Contacts, walls: jax.Array) -> jax.Array:
    """``(L,)`` [N]: per link of ``table``, the net force with which the links of other models
    pressed it into the terrain across gravity, where positive: from the ``forces (C, 3)`` on link
    a (b feels the opposite), the sum over its contacts with them of the force along minus its
    terrain normal across gravity ``walls (L, 3)`` (:func:`_wall_normals`; a body on the floor
    pushed along it carries none, one squeezed between a neighbour and a wall the squeeze)."""
    other = contacts.active & _between_models(table, contacts)
    on_a = jnp.where(other, -jnp.sum(forces * walls[contacts.link_a], axis=-1), 0.0)
    on_b = jnp.where(other, jnp.sum(forces * walls[contacts.link_b], axis=-1), 0.0)
    return jnp.maximum(jax.ops.segment_sum(on_a, contacts.link_a, table.links) + jax.ops.segment_sum(on_b, contacts.link_b, table.links), 0.0)


def _wall_normals(world: WorldModel, batches: Sequence["_Batch"], prepared: Sequence[Prepared], gravity: jax.Array) -> jax.Array:
    """``(L, 3)``: per link of the collision table (world axes), the terrain's normal across
    ``gravity (3,)`` [m/s^2] where the link touches it: the parts across gravity of its touching
    points' normals, averaged with weights their depth times that part's squared length (zero on
    the floor; against a wall, the wall's unit normal, whatever else the link rests on; on a ramp
    alone, its normal's part across gravity)."""
    norm = jnp.linalg.norm(gravity)
    down = gravity / jnp.where(norm > 0, norm, 1.0)

    def per_link(model: Model, normal: jax.Array, depth: jax.Array, enabled: jax.Array) -> jax.Array:
        across = normal - (normal @ down)[:, None] * down
        weight = jnp.where(enabled & (depth > 0), depth, 0.0) * jnp.sum(across * across, axis=-1)
        one_hot = link_one_hot(np.asarray(model.point_link, dtype=int), model.number_of_links, weight.dtype)
        total = one_hot @ weight
        return (one_hot @ (weight[:, None] * across)) / jnp.where(total > 0, total, 1.0)[:, None]

    return to_global([b.group for b in batches], "links", [_each(world, per_link)(b.model, p.normal, p.depth, p.enabled)
                                                          for b, p in zip(batches, prepared)])


def _terrain_loaded(batch: "_Batch", pair_load: jax.Array, wall_load: jax.Array, gravity: jax.Array) -> ModelParams:
    """The :class:`.params.ModelParams` of ``batch`` ``(G, ...)`` with the terrain law sized for
    the load its members carry along gravity and into the terrain across it and damped for the
    load along gravity (:func:`_loaded`), from the links' ``pair_load (L,)`` and ``wall_load (L,)``
    [N] and ``|g|`` ``gravity`` [m/s^2]."""
    mass = jnp.sum(batch.model.link_mass, axis=-1).astype(pair_load.dtype)
    g = jnp.where(gravity > 0, gravity, 1.0)
    vertical = mass + jnp.sum(from_global(batch.group, "links", pair_load), axis=-1) / g
    carried = vertical + jnp.sum(from_global(batch.group, "links", wall_load), axis=-1) / g
    return batch.params.replace(contact=_loaded(batch.params.contact, mass, carried, TERRAIN_DAMPING_GROWTH, vertical))


class _Batch(NamedTuple):
    """The models of one :class:`.groups.ModelGroup`, stacked along a leading axis ``(G,)``: the
    models, their parameters and inputs, and whether they track velocity_follower_dart joints
    exactly (their states travel in :class:`PackedWorldState`)."""

    group: ModelGroup
    model: Model
    params: ModelParams
    inputs: ModelInputs
    exact: bool

    @property
    def padding(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Of a padded group (:mod:`.groups`): which points are each member's own ``(G, P)`` and
        the contact slots each of its links rests on at most ``(G, N)``."""
        return (self.group.own >= 0, self.group.slot_limit) if self.group.padded else None


class _Pairs(NamedTuple):
    """The contacts between links at the start of a step: the ``contacts`` (welded pairs made
    inactive), the arms of their positions from the ``G`` origins of links a and b ``(C, 3)``,
    the relative ``velocity (C, 3)``, their ``law`` and effective ``mass (C,)``, their
    tangential ``deformation (C, 3)`` from the world state, the broad phase's ``overflow (K,)``
    per pair group of the table, and ``turning``: the angular velocities [rad/s] of links a and
    b and the velocities [m/s] of their material points at the contacts (``(C, 3)`` each, see
    :func:`.collision.forces.pair_forces`); every link's ``origins (L, 3)`` [m] (world frame); with
    torsional or rolling friction (else None), the angular velocity of link a relative to link b
    ``angular (C, 3)`` [rad/s] and ``inertia (C,)`` [kg m^2], a lower bound of the rotational
    inertia a couple between them moves.

    Gathered into the touching budget (``rows`` not None), ``C`` is the budget: ``rows (C,)``
    gives the slot of the query's contacts each row holds (the query's size where none), and
    ``every`` holds what the step reports and remembers of every slot of the query: its
    ``contacts``, the law of each slot out of contact (for the relaxation of its tangential
    memory) and that memory ``(C_q, 3)``; ``dropped``: the touching slots left out."""

    contacts: Contacts
    arms_a: jax.Array
    arms_b: jax.Array
    velocity: jax.Array
    law: ContactParams
    mass: jax.Array
    deformation: jax.Array
    overflow: jax.Array
    turning: tuple[jax.Array, jax.Array, jax.Array, jax.Array]
    origins: jax.Array
    angular: jax.Array | None = None
    inertia: jax.Array | None = None
    rows: jax.Array | None = None
    every: tuple[Contacts, ContactParams, jax.Array] | None = None
    dropped: jax.Array | None = None


def _pairs(world: WorldModel, batches: Sequence[_Batch], prepared: Sequence[Prepared], pair_deformation: jax.Array,
           pair_load: jax.Array | None, gathered: bool = False) -> _Pairs:
    """The :class:`_Pairs` of the ``prepared`` batches, with the candidate slots' ``pair_deformation
    (K, 3)``; with the links' ``pair_load (L,)`` [N], laws sized for the load (:func:`_loaded`);
    ``gathered``: the touching slots in the world's touching budget, where it is smaller than
    the table (:func:`_touching`)."""
    groups = [b.group for b in batches]
    origins = to_global(groups, "links", [jnp.broadcast_to(p.kin.origin[:, None], p.kin.G_H_L.shape[:2] + (3,)) for p in prepared])
    W_v = to_global(groups, "links", [p.kin.G_v for p in prepared])
    poses = to_global(groups, "links", [p.kin.G_H_L.at[..., :3, 3].add(p.kin.origin[:, None]) for p in prepared])
    geometry = Geometry(*(to_global(groups, field, [getattr(b.model, name) for b in batches]) for field, name in (
        ("shapes", "shape_transform"), ("shapes", "shape_size"), ("points", "collidable_points"), ("points", "point_radius"))))
    if any(b.model.ring_rim is not None for b in batches):
        geometry = geometry._replace(rims=to_global(groups, "points", [
            jnp.zeros(b.model.point_radius.shape + (RIM_COLUMNS,), b.model.point_radius.dtype) if b.model.ring_rim is None
            else jax.vmap(lambda rim, ring: rim[ring])(b.model.ring_rim, b.model.point_ring) for b in batches]))
    if 0 not in world.collision.hull_counts:
        hulls = [b.model.shape_hulls.padded(world.collision.hull_counts) for b in batches]
        geometry = geometry._replace(hulls=Hulls(*(to_global(groups, "shapes", [getattr(h, field.name) for h in hulls])
                                                   for field in dataclasses.fields(Hulls))))
    margin = None if world.explicit_pairs is None else world.explicit_pairs.memory_margin(world.collision, poses.dtype)
    contacts, overflow = query(world.collision, geometry, poses, margin)
    law, mass = _pair_law(world, batches, contacts)
    side = None
    if pair_load is not None:
        # What a contact carries: the lighter of its two sides, each a link's mass (infinite when
        # welded to the world) with the load pressed on it (a box on a table carries itself, not
        # what else stands on the table).
        gravity = jnp.linalg.norm(world.params.gravity).astype(mass.dtype)
        weight = world.inverse_weight.astype(mass.dtype)
        side = jnp.where(weight > 0, 1 / jnp.where(weight > 0, weight, 1.0), jnp.inf) + pair_load / jnp.where(gravity > 0, gravity, 1.0)

    def sized(law: ContactParams, mass: jax.Array, contacts: Contacts) -> ContactParams:
        return law if side is None else _loaded(law, mass, jnp.minimum(side[contacts.link_a], side[contacts.link_b]), PAIR_DAMPING_GROWTH)

    rows = every = dropped = None
    if gathered and 0 < world.touching < world.collision.size:
        contacts = contacts.replace(active=contacts.active & jnp.isfinite(mass))  # links welded to the world never touch
        # Out of contact a slot's law only relaxes its memory, as the query's every slot does.
        every = (contacts, sized(law, mass, contacts), pair_deformation.at[contacts.slot].get(mode="fill", fill_value=0))
        rows, dropped = _touching(contacts.active, world.touching)
        contacts, law, mass = _rows((contacts, law, mass), rows)
        real = rows < every[0].depth.shape[0]
        contacts = contacts.replace(active=contacts.active & real, depth=jnp.where(real, contacts.depth, 0.0),
                                    slot=jnp.where(real, contacts.slot, world.collision.candidate_slots))
        law = shared_pair_law(law, contacts, world.collision, world.pair_law.max_penetration, row_link_pairs(contacts, world.collision.links))
    else:
        law = shared_pair_law(law, contacts, world.collision, world.pair_law.max_penetration)
        contacts = contacts.replace(active=contacts.active & jnp.isfinite(mass))  # links welded to the world never touch
    law = sized(law, mass, contacts)
    arms_a = contacts.position - origins[contacts.link_a]
    arms_b = contacts.position - origins[contacts.link_b]
    material_a, material_b = _material_velocity(W_v, contacts.link_a, arms_a), _material_velocity(W_v, contacts.link_b, arms_b)
    velocity = material_a - material_b
    turning = (W_v[contacts.link_a, 3:], W_v[contacts.link_b, 3:], material_a, material_b)
    angular = inertia = None
    if law.spins:
        angular = W_v[contacts.link_a, 3:] - W_v[contacts.link_b, 3:]
        moments = to_global(groups, "links", [_each(world, smallest_moments)(b.model) for b in batches]).astype(mass.dtype)
        # A link welded to the world does not turn; a point mass's moments are zero (no bound).
        compliance = jnp.where(moments > 0, 1 / jnp.where(moments > 0, moments, 1.0), jnp.inf)
        compliance = jnp.where(world.inverse_weight.astype(mass.dtype) > 0, compliance, 0.0)
        total = compliance[contacts.link_a] + compliance[contacts.link_b]
        inertia = jnp.where(jnp.isfinite(total) & (total > 0), 1 / jnp.where(total > 0, total, 1.0), 0.0)
    return _Pairs(contacts, arms_a, arms_b, velocity, law, jnp.where(jnp.isfinite(mass), mass, 0.0),
                  pair_deformation.at[contacts.slot].get(mode="fill", fill_value=0), overflow, turning, poses[:, :3, 3], angular, inertia,
                  rows, every, dropped)


def _touching(active: jax.Array, budget: int) -> tuple[jax.Array, jax.Array]:
    """The first ``budget`` touching slots of ``active (C,)``, in slot order ``(budget,)`` (``C``
    past the last), and how many touching slots are left out (int32, ``()``)."""
    rows = jnp.nonzero(active, size=budget, fill_value=active.shape[0])[0].astype(jnp.int32)
    return rows, jnp.maximum(jnp.sum(active, dtype=jnp.int32) - budget, 0)


def _rows(tree: Any, rows: jax.Array) -> Any:
    """The rows ``rows (B,)`` of every leaf of ``tree`` (``(C, ...)``; the last row past ``C``)."""
    return jax.tree.map(lambda x: x[jnp.minimum(rows, x.shape[0] - 1)], tree)


def _world_rates(
    world: WorldModel,
    batches: Sequence[_Batch],
    states: Sequence[State],
    commanded: Sequence[control.Commands],
    steps: jax.Array,
    implicit: bool,
    pair_deformation: jax.Array,
    pair_load: jax.Array,
    wall_load: jax.Array,
) -> tuple[list[Solved], list[Prepared], PairContacts | None, list[jax.Array], jax.Array, jax.Array, jax.Array]:
    """Per batch, the solved step of its models at ``states`` (stacked), what :func:`prepare` made
    of them and the user and timed wrenches ``(G, N, 6)`` that act on them; the contacts between
    links, the tangential deformation of the candidate slots after the step (from
    ``pair_deformation``) and the links' load along gravity and into the terrain across it of
    the step (from ``pair_load`` and ``wall_load``, the last step's; zero unless the laws are
    load-aware, see :func:`_loaded`)."""
    params = world.params
    loaded = implicit and world.load_aware and world.collision is not None
    gravity = jnp.linalg.norm(params.gravity).astype(pair_load.dtype)
    model_params = [_terrain_loaded(b, pair_load, wall_load, gravity) if loaded else b.params for b in batches]
    prepared, user = [], []
    for b, batch_params, current, command in zip(batches, model_params, states, commanded):
        def prepared_model(model, model_params, state, inputs, command, padding):
            slopes = (command.stiffness, command.damping)
            p = prepare(model, state, params, model_params, command.torques, implicit, slopes, padding)
            acting = _user_wrenches(model, state, inputs, steps, p.kin.G_H_L[:, :3, :3])
            if any(x is not None for x in (inputs.link_wrenches, inputs.com_wrenches, inputs.timed_wrenches)):
                p = p._replace(G_f_ext=p.G_f_ext + wrenches.about_frame_origin(acting, p.kin.G_H_L[:, :3, 3]))
            return p, acting

        p, acting = _each(world, prepared_model)(b.model, batch_params, current, b.inputs, command, b.padding)
        prepared.append(p)
        user.append(acting)

    def solved_batch(k: int, wrench: jax.Array | None, inertia: jax.Array | None, with_implicit: bool) -> Solved:
        b = batches[k]
        at = (lambda values: None if values is None else from_global(b.group, "links", values))
        return _each(world, lambda model, model_params, state, p, w, i: solve(model, state, params, model_params, p, with_implicit, w, i))(
            b.model, model_params[k], states[k], prepared[k], at(wrench), at(inertia))

    if world.closures is not None and not implicit:
        raise ValueError(f"the loop closures between models ({', '.join(world.closures.loops.names)}) need the implicit_euler integrator, "
                         f"not {params.integrator!r}")
    if world.collision is None:
        if world.closures is not None:
            solved = _closed(world, batches, states, prepared, lambda w: [solved_batch(k, w, None, True) for k in range(len(batches))])
            return solved, prepared, None, user, pair_deformation, pair_load, wall_load
        return ([solved_batch(k, None, None, implicit) for k in range(len(batches))], prepared, None, user, pair_deformation, pair_load,
                wall_load)

    groups = [b.group for b in batches]
    links = world.collision.links
    pairs = _pairs(world, batches, prepared, pair_deformation, pair_load if loaded else None, implicit)
    contacts, arms_a, arms_b = pairs.contacts, pairs.arms_a, pairs.arms_b
    dtype = pairs.velocity.dtype
    dt = params.dt.astype(dtype)
    stored = jnp.zeros_like(pair_deformation)
    if not implicit:
        forces, rate = explicit_pair_forces(pairs.law, contacts, pairs.velocity, pairs.deformation)
        wrench = _on_links(forces, -forces, contacts, arms_a, arms_b, links)
        solved = [solved_batch(k, wrench, None, False) for k in range(len(batches))]
        solved = [s._replace(G_f_applied=p.G_f_ext + from_global(b.group, "links", wrench)) for s, p, b in zip(solved, prepared, batches)]
        deformation = stored.at[contacts.slot].set(pairs.deformation + dt * rate, mode="drop")
        return (solved, prepared, PairContacts(contacts, forces, pairs.overflow), user, deformation, jnp.zeros_like(pair_load),
                jnp.zeros_like(wall_load))
    linear = pair_forces(pairs.law, contacts, pairs.velocity, pairs.deformation, dt, pairs.mass, links, pairs.turning)
    start_wrench = _on_links(linear.step_forces, -linear.step_forces, contacts, arms_a, arms_b, links)
    matrices = linear.matrices
    inertia = dt * _link_sums(point_inertias(jnp.concatenate([arms_a, arms_b]), jnp.concatenate([matrices, matrices])), contacts, links)
    spin = None
    if pairs.law.spins:
        spin = _pair_torques(pairs, linear.law.forces, dt, links)
        start_wrench = start_wrench + _couples_on_links(spin.step_torques, -spin.step_torques, contacts, links)
        couples = couple_inertias(spin.matrices)
        inertia = inertia + dt * _link_sums(jnp.concatenate([couples, couples]), contacts, links)

    def coupling(every: jax.Array) -> jax.Array:
        # The wrenches on each side of the contacts from the other side's velocity change ``every (L, 6)``.
        dv_a = _material_velocity(every, contacts.link_a, arms_a)
        dv_b = _material_velocity(every, contacts.link_b, arms_b)
        wrench = _on_links(linear.resist(dv_b), linear.resist(dv_a), contacts, arms_a, arms_b, links)
        if spin is None:
            return wrench
        return wrench + _couples_on_links(spin.resist(every[contacts.link_b, 3:]), spin.resist(every[contacts.link_a, 3:]), contacts, links)
    colours = COLOURS if any(np.any(g.colour > 0) for g in groups) else 1

    def solved_members(tree: tuple, wrench: jax.Array, inertia: jax.Array) -> Accelerations:
        # The implicit solve of the members of ``tree = (model, model_params, state, prepared)``,
        # stacked, with the known link wrenches and added inertias ``(G, N, ...)``.
        return _each(world, lambda model, model_params, state, p, w, i: accelerations(
            model, state, params, model_params, p, True, w, i))(*tree, wrench, inertia)

    members = [(b.model, model_params[k], states[k], prepared[k]) for k, b in enumerate(batches)]
    # Models welded to the world without joints (the terrain's boxes, :mod:`.scenery`) never move.
    immobile = [not b.model.floating_base and b.model.dofs == 0 for b in batches]
    inertias = [from_global(g, "links", inertia) for g in groups]
    # A padded batch's members of each colour ``(colours, W)``, out of range where a colour has
    # fewer than ``W``, and what their solve takes, gathered once before the sweeps
    # ``(colours, W, ...)``: a turn slices its rows, instead of gathering every field of them.
    turns = [_turns(g, colours) if g.padded else None for g in groups]
    taken = [None if rows is None else jax.tree.map(lambda x: x[np.minimum(rows, len(g.members) - 1)], (tree, inertia_k, g.links))
             for g, rows, tree, inertia_k in zip(groups, turns, members, inertias)]

    def turn(colour: int, current: list[Accelerations]) -> list[Accelerations]:
        # Block Gauss-Seidel: each batch is solved with the latest velocity change of the links it
        # touches, its own links' terms being in its added inertias; a batch of several models
        # keeps the solution of its members of this turn's colour (a padded batch solves only
        # those, every kind of them at once). Per batch, the loop carries the solve of each
        # member ``(G, ...)`` (its accelerations, forces and velocity change): the rest of the
        # step follows once, after the loop.
        current = list(current)
        for k, group in enumerate(groups):
            if immobile[k]:  # at rest whatever the contacts: the sweeps' start
                continue
            known = start_wrench + coupling(to_global(groups, "links", [c.G_dv for c in current]))
            if group.padded:  # only the members of this turn
                tree, inertia_t, links_t = jax.tree.map(lambda x: x[colour], taken[k])
                # Each member's row of the turn, gathered (a scatter is a loop on XLA's CPU backend).
                place = _places(turns[k], len(group.members))[colour]
                mine = place < turns[k].shape[1]
                fresh = solved_members(tree, known[links_t], inertia_t)
                current[k] = jax.tree.map(lambda old, new: jnp.where(np.reshape(mine, mine.shape + (1,) * (old.ndim - 1)),
                                                                     new[np.minimum(place, new.shape[0] - 1)], old), current[k], fresh)
                continue
            fresh = solved_members(members[k], from_global(group, "links", known), inertias[k])
            if len(group.members) > 1:
                mine = np.asarray(group.colour) == colour
                fresh = jax.tree.map(lambda new, old: jnp.where(jnp.reshape(mine, mine.shape + (1,) * (new.ndim - 1)), new, old),
                                     fresh, current[k])
            current[k] = fresh
        return current

    def sweep(_: jax.Array, current: list[Accelerations]) -> list[Accelerations]:
        # The turns of one sweep, a colour each, unrolled: what a colour's solve takes that the
        # turns do not change (its members' factors) is then invariant in the loop, and XLA
        # computes it once, before the sweeps.
        for colour in range(colours):
            current = turn(colour, current)
        return current

    # The first sweep takes the other sides at rest; one sweep in the graph, whatever their number.
    blank = [at_rest(b.model, states[k], prepared[k]) for k, b in enumerate(batches)]
    carried = jax.lax.fori_loop(0, _sweeps(world), sweep, blank)
    if world.closures is not None:
        # One more block: the closures' rows, the contacts' coupling held at the last sweep's.
        held = coupling(to_global(groups, "links", [c.G_dv for c in carried]))
        solved = _closed(world, batches, states, prepared,
                         lambda w: [solved_batch(k, start_wrench + held + w, inertia, True) for k in range(len(batches))])
    else:
        solved = [_each(world, lambda model, state, p, a: finish(model, state, params, p, True, a))(
            b.model, states[k], prepared[k], carried[k]) for k, b in enumerate(batches)]
    G_dv = to_global(groups, "links", [s.G_dv for s in solved])
    dv = _material_velocity(G_dv, contacts.link_a, arms_a) - _material_velocity(G_dv, contacts.link_b, arms_b)
    forces = jnp.where(contacts.active[:, None], linear.step_forces - linear.resist(dv), 0.0)
    applied = _on_links(forces, -forces, contacts, arms_a, arms_b, links)
    torques = None
    if spin is not None:
        torques = jnp.where(contacts.active[:, None], spin.step_torques - spin.resist(G_dv[contacts.link_a, 3:] - G_dv[contacts.link_b, 3:]), 0.0)
        applied = applied + _couples_on_links(torques, -torques, contacts, links)
    solved = [s._replace(G_f_applied=s.G_f_applied + from_global(g, "links", applied)) for s, g in zip(solved, groups)]
    after = implicit_deformation(pairs.law, linear, contacts.normal, pairs.deformation, pairs.velocity + dv, dt)
    load, walls = jnp.zeros_like(pair_load), jnp.zeros_like(wall_load)
    if loaded:
        down = params.gravity.astype(dtype)
        load = _pressed(world.collision, forces, contacts, down, world.inverse_weight.astype(dtype), pairs.origins, pair_load)
        walls = _walled(world.collision, forces, contacts, _wall_normals(world, batches, prepared, down))
    if pairs.rows is not None:
        # Every slot of the query: the touching ones from the budget's rows, the others relaxed.
        contacts, every_law, every_deformation = pairs.every
        after = relaxed_deformation(every_law, every_deformation, dt).at[pairs.rows].set(after, mode="drop")
        forces, torques = (None if x is None else jnp.zeros((contacts.depth.shape[0], 3), dtype).at[pairs.rows].set(x, mode="drop")
                           for x in (forces, torques))
    reported = PairContacts(contacts, forces, pairs.overflow, torques, pairs.dropped)
    return solved, prepared, reported, user, stored.at[contacts.slot].set(after, mode="drop"), load, walls


def _sweeps(world: WorldModel) -> int:
    """The Gauss-Seidel sweeps of ``world``'s contacts between links: one where each candidate
    pair has a link welded to the world (a robot on the terrain's boxes or on static models): no
    contact couples two moving links, so the first sweep's solves are the coupled solution;
    otherwise ``world.pair_sweeps``."""
    groups = () if world.collision is None else world.collision.groups
    return 1 if all(g.static[0] == g.candidates for g in groups) else world.pair_sweeps


def _pair_torques(pairs: _Pairs, law_forces: jax.Array, dt: jax.Array, links: int) -> ImplicitTorques:
    """The torsional and rolling friction (:mod:`.contact_torques`) of the contacts between links
    ``pairs``, with the forces of their law at the step's start ``law_forces (C, 3)`` [N] on a."""
    contacts = pairs.contacts
    normal_force = jnp.where(contacts.active, spatial.dot(law_forces, contacts.normal), 0.0)
    # The touching contacts of each link with other links, whichever side it is on.
    touching = jnp.where(normal_force > 0, 1.0, 0.0).astype(normal_force.dtype)
    per_link = _link_sums(jnp.concatenate([touching, touching]), contacts, links)
    counts = jnp.maximum(per_link[contacts.link_a], per_link[contacts.link_b])
    return implicit_torques(pairs.law.torsion, pairs.law.rolling, normal_force, contacts.normal, pairs.angular, pairs.inertia, dt,
                            PairSlots(contacts.link_a, links).link_totals, counts)


def _closed(world: WorldModel, batches: Sequence[_Batch], states: Sequence[State], prepared: Sequence[Prepared],
            solved_with: Any) -> list[Solved]:
    """Per batch, the implicit step solved with the loop closures between models
    (:mod:`.world_closures`): ``solved_with(w)`` solves every batch with the known link wrenches
    ``w (L, 6)`` (global link order; world axes, about each model's ``G`` origin) added; the
    rows' forces follow from the derivative of their end velocity in the wrenches of unit row
    forces. The closures' wrenches join each batch's applied wrenches."""
    groups = [b.group for b in batches]
    dt = world.params.dt.astype(prepared[0].kin.G_H_L.dtype)
    origins = to_global(groups, "links", [jnp.broadcast_to(p.kin.origin[:, None], p.kin.G_H_L.shape[:2] + (3,)) for p in prepared])
    poses = world_poses(to_global(groups, "links", [p.kin.G_H_L for p in prepared]), origins)
    velocities = about_world_origin(to_global(groups, "links", [p.kin.G_v for p in prepared]), origins)
    biases = about_world_origin(to_global(groups, "links", [
        _each(world, lambda model, kin: path_bias_accelerations(model, kin, True))(b.model, p.kin) for b, p in zip(batches, prepared)
    ]), origins)
    # The base's inertial velocity change beside h a (mixed representation), on every link of its model.
    drift = about_world_origin(to_global(groups, "links", [
        jnp.broadcast_to(_each(world, base_velocity_offset)(b.model, s, p.kin)[:, None], p.kin.G_v.shape)
        for b, s, p in zip(batches, states, prepared)
    ]), origins)
    rows = closure_rows(world.closures, poses, velocities, biases)

    def end(forces: jax.Array) -> jax.Array:
        solved = solved_with(row_wrenches(world.closures, rows, forces, origins))
        G_dv = to_global(groups, "links", [s.G_dv for s in solved])
        return end_velocity(world.closures, rows, velocities + about_world_origin(G_dv, origins) + dt * drift)

    zero = jnp.zeros_like(rows.violation)
    # The end velocity without the rows' forces and its derivative in them, from one linearisation.
    start, along = jax.linearize(end, zero)
    effective = jax.vmap(along, out_axes=1)(jnp.eye(zero.shape[0], dtype=zero.dtype)) / dt
    forces = closure_forces(world.closures, rows, effective, start, dt)
    wrench = row_wrenches(world.closures, rows, forces, origins)
    return [s._replace(G_f_applied=s.G_f_applied + from_global(g, "links", wrench)) for s, g in zip(solved_with(wrench), groups)]


def _turns(group: ModelGroup, colours: int) -> np.ndarray:
    """``(colours, W)``: the members of ``group`` of each colour, the turns of a sweep, padded
    with ``G`` (out of range) to the largest."""
    rows = [np.flatnonzero(group.colour == c) for c in range(colours)]
    width = max(len(r) for r in rows)
    return np.stack([np.pad(r, (0, width - len(r)), constant_values=len(group.members)) for r in rows]).astype(np.int32)


def _places(turns: np.ndarray, count: int) -> np.ndarray:
    """``(colours, G)``: each member's place among the members of each colour of the ``turns
    (colours, W)`` of a group of ``G = count`` members (:func:`_turns`), ``W`` where not of that colour."""
    width = turns.shape[1]
    places = np.full((turns.shape[0], count), width, dtype=np.int32)
    for colour, row in enumerate(turns):
        real = row < count
        places[colour, row[real]] = np.flatnonzero(real)
    return places


def _each(world: WorldModel, f):
    """``f`` over the leading (member) axis of its arguments' arrays: ``jax.vmap``, except in the
    world of one model, whose step takes it unbatched (XLA compiles a batch of one as a batch, a
    slower and longer program than the unbatched one)."""
    if len(world.models) > 1:
        return jax.vmap(f)

    def alone(*args):
        return jax.tree.map(lambda y: jnp.expand_dims(y, 0), f(*jax.tree.map(lambda x: x[0], args)))

    return alone


def _report(model: Model, state: State, world: WorldParams, prepared: Prepared, solved: Solved,
            commanded: jax.Array, user_wrenches: jax.Array) -> ModelReport:
    kin = prepared.kin
    dtype = kin.G_H_L.dtype
    out = solved.outputs
    G_a_B = kin_module.base_acceleration_inertial(model, state, kin, out.base_acceleration, state.velocity_representation)
    W_a = kin_module.link_accelerations_inertial(model, kin, G_a_B, out.joint_accelerations)
    mixed = rep.acceleration_from_inertial(W_a, kin.G_H_L, kin.G_v, "mixed")
    W_a_gravity = jnp.concatenate([world.gravity.astype(dtype), jnp.zeros(3, dtype)])
    momentum = spatial.matvec(kin.G_M, kin.G_v)
    W_f = spatial.matvec(kin.G_M, W_a - W_a_gravity) + spatial.cross_force(kin.G_v, momentum)
    W_F = kin_module.subtree_sum(model, W_f - solved.G_f_applied)
    children = np.asarray(model.joint_link, dtype=int)
    joint_wrenches = rep.force_from_inertial(W_F[children], kin.G_H_L[children], "body")
    R_T = jnp.swapaxes(kin.G_H_L[:, :3, :3], -1, -2)
    body = jnp.concatenate([spatial.matvec(R_T, mixed[:, :3]), spatial.matvec(R_T, mixed[:, 3:])], axis=-1)
    origins = kin.G_H_L[:, :3, 3] + kin.origin
    return ModelReport(commanded, user_wrenches, mixed, body, origins, joint_wrenches)


def _user_wrenches(
    model: Model, state: State, inputs: ModelInputs, steps: jax.Array, W_R_L: jax.Array | None = None
) -> jax.Array:
    """``(N, 6)``: the user's link wrenches (those about the centres of mass moved to the link
    origins) and the timed wrenches due at physics step ``steps`` (world axes, about each link
    origin); the link orientations ``W_R_L (N, 3, 3)`` default to those of ``state``."""
    dtype = state.joint_positions.dtype
    total = jnp.zeros((model.number_of_links, 6), dtype)
    given = {}
    for name in ("link_wrenches", "com_wrenches"):
        if getattr(inputs, name) is not None:
            given[name] = jnp.asarray(getattr(inputs, name), dtype)
            if given[name].shape != total.shape:
                raise ValueError(f"{name} must have shape {total.shape} for model {model.name!r}, got {tuple(given[name].shape)}")
    if W_R_L is None and (inputs.timed_wrenches is not None or "com_wrenches" in given):
        W_R_L = kin_module.forward_kinematics(model, state)[:, :3, :3]
    if "link_wrenches" in given:
        total = total + given["link_wrenches"]
    if "com_wrenches" in given:
        total = total + wrenches.about_frame_origin(given["com_wrenches"], spatial.rotate(W_R_L, model.link_com.astype(dtype)))
    if inputs.timed_wrenches is not None:
        total = total + wrenches.active_link_wrenches(model.number_of_links, inputs.timed_wrenches, steps, W_R_L)
    return total


def _inputs(world: WorldModel, inputs: Sequence[ModelInputs | None] | None) -> tuple[ModelInputs, ...]:
    if inputs is None:
        return tuple(ModelInputs() for _ in world.models)
    inputs = tuple(ModelInputs() if i is None else i for i in inputs)
    if world.scenery and len(inputs) == len(world.models) - world.scenery:
        inputs += tuple(ModelInputs() for _ in range(world.scenery))
    if len(inputs) != len(world.models):
        raise ValueError(f"inputs must have one entry per model ({_model_count(world)}), got {len(inputs)}")
    return inputs


def _model_count(world: WorldModel) -> str:
    """How many models ``world`` has, and how many are the user's where it made one of the
    terrain's boxes (:attr:`WorldModel.scenery`)."""
    count = len(world.models)
    return f"{count - world.scenery}, or {count} with the terrain's boxes" if world.scenery else str(count)


def _grouped(
    world: WorldModel, state: WorldState | PackedWorldState, inputs: Sequence[ModelInputs | None] | None
) -> tuple[list[_Batch], PackedWorldState]:
    """The batches of ``world`` under ``inputs`` and ``state`` packed by batch (as given, if packed)."""
    params = world.params
    if params.integrator not in INTEGRATORS:
        raise ValueError(f"params.integrator must be one of {INTEGRATORS}, not {params.integrator!r}")
    inputs = _inputs(world, inputs)
    if isinstance(state, PackedWorldState):
        groups = groups_of(world.models, world.model_params, state.members)
        packed = state
    else:
        per_model = (world.model_params, state.states, state.controllers, state.histories, inputs)
        groups = group_models(world.models, per_model, world.exact_velocity)
        packed = PackedWorldState(tuple(g.members for g in groups), *(
            tuple(stack(group, values) for group in groups) for values in (state.states, state.controllers, state.histories)),
            state.steps, state.pair_deformation, state.pair_load, state.wall_load)
    models = [with_mocap_poses(model, i.mocap_positions, i.mocap_quaternions) for model, i in zip(world.models, inputs)]
    try:
        batches = [
            _Batch(group, stack_models(group, models), stack(group, world.model_params), stack(group, inputs),
                   world.exact_velocity[group.members[0]])
            for group in groups
        ]
    except ValueError as error:
        raise ValueError(f"the inputs of the models of a packed group differ in structure; pack the state under "
                         f"these inputs (WorldModel.pack): {error}") from None
    return batches, packed


def _ungrouped(world: WorldModel, packed: PackedWorldState) -> WorldState:
    """The :class:`WorldState` of ``packed``, per model."""
    groups, count = groups_of(world.models, world.model_params, packed.members), len(world.models)
    states, controllers, histories = (tuple(unstack(groups, values, count)) for values in (packed.states, packed.controllers, packed.histories))
    return WorldState(states, controllers, histories, packed.steps, packed.pair_deformation, packed.pair_load, packed.wall_load)


def _finished(world: WorldModel, state: WorldState | PackedWorldState, batches: Sequence[_Batch], following: PackedWorldState,
              outputs: Sequence[StepOutput], reports: Sequence[ModelReport], pairs: PairContacts | None, finite: jax.Array,
              axis: int) -> tuple[WorldState | PackedWorldState, WorldOutputs]:
    """The next state in the form ``state`` came in and the :class:`WorldOutputs` of the outputs and
    reports per batch (stacked over its models along ``axis``): per model, or per batch if packed."""
    if isinstance(state, PackedWorldState):
        return following, WorldOutputs(tuple(outputs), tuple(reports), pairs, finite)
    groups, count = [b.group for b in batches], len(world.models)
    return _ungrouped(world, following), WorldOutputs(
        tuple(unstack(groups, outputs, count, axis)), tuple(unstack(groups, reports, count, axis)), pairs, finite)


def _advance(world: WorldModel, batches: Sequence[_Batch], carried: PackedWorldState, reports: bool = True):
    """One step of the batched world from ``carried``: the next :class:`PackedWorldState`, the
    :class:`.step.StepOutput` and :class:`ModelReport` of every batch (None without ``reports``),
    the contacts between links and whether every next state is finite."""
    params = world.params
    implicit = params.integrator == "implicit_euler"
    steps = carried.steps
    commanded, controllers = [], []
    for b, current, controller in zip(batches, carried.states, carried.controllers):
        commands, controller = _each(world, lambda model, current, controller, i: _commands(
            model, params, current, controller, i, steps, implicit))(b.model, current, controller, b.inputs)
        if b.exact:
            if b.inputs.table is None:
                raise ValueError("exact velocity tracking needs the model's control table")

            def exact(model, model_params, current, i, commands):
                acting = _user_wrenches(model, current, i, steps)
                return _exact_velocity(model, current, params, model_params, i.table, commands, acting)

            commands = commands._replace(torques=_each(world, exact)(b.model, b.params, current, b.inputs, commands))
        commanded.append(commands)
        controllers.append(controller)
    if params.integrator == "rk4":
        next_states, solved, prepared, pairs, user, deformation, load, walls = _rk4(
            world, batches, carried.states, commanded, steps, carried.pair_deformation, carried.pair_load, carried.wall_load)
    else:
        solved, prepared, pairs, user, deformation, load, walls = _world_rates(
            world, batches, carried.states, commanded, steps, implicit, carried.pair_deformation, carried.pair_load, carried.wall_load
        )
        next_states = [_each(world, lambda model, s, r: euler_advance(model, s, r, params.dt))(b.model, s, k.rates)
                       for b, s, k in zip(batches, carried.states, solved)]

    def finish(model, current, following, commands, controller, history, p, k, acting):
        dt = params.dt.astype(commands.torques.dtype)
        tau, controller = commands.settle(controller, current.joint_velocities, following.joint_velocities, dt)
        history = history.at[steps % history.shape[0]].set(tau) if history.shape[0] else history
        report = _report(model, current, params, p, k, tau, acting) if reports else None
        return k.outputs._replace(finite=is_finite(following)), report, controller, history

    finished = [_each(world, finish)(b.model, s, n, c, ctrl, h, p, k, u) for b, s, n, c, ctrl, h, p, k, u in zip(
        batches, carried.states, next_states, commanded, controllers, carried.histories, prepared, solved, user)]
    outputs, reports, controllers, histories = ([f[i] for f in finished] for i in range(4))
    finite = jnp.all(jnp.concatenate([o.finite for o in outputs])) if outputs else jnp.asarray(True)
    following = carried.replace(states=tuple(next_states), controllers=tuple(controllers), histories=tuple(histories),
                                steps=steps + 1, pair_deformation=deformation, pair_load=load, wall_load=walls)
    return following, outputs, reports, pairs, finite


def world_step(
    world: WorldModel, state: WorldState | PackedWorldState, inputs: Sequence[ModelInputs | None] | None = None, *, reports: bool = True
) -> tuple[WorldState | PackedWorldState, WorldOutputs]:
    """Advance every model of ``world`` by ``world.params.dt`` from ``state`` under ``inputs``
    (one :class:`ModelInputs` or None per model), with the step of :func:`.step.step` per model
    (``world.params.integrator``) and the contacts between links (see the module docstring).
    Models of one structure are stepped together (:mod:`.groups`).

    Returns the next state, in the form of ``state``, and the :class:`WorldOutputs` of the step
    (from a :class:`PackedWorldState`, their ``models`` and ``reports`` are per group, stacked).
    ``reports=False``: every :class:`ModelReport` is None (a caller that reads none, as
    :func:`.step.step`, traces a smaller step).
    """
    batches, carried = _grouped(world, state, inputs)
    following, outputs, reported, pairs, finite = _advance(world, batches, carried, reports)
    return _finished(world, state, batches, following, outputs, reported, pairs, finite, 0)


def _rk4(world, batches, states, commanded, steps, pair_deformation, pair_load, wall_load):
    """Classic Runge-Kutta on the explicit rates; the contacts between links keep their
    tangential deformation of the step's start in every stage and advance it by the first. The
    three later stages differ only in the fraction of the step they move by: one ``lax.scan``
    over those fractions traces and compiles one of them."""
    dt = world.params.dt

    def rates(at):
        return _world_rates(world, batches, at, commanded, steps, False, pair_deformation, pair_load, wall_load)

    def moved(by, fraction):
        return [_each(world, lambda s, r: advance(s, r, fraction * dt))(s, r) for s, r in zip(states, by)]

    def stage(previous, fraction):
        following = [k.rates for k in rates(moved(previous, fraction))[0]]
        return following, following

    k1, prepared, pairs, user, deformation, load, walls = rates(states)
    _, later = jax.lax.scan(stage, [k.rates for k in k1], jnp.asarray([0.5, 0.5, 1.0], jnp.result_type(dt)))
    next_states, solved = [], []
    for b, state, r1, r in zip(batches, states, k1, later):
        combined = jax.tree.map(lambda a, k: (a + 2 * k[0] + 2 * k[1] + k[2]) / 6, r1.rates, r)

        next_states.append(_each(world, lambda model, state, rates: normalized(model, advance(state, rates, dt)))(b.model, state, combined))
        outputs = r1.outputs._replace(base_acceleration=combined.base_velocity, joint_accelerations=combined.joint_velocities)
        solved.append(r1._replace(outputs=outputs))
    return next_states, solved, prepared, pairs, user, deformation, load, walls


def world_rollout(
    world: WorldModel, state: WorldState | PackedWorldState, inputs: Sequence[ModelInputs | None] | None, steps: int, *,
    checkpoint: bool = False,
) -> tuple[WorldState | PackedWorldState, WorldOutputs]:
    """``steps`` world steps under constant ``inputs`` in one ``lax.scan``; returns the final
    state (in the form of ``state``) and the stacked outputs (``(T, ...)``; from a
    :class:`PackedWorldState`, ``models`` and ``reports`` per group, ``(T, G, ...)``).
    ``checkpoint=True`` rematerialises each step in the backward pass. The scan carries the
    models batched by structure (:mod:`.groups`), so that its body does not grow with the
    number of identical models; from a packed state, neither does the whole program."""
    batches, carried = _grouped(world, state, inputs)

    def one_step(current, _):
        following, outputs, reports, pairs, finite = _advance(world, batches, current)
        return following, (outputs, reports, pairs, finite)

    body = jax.checkpoint(one_step) if checkpoint else one_step
    final, (outputs, reports, pairs, finite) = jax.lax.scan(body, carried, None, length=steps)
    return _finished(world, state, batches, final, outputs, reports, pairs, finite, 1)
