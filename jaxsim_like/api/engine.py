"""The jitted functions behind the object API: a world's run and a model's observation.

A world is a tuple of per-model pytrees (models differ, so they are not stacked): one
:func:`run_world` call steps every dynamic model ``steps`` times with
:func:`jaxsim_like.simulation.step`, its controllers (:mod:`.control`) and the pending
wrenches. It is compiled once per world structure (the tuple of model topologies, the number
of wrench slots, the history size and the sticky :class:`Features`); targets, gains, gravity,
the controller period and the state are traced. :func:`observe` derives what the getters read
(link poses, velocities, accelerations, joint wrenches, what each contact point touches) from
a model's state and its last step.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import kinematics as kin_module
from ..dynamics import representations as rep
from ..dynamics import spatial
from ..dynamics.crba import mass_matrix
from ..dynamics.model import Model
from ..dynamics.state import State
from ..simulation import SimulationParams, Terrain, penetration, step
from . import control
from .types import JointControlMode

# A ground plane this far below the origin [m] never touches anything: the world has no ground.
NO_GROUND_OFFSET = -1.0e6


class Features(NamedTuple):
    """Static switches of a model's step: exact velocity tracking (velocity_follower_dart joints),
    user wrenches (the wrench slots are read once a wrench was applied), wrenches applied away
    from a link origin (their lever arms need the link orientations) and the history of
    commanded torques (recorded once a history was enabled). Once on, a switch stays on (one
    recompilation)."""

    exact_velocity: bool = False
    wrenches: bool = False
    offset_wrenches: bool = False
    history: bool = False


# Columns of a wrench slot: force (3) and torque (3) in world axes, application point (3) in the
# link frame, link index, physics steps left.
FORCE, TORQUE, POINT, LINK, STEPS = slice(0, 3), slice(3, 6), slice(6, 9), 9, 10
WRENCH_COLUMNS = 11
# Columns of the last step's per-point outputs: position (3), normal (3), penetration, force (3),
# in contact (1.0 or 0.0).
POSITION, NORMAL, PENETRATION, POINT_FORCE, IN_CONTACT = slice(0, 3), slice(3, 6), 6, slice(7, 10), 10
POINT_COLUMNS = 11
# Rows of the last step's per-joint outputs: commanded torque, acceleration, applied torque.
COMMAND, ACCELERATION, APPLIED = 0, 1, 2


class ModelInputs(NamedTuple):
    """What the API writes between runs: the control ``table (n, COLUMNS)``, the controller
    ``period`` [s] and ``K`` wrench slots ``(K, WRENCH_COLUMNS)``."""

    table: jax.Array
    period: jax.Array
    wrenches: jax.Array


class LastStep(NamedTuple):
    """The last physics step, packed: per collidable point ``points (P, POINT_COLUMNS)``, per joint
    ``joints (3, n)`` (commanded torque, acceleration, applied torque), the state the step started
    from and the base acceleration, ``start (19 + 2n,)`` (see :func:`pack_start`), and the user
    wrenches ``(N, 6)`` (world axes, about each link origin)."""

    points: jax.Array
    joints: jax.Array
    start: jax.Array
    link_wrenches: jax.Array


class ModelSim(NamedTuple):
    """What evolves in a run: the state, the controllers packed ``(5, n)`` (the fields of
    :class:`.control.ControllerState`), the ring buffer of commanded torques ``history (H, n)``
    (row ``s % H`` holds physics step ``s``), the last step and the number of physics steps of
    the world so far, ``step`` (a float: the time is ``step * dt``). Between runs it is kept as
    one flat array (:func:`pack`, :func:`unpack`): every array a jitted call takes costs about
    0.5 µs, every array it returns about 3 µs, so the run takes and returns one per model."""

    state: State
    controller: jax.Array
    history: jax.Array
    last: LastStep
    step: jax.Array


class Observation(NamedTuple):
    """Per link ``N``: ``W_H_L (N, 4, 4)``, mixed and body velocities ``(N, 6)``; of the last step,
    at the state it started from: the mixed accelerations ``(N, 6)`` (the derivative of the mixed
    velocity: ``[d^2 p_L/dt^2; dw/dt]``, world axes), the same in link axes ``(N, 6)``
    (ScenarIO's body accelerations, ``W_R_L^T`` of the mixed ones) and the link origins
    ``step_origins (N, 3)``; per joint: the wrench ``(n, 6)`` the joint transmitted to its child
    link (body frame of the child, about its origin); per contact point: what it touches,
    ``element (P,)`` (0 the ground, ``b + 1`` static box ``b``)."""

    W_H_L: jax.Array
    mixed_velocity: jax.Array
    body_velocity: jax.Array
    mixed_acceleration: jax.Array
    body_acceleration: jax.Array
    step_origins: jax.Array
    joint_wrenches: jax.Array
    element: jax.Array


def pack_controller(state: control.ControllerState) -> jax.Array:
    return jnp.stack([state.integral, state.previous_error, state.command, state.has_previous.astype(state.integral.dtype), state.last_update])


def unpack_controller(packed: jax.Array) -> control.ControllerState:
    return control.ControllerState(packed[0], packed[1], packed[2], packed[3] > 0.5, packed[4])


def pack_start(state: State, base_acceleration: jax.Array) -> jax.Array:
    """``(19 + 2n,)``: base position (3), quaternion (4), velocity (6), joint positions and
    velocities (n each) of ``state``, then the base acceleration (6) in its representation."""
    return jnp.concatenate(
        [
            state.base_position, state.base_quaternion, state.base_velocity, state.joint_positions,
            state.joint_velocities, base_acceleration,
        ]
    )


def unpack_start(state: State, packed: jax.Array) -> tuple[State, jax.Array]:
    """The state a step started from (``state``'s other fields) and its base acceleration."""
    n = state.joint_positions.shape[0]
    fields = dict(base_position=packed[:3], base_quaternion=packed[3:7], base_velocity=packed[7:13])
    fields.update(joint_positions=packed[13 : 13 + n], joint_velocities=packed[13 + n : 13 + 2 * n])
    return state.replace(**fields), packed[13 + 2 * n :]


class Layout(NamedTuple):
    """The sizes of a model's packed :class:`ModelSim`: DoFs ``n``, collidable points ``P``, links
    ``N`` and history rows ``H`` (static: a layout is part of the compiled run's key)."""

    dofs: int
    points: int
    links: int
    history: int

    @staticmethod
    def of(model: Model, history: int) -> Layout:
        return Layout(model.dofs, len(model.point_link), model.number_of_links, history)

    def fields(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The packed fields, in order, and their shapes."""
        n, P, N, H = self
        return (
            ("base_position", (3,)), ("base_quaternion", (4,)), ("base_velocity", (6,)), ("joint_positions", (n,)),
            ("joint_velocities", (n,)), ("contact_deformation", (P, 3)), ("controller", (5, n)), ("history", (H, n)),
            ("points", (P, POINT_COLUMNS)), ("joints", (3, n)), ("start", (19 + 2 * n,)), ("link_wrenches", (N, 6)),
            ("step", ()),
        )


def pack(sim: ModelSim, xp=jnp) -> jax.Array:
    """``sim`` as one flat array, in the order of :meth:`Layout.fields` (``xp``: jax.numpy or numpy)."""
    state, last = sim.state, sim.last
    parts = (
        state.base_position, state.base_quaternion, state.base_velocity, state.joint_positions, state.joint_velocities,
        state.contact_deformation, sim.controller, sim.history, last.points, last.joints, last.start, last.link_wrenches,
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
    last = LastStep(values["points"], values["joints"], values["start"], values["link_wrenches"])
    return ModelSim(state, values["controller"], values["history"], last, values["step"])


def initial_sim(model: Model, state: State, history_size: int, step: int) -> ModelSim:
    """The :class:`ModelSim` of a model just inserted at ``state``, after ``step`` physics steps of its world."""
    dtype = state.joint_positions.dtype
    n = model.dofs
    last = LastStep(
        points=jnp.zeros((len(model.point_link), POINT_COLUMNS), dtype),
        joints=jnp.zeros((3, n), dtype),
        start=pack_start(state, jnp.zeros(6, dtype)),
        link_wrenches=jnp.zeros((model.number_of_links, 6), dtype),
    )
    controller = pack_controller(control.ControllerState.zeros(n, dtype))
    return ModelSim(state, controller, jnp.zeros((history_size, n), dtype), last, jnp.asarray(step, dtype))


def _link_wrenches(model: Model, state: State, slots: jax.Array, k: jax.Array, away_from_origins: bool) -> jax.Array:
    """``(N, 6)`` sum of the wrench slots active at step ``k`` of the run, per link: world axes,
    about the link origin.

    Wrenches applied away from the origin need the link orientations: with
    ``away_from_origins`` (static), the kinematics is evaluated at the steps that have such a
    wrench (``lax.cond``); without, the slots' points are all zero.
    """
    active = k < slots[:, STEPS]
    links = slots[:, LINK].astype(jnp.int32)
    wrenches = jnp.where(active[:, None], slots[:, :6], 0.0)

    def moved_to_origins(wrenches):
        W_H_L = kin_module.forward_kinematics(model, state)
        arms = (W_H_L[links, :3, :3] @ slots[:, POINT, None])[:, :, 0]
        return wrenches.at[:, 3:].add(jnp.cross(arms, wrenches[:, :3]))

    if away_from_origins:
        away = jnp.any(active & jnp.any(slots[:, POINT] != 0, axis=-1))
        wrenches = jax.lax.cond(away, moved_to_origins, lambda w: w, wrenches)
    per_link = jnp.arange(model.number_of_links)[:, None] == links[None, :]
    return per_link.astype(wrenches.dtype) @ wrenches


def _exact_velocity(
    model: Model, state: State, params: SimulationParams, table: jax.Array, torques: jax.Array, wrenches: jax.Array
) -> jax.Array:
    """``torques`` plus, on velocity_follower_dart joints, the torques that bring their velocity
    to the (clipped) target in one step.

    The semi-implicit Euler step is affine in the torques, ``qd' = qd'_0 + dt (M^-1)_qq tau``, so
    the extra torques solve ``dt (M^-1)_cc tau_c = target_c - qd'_0,c`` on those joints ``c``
    (exact up to the effort limits; approximate with rk4).
    """
    follower = table[:, control.MODE] == int(JointControlMode.velocity_follower_dart)
    free, _ = step(model, state, joint_torques=torques, link_wrenches=wrenches, params=params)
    M = mass_matrix(model, state)
    n, dtype = model.dofs, M.dtype
    selector = jnp.zeros((M.shape[0], n), dtype).at[M.shape[0] - n :, :].set(jnp.eye(n, dtype=dtype))
    response = params.dt * jnp.linalg.solve(M, selector)[M.shape[0] - n :, :]
    target = jnp.clip(table[:, control.VELOCITY_TARGET], table[:, control.VELOCITY_MIN], table[:, control.VELOCITY_MAX])
    system = jnp.where(follower[:, None] & follower[None, :], response, jnp.eye(n, dtype=dtype))
    extra = jnp.linalg.solve(system, jnp.where(follower, target - free.joint_velocities, 0.0))
    return torques + jnp.where(follower, extra, 0.0)


def _step_model(
    model: Model,
    params: SimulationParams,
    inputs: ModelInputs,
    sim: ModelSim,
    k: jax.Array,
    features: Features,
    report: bool = True,
) -> ModelSim:
    """One physics step of a model; ``report=False`` keeps ``sim.last`` (a step that is not the
    run's last one need not pack what the API reports)."""
    state = sim.state
    dt = params.dt
    torques, controller = control.joint_commands(
        inputs.table, inputs.period, unpack_controller(sim.controller), state.joint_positions, state.joint_velocities,
        sim.step * dt, dt,
    )
    wrenches = _link_wrenches(model, state, inputs.wrenches, k, features.offset_wrenches) if features.wrenches else None
    if features.exact_velocity and model.dofs:
        torques = _exact_velocity(model, state, params, inputs.table, torques, wrenches)
        torques = jnp.clip(torques, inputs.table[:, control.EFFORT_MIN], inputs.table[:, control.EFFORT_MAX])
    next_state, out = step(model, state, joint_torques=torques, link_wrenches=wrenches, params=params)
    history = sim.history
    if features.history:
        history = history.at[(sim.step % history.shape[0]).astype(jnp.int32)].set(torques)
    if not report:
        return ModelSim(next_state, pack_controller(controller), history, sim.last, sim.step + 1)
    dtype = torques.dtype
    points = jnp.concatenate(
        [
            out.contact_positions,
            out.contact_normals,
            out.penetration[:, None],
            out.contact_forces,
            out.in_contact[:, None].astype(dtype),
        ],
        axis=1,
    )
    # The step's accelerations: the Euler-type steps advance the velocities by dt times them.
    last = LastStep(
        points=points,
        joints=jnp.stack([torques, (next_state.joint_velocities - state.joint_velocities) / dt, out.joint_torques]),
        start=pack_start(state, (next_state.base_velocity - state.base_velocity) / dt),
        link_wrenches=jnp.zeros((model.number_of_links, 6), dtype) if wrenches is None else wrenches,
    )
    return ModelSim(next_state, pack_controller(controller), history, last, sim.step + 1)


def _run_world(
    models: tuple[Model, ...],
    params: tuple[SimulationParams, ...],
    inputs: tuple[ModelInputs, ...],
    sims: tuple[jax.Array, ...],
    gravity: jax.Array,
    steps: int,
    features: tuple[Features, ...],
    layouts: tuple[Layout, ...],
) -> tuple[jax.Array, ...]:
    params = tuple(p.replace(gravity=gravity.astype(p.gravity.dtype)) for p in params)
    sims = tuple(unpack(s, layout) for s, layout in zip(sims, layouts))
    sims = tuple(
        s._replace(controller=pack_controller(control.reset(unpack_controller(s.controller), i.table[:, control.RESET] > 0)))
        for s, i in zip(sims, inputs)
    )

    def body(k, current, report=False):
        return tuple(
            _step_model(m, p, i, s, k, f, report)
            for m, p, i, s, f in zip(models, params, inputs, current, features)
        )

    if steps > 1:
        sims = jax.lax.fori_loop(0, steps - 1, body, sims)
    return tuple(pack(sim) for sim in body(steps - 1, sims, report=True))


run_world = jax.jit(_run_world, static_argnames=("steps", "features", "layouts"), donate_argnames=("sims",))
run_world.__doc__ = """Advance every dynamic model of a world by ``steps`` physics steps (static: the simulator's
steps per run), after the PID resets requested in the control tables. ``sims`` are the models'
packed :class:`ModelSim` (:func:`pack`, with ``layouts``), which count the physics steps done
so far; ``gravity (3,)`` overrides the params'. ``sims``
are donated: the run writes its results into their buffers instead of allocating new ones, so
the arrays passed in are invalid afterwards."""


def _contact_elements(terrain: Terrain, points: jax.Array) -> jax.Array:
    """``(P,)``: 0 where the ground is the deepest surface at a point, ``b + 1`` for static box ``b``."""
    no_boxes = terrain.replace(box_transforms=terrain.box_transforms[:0], box_half_extents=terrain.box_half_extents[:0])
    depths = [penetration(no_boxes, points)[0]]
    for b in range(terrain.box_transforms.shape[0]):
        box = no_boxes.replace(
            plane_offset=jnp.asarray(NO_GROUND_OFFSET, terrain.plane_offset.dtype),
            box_transforms=terrain.box_transforms[b : b + 1],
            box_half_extents=terrain.box_half_extents[b : b + 1],
        )
        depths.append(penetration(box, points)[0])
    return jnp.argmax(jnp.stack(depths, axis=1), axis=1)


def _observe(model: Model, packed: jax.Array, layout: Layout, terrain: Terrain, gravity: jax.Array) -> Observation:
    sim = unpack(packed, layout)
    # Kinematics in the internal frame G (world axes, origin at the base: kin.origin), of the
    # state now (poses, velocities) and of the state the last step started from (what the step
    # computed: accelerations, contact forces, joint wrenches).
    kin = kin_module.kinematics(model, sim.state)
    last = sim.last
    start, base_acceleration = unpack_start(sim.state, last.start)
    at_start = kin_module.kinematics(model, start)
    W_a_B = kin_module.base_acceleration_inertial(model, start, at_start, base_acceleration, start.velocity_representation)
    W_a = kin_module.link_accelerations_inertial(model, at_start, W_a_B, last.joints[ACCELERATION])
    mixed_acceleration = rep.acceleration_from_inertial(W_a, at_start.W_H_L, at_start.W_v, "mixed")
    R_T = jnp.swapaxes(at_start.W_H_L[:, :3, :3], -1, -2)
    body_acceleration = jnp.concatenate(
        [(R_T @ mixed_acceleration[:, :3, None])[:, :, 0], (R_T @ mixed_acceleration[:, 3:, None])[:, :, 0]], axis=-1
    )

    # The wrench each joint transmits: the subtree's rate of momentum change minus its gravity and
    # external wrenches (the contact and user wrenches of the last step).
    dtype = W_a.dtype
    links = np.asarray(model.point_link, dtype=int)
    point_map = jnp.asarray(np.arange(model.number_of_links)[:, None] == links[None, :], dtype)
    positions, forces = last.points[:, POSITION], last.points[:, POINT_FORCE]
    W_f_contacts = point_map @ jnp.concatenate([forces, jnp.cross(positions - at_start.origin, forces)], axis=-1)
    origins = at_start.W_H_L[:, :3, 3]
    W_f_user = last.link_wrenches.at[:, 3:].add(jnp.cross(origins, last.link_wrenches[:, :3]))
    W_a_gravity = jnp.concatenate([gravity.astype(dtype), jnp.zeros(3, dtype)])
    momentum = (at_start.W_M @ at_start.W_v[:, :, None])[:, :, 0]
    W_f = (at_start.W_M @ (W_a - W_a_gravity)[:, :, None])[:, :, 0] + spatial.cross_force(at_start.W_v, momentum)
    W_F = kin_module.subtree_sum(model, W_f - W_f_contacts - W_f_user)
    children = np.asarray(model.joint_link, dtype=int)
    joint_wrenches = rep.force_from_inertial(W_F[children], at_start.W_H_L[children], "body")

    return Observation(
        W_H_L=kin.W_H_L.at[:, :3, 3].add(kin.origin),
        mixed_velocity=rep.velocity_from_inertial(kin.W_v, kin.W_H_L, "mixed"),
        body_velocity=rep.velocity_from_inertial(kin.W_v, kin.W_H_L, "body"),
        mixed_acceleration=mixed_acceleration,
        body_acceleration=body_acceleration,
        step_origins=origins + at_start.origin,
        joint_wrenches=joint_wrenches,
        element=_contact_elements(terrain, positions),
    )


observe = jax.jit(_observe, static_argnames=("layout",))
observe.__doc__ = """The :class:`Observation` of a model's state after a run and of its last step (the accelerations,
contact lever arms and joint wrenches of the last step at the state it started from), given the
world's terrain and gravity."""
