"""The jitted functions behind the object API: a world's run and a model's observation.

A run is :func:`jaxsim_like.simulation.world.world_step` ``steps`` times: the functional world
(its models, their controllers, the timed wrenches, the contacts between models) does the
physics; this module only packs what the API keeps between runs. :func:`run_world` is compiled
once per world structure (the :class:`~jaxsim_like.simulation.world.WorldModel`'s static fields,
the packed layouts and the sticky :class:`Features`); targets, gains, gravity, the terrain, the
controller period and the state are traced. :func:`observe` reads what the getters need (link
poses and velocities of the current state, the last step's fields, what each contact point
touches).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..dynamics import kinematics as kin_module
from ..dynamics import representations as rep
from ..dynamics.model import Model
from ..dynamics.state import State
from ..simulation import control, wrenches
from ..simulation.world import ModelInputs as WorldModelInputs
from ..simulation.world import WorldModel, WorldState, world_step

# A ground plane this far below the origin [m] never touches anything: the world has no ground.
NO_GROUND_OFFSET = -1.0e6


class Features(NamedTuple):
    """Static switches of a model's step: exact velocity tracking (velocity_follower_dart joints),
    user wrenches (the wrench slots are read once a wrench was applied) and the history of
    commanded torques (recorded once a history was enabled). Once on, a switch stays on (one
    recompilation)."""

    exact_velocity: bool = False
    wrenches: bool = False
    history: bool = False


# Wrench slots are :mod:`jaxsim_like.simulation.wrenches` rows whose last column counts the
# physics steps left from the start of the run (the run makes it absolute).
POINT, LINK, STEPS = wrenches.POINT, wrenches.LINK, wrenches.UNTIL
WRENCH_COLUMNS = wrenches.COLUMNS
# Columns of the last step's per-point outputs: position (3), normal (3), penetration, force (3),
# in contact (1.0 or 0.0).
POSITION, NORMAL, PENETRATION, POINT_FORCE, IN_CONTACT = slice(0, 3), slice(3, 6), 6, slice(7, 10), 10
POINT_COLUMNS = 11
# Rows of the last step's per-joint outputs: commanded torque, acceleration, applied torque.
COMMAND, ACCELERATION, APPLIED = 0, 1, 2
# Columns of the last step's per-link outputs: mixed acceleration (6), origin at the start of
# the step (3).
MIXED, ORIGIN = slice(0, 6), slice(6, 9)
LINK_COLUMNS = 9
# Columns of the contacts between links: position (3), normal from b towards a (3), depth, force
# on a (3), global links a and b, active (1.0 or 0.0).
PAIR_POSITION, PAIR_NORMAL, PAIR_DEPTH, PAIR_FORCE, LINK_A, LINK_B, PAIR_ACTIVE = (
    slice(0, 3), slice(3, 6), 6, slice(7, 10), 10, 11, 12,
)
PAIR_COLUMNS = 13


class ModelInputs(NamedTuple):
    """What the API writes between runs: the control ``table (n, COLUMNS)``, the controller
    ``period`` [s] and ``K`` wrench slots ``(K, WRENCH_COLUMNS)``."""

    table: jax.Array
    period: jax.Array
    wrenches: jax.Array


class LastStep(NamedTuple):
    """The last physics step, packed: per collidable point ``points (P, POINT_COLUMNS)``, per joint
    ``joints (3, n)`` (commanded torque, acceleration, applied torque) and the wrench it
    transmitted, ``joint_wrenches (n, 6)`` (body frame of the child, about its origin), per link
    ``links (N, LINK_COLUMNS)`` (see the column constants)."""

    points: jax.Array
    joints: jax.Array
    joint_wrenches: jax.Array
    links: jax.Array


class ModelSim(NamedTuple):
    """What evolves in a run: the state, the controllers packed ``(5, n)`` (the fields of
    :class:`.control.ControllerState`), the ring buffer of commanded torques ``history (H, n)``
    (row ``s % H`` holds physics step ``s``), the last step and the number of physics steps of
    the world so far, ``step`` (a float: the time is ``step * dt``). Between runs it is kept as
    one flat array (:func:`pack`, :func:`unpack`): each array a jitted call takes or returns has
    a fixed cost, so the run takes and returns one per model."""

    state: State
    controller: jax.Array
    history: jax.Array
    last: LastStep
    step: jax.Array


class Observation(NamedTuple):
    """Per link ``N``: ``W_H_L (N, 4, 4)``, mixed and body velocities ``(N, 6)``; of the last step,
    at the state it started from: the mixed accelerations ``(N, 6)`` (the derivative of the mixed
    velocity: ``[d^2 p_L/dt^2; dw/dt]``, world axes), the same in the axes of the link as it is
    now, after the step ``(N, 6)`` (ScenarIO's body accelerations, ``W_R_L^T`` of the mixed ones
    with the ``W_R_L`` that the pose getters read, as Gazebo expresses them) and the link origins
    ``step_origins (N, 3)``; per joint: the wrench ``(n, 6)`` the joint transmitted to its child
    link (body frame of the child, about its origin)."""

    W_H_L: jax.Array
    mixed_velocity: jax.Array
    body_velocity: jax.Array
    mixed_acceleration: jax.Array
    body_acceleration: jax.Array
    step_origins: jax.Array
    joint_wrenches: jax.Array


def pack_controller(state: control.ControllerState) -> jax.Array:
    return jnp.stack([state.integral, state.previous_error, state.command, state.has_previous.astype(state.integral.dtype), state.last_update])


def unpack_controller(packed: jax.Array) -> control.ControllerState:
    return control.ControllerState(packed[0], packed[1], packed[2], packed[3] > 0.5, packed[4])


class Layout(NamedTuple):
    """The sizes of a model's packed :class:`ModelSim`: DoFs ``n``, collidable points ``P``, links
    ``N``, history rows ``H`` and joint positions ``nq`` (``n`` plus one per ball joint; static:
    a layout is part of the compiled run's key)."""

    dofs: int
    points: int
    links: int
    history: int
    positions: int

    @staticmethod
    def of(model: Model, history: int) -> Layout:
        return Layout(model.dofs, len(model.point_link), model.number_of_links, history, model.joint_position_size)

    def fields(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The packed fields, in order, and their shapes."""
        n, P, N, H, nq = self
        return (
            ("base_position", (3,)), ("base_quaternion", (4,)), ("base_velocity", (6,)), ("joint_positions", (nq,)),
            ("joint_velocities", (n,)), ("contact_deformation", (P, 3)), ("controller", (5, n)), ("history", (H, n)),
            ("points", (P, POINT_COLUMNS)), ("joints", (3, n)), ("joint_wrenches", (n, 6)), ("links", (N, LINK_COLUMNS)),
            ("step", ()),
        )


def pack(sim: ModelSim, xp=jnp) -> jax.Array:
    """``sim`` as one flat array, in the order of :meth:`Layout.fields` (``xp``: jax.numpy or numpy)."""
    state, last = sim.state, sim.last
    parts = (
        state.base_position, state.base_quaternion, state.base_velocity, state.joint_positions, state.joint_velocities,
        state.contact_deformation, sim.controller, sim.history, last.points, last.joints, last.joint_wrenches, last.links,
        sim.step,
    )
    return xp.concatenate([xp.reshape(part, -1) for part in parts])


@functools.lru_cache(maxsize=256)
def offsets(layout: Layout) -> dict[str, tuple[int, int, tuple[int, ...]]]:
    """``{field: (start, stop, shape)}`` of a packed :class:`ModelSim`."""
    result, start = {}, 0
    for name, shape in layout.fields():
        result[name] = (start, start + math.prod(shape), shape)
        start += math.prod(shape)
    return result


def unpack(packed: jax.Array, layout: Layout) -> ModelSim:
    """The :class:`ModelSim` of a packed one (views of ``packed`` when it is a numpy array)."""
    values = {name: packed[start:stop].reshape(shape) for name, (start, stop, shape) in offsets(layout).items()}
    state = State(*(values[name] for name in ("base_position", "base_quaternion", "base_velocity", "joint_positions",
                                                "joint_velocities", "contact_deformation")))
    last = LastStep(values["points"], values["joints"], values["joint_wrenches"], values["links"])
    return ModelSim(state, values["controller"], values["history"], last, values["step"])


def initial_sim(model: Model, state: State, history_size: int, step: int) -> ModelSim:
    """The :class:`ModelSim` of a model just inserted at ``state``, after ``step`` physics steps of its world."""
    dtype = state.joint_positions.dtype
    n = model.dofs
    links = jnp.zeros((model.number_of_links, LINK_COLUMNS), dtype)
    links = links.at[:, ORIGIN].set(kin_module.forward_kinematics(model, state)[:, :3, 3])
    last = LastStep(
        points=jnp.zeros((len(model.point_link), POINT_COLUMNS), dtype),
        joints=jnp.zeros((3, n), dtype),
        joint_wrenches=jnp.zeros((n, 6), dtype),
        links=links,
    )
    controller = pack_controller(control.ControllerState.zeros(n, dtype))
    return ModelSim(state, controller, jnp.zeros((history_size, n), dtype), last, jnp.asarray(step, dtype))


@functools.partial(jax.jit, static_argnames="history_size")
def initial_packed(model: Model, history_size: int, step: int) -> jax.Array:
    """:func:`pack` of the :func:`initial_sim` at ``State.build(model)``, as one program (run op by
    op, each of its operations would compile on its own for every new model)."""
    return pack(initial_sim(model, State.build(model), history_size, step))


def _last_step(out, report) -> LastStep:
    """The :class:`LastStep` of a model's step outputs and report."""
    dtype = report.commanded.dtype
    points = jnp.concatenate(
        [
            out.contact_positions, out.contact_normals, out.penetration[:, None], out.contact_forces,
            out.in_contact[:, None].astype(dtype),
        ],
        axis=1,
    )
    links = jnp.concatenate([report.link_accelerations, report.link_origins], axis=1)
    joints = jnp.stack([report.commanded, out.joint_accelerations, out.joint_torques])
    return LastStep(points, joints, report.joint_wrenches, links)


def _pack_pairs(pairs, dtype) -> jax.Array:
    if pairs is None:
        return jnp.zeros((0, PAIR_COLUMNS), dtype)
    c = pairs.contacts
    return jnp.concatenate(
        [
            c.position, c.normal, c.depth[:, None], pairs.forces, c.link_a[:, None].astype(dtype),
            c.link_b[:, None].astype(dtype), c.active[:, None].astype(dtype),
        ],
        axis=1,
    )


def _run_world(
    world: WorldModel,
    inputs: tuple[ModelInputs, ...],
    sims: tuple[jax.Array, ...],
    pair_deformation: jax.Array,
    pair_load: jax.Array,
    wall_load: jax.Array,
    steps: int,
    features: tuple[Features, ...],
    layouts: tuple[Layout, ...],
) -> tuple[tuple[jax.Array, ...], jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
    sims = tuple(unpack(s, layout) for s, layout in zip(sims, layouts))
    dtype = sims[0].step.dtype
    controllers = tuple(
        control.reset(unpack_controller(s.controller), i.table[:, control.RESET] > 0) for s, i in zip(sims, inputs)
    )
    histories = tuple(s.history if f.history else s.history[:0] for s, f in zip(sims, features))
    # The model of the static models' boxes (``world.scenery``), welded: never moved, never packed.
    walls = world.models[len(sims):]
    start = sims[0].step
    state = WorldState(tuple(s.state for s in sims) + tuple(State.build(m) for m in walls),
                       controllers + tuple(control.ControllerState.zeros(0, dtype) for _ in walls),
                       histories + tuple(jnp.zeros((0, 0), dtype) for _ in walls), start.astype(jnp.int32), pair_deformation, pair_load,
                       wall_load)
    model_inputs = tuple(
        WorldModelInputs(
            table=i.table,
            period=i.period,
            timed_wrenches=i.wrenches.at[:, STEPS].add(start) if f.wrenches else None,
        )
        for i, f in zip(inputs, features)
    )

    def body(_, carry):
        current, most, _, _ = carry
        following, outputs = world_step(world, current, model_inputs)
        lasts = tuple(_last_step(o, r) for o, r in zip(outputs.models, outputs.reports))
        return following, _most_overflow(most, outputs.pairs), lasts, _pack_pairs(outputs.pairs, dtype)

    # One world step in the program, traced once: the loop carries what the run returns of its
    # last step, whose shapes that trace gives, and the loop's body reuses the trace (a step
    # after a loop of ``steps - 1`` would trace, lower and compile the step twice).
    carry = (state, jnp.zeros(0 if world.collision is None else len(world.collision.groups) + 1, jnp.int32), None, None)
    if steps > 1:
        first = jax.jit(lambda started: body(0, started))
        _, _, lasts, pairs = first.trace(carry).out_info
        blank = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), (lasts, pairs))
        carry = jax.lax.fori_loop(0, steps, lambda _, c: first((*c[:2], None, None)), (*carry[:2], *blank))
    else:
        carry = body(0, carry)
    state, overflow, lasts, pairs = carry
    packed = []
    for m, (sim, f) in enumerate(zip(sims, features)):
        history = state.histories[m] if f.history else sim.history
        controller = pack_controller(state.controllers[m])
        packed.append(pack(ModelSim(state.states[m], controller, history, lasts[m], state.steps.astype(dtype))))
    return tuple(packed), pairs, state.pair_deformation, state.pair_load, state.wall_load, overflow


def _most_overflow(most: jax.Array, pairs) -> jax.Array:
    """The most overlapping candidate pairs per pair group that the budget could not hold, then
    the most touching slots that the touching budget could not hold ``(K + 1,)`` (int32):
    ``most`` so far, or the step's ``pairs.overflow`` and ``pairs.dropped`` where larger."""
    if pairs is None:
        return most
    dropped = jnp.zeros(1, jnp.int32) if pairs.dropped is None else jnp.reshape(pairs.dropped, (1,))
    return jnp.maximum(most, jnp.concatenate([pairs.overflow, dropped]))


run_world = jax.jit(_run_world, static_argnames=("steps", "features", "layouts"), donate_argnames=("sims",))
run_world.__doc__ = """Advance every dynamic model of ``world`` by ``steps`` physics steps (static: the simulator's
steps per run), after the PID resets requested in the control tables. ``sims`` are the models'
packed :class:`ModelSim` (:func:`pack`, with ``layouts``), which count the physics steps done
so far, ``pair_deformation``, the tangential deformation of the world's candidate contact
slots, and ``pair_load`` and ``wall_load``, the load its links pressed on each other with and
into the terrain across gravity in the last step (:class:`~jaxsim_like.simulation.world.WorldState`).
Returns the packed results, the contacts between links of the last step ``(C, PAIR_COLUMNS)``,
the next deformation and loads, and
the most overlapping candidate pairs per pair group of ``world.collision`` that its budget
could not hold in any step of the run, ``(K,)`` (int32; ``(0,)`` without a collision table). ``sims`` are donated: the run writes its results into their buffers instead
of allocating new ones, so the arrays passed in are invalid afterwards."""


def _observe(model: Model, packed: jax.Array, layout: Layout) -> Observation:
    sim = unpack(packed, layout)
    # Kinematics in the internal frame G (world axes, origin at the base: kin.origin).
    kin = kin_module.kinematics(model, sim.state)
    links = sim.last.links
    mixed = links[:, MIXED]
    L_R_W = jnp.swapaxes(kin.G_H_L[:, :3, :3], -1, -2)
    return Observation(
        W_H_L=kin.G_H_L.at[:, :3, 3].add(kin.origin),
        mixed_velocity=rep.velocity_from_inertial(kin.G_v, kin.G_H_L, "mixed"),
        body_velocity=rep.velocity_from_inertial(kin.G_v, kin.G_H_L, "body"),
        mixed_acceleration=mixed,
        body_acceleration=jnp.concatenate([jnp.einsum("nij,nj->ni", L_R_W, mixed[:, :3]), jnp.einsum("nij,nj->ni", L_R_W, mixed[:, 3:])], axis=1),
        step_origins=links[:, ORIGIN],
        joint_wrenches=sim.last.joint_wrenches,
    )


observe = jax.jit(_observe, static_argnames=("layout",))
observe.__doc__ = """The :class:`Observation` of a model's state after a run and of its last step."""
