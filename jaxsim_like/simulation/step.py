"""The step of one model and its rollouts: the world of that model alone (:func:`.world.world_step`),
pure functions of ``(model, state, inputs, params)``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import kinematics as kin_module
from ..dynamics import spatial
from ..dynamics.model import Model
from ..dynamics.state import State
from .model_step import StepOutput
from .params import SimulationParams
from . import ellipsoids, rims
from .world import ModelInputs, WorldModel, world_step


def contact_point_positions(model: Model, state: State) -> jax.Array:
    """``W_p (P, 3)``: the lowest material point of every collidable (swept) point in the world,
    its centre less its radius along z (where it touches horizontal ground; the rings of points on
    cylinder rims turned towards it, :mod:`.rims`; an exact ellipsoid's point at its lowest point,
    :mod:`.ellipsoids`), as one XLA dot,
    which XLA stores once: a reduction over them (``jnp.min`` of their heights, say)
    differentiates exactly, where values that XLA recomputes in each consumer can differ in the
    last bit and zero the gradient of a minimum."""
    W_H_L = kin_module.forward_kinematics(model, state)
    W_H_point = W_H_L[np.asarray(model.point_link, dtype=int)]
    centres = spatial.rotate(W_H_point[:, :3, :3], model.collidable_points) + W_H_point[:, :3, 3]
    if model.ring_rim is not None:
        ring_rim = model.ring_rim.astype(centres.dtype)
        up = jnp.broadcast_to(jnp.asarray([0.0, 0.0, 1.0], centres.dtype), ring_rim[:, :3].shape)
        turns = rims.Rings.placed(ring_rim, W_H_L[model.ring_link]).turns(up)
        centres = rims.turned(centres, rims.coordinates(model.collidable_points, ring_rim, model.point_ring), turns[model.point_ring])
    if model.point_ellipsoid is not None:
        rows = model.point_ellipsoid.astype(centres.dtype)
        centre, M = ellipsoids.placed(rows, W_H_point)
        lowest = ellipsoids.support(centre, M, jnp.broadcast_to(jnp.asarray([0.0, 0.0, -1.0], centres.dtype), centre.shape))
        centres = jnp.where(jnp.any(rows != 0, axis=1)[:, None], lowest, centres)
    return centres.at[:, 2].add(-model.point_radius)


def step(
    model: Model,
    state: State,
    *,
    joint_torques: jax.Array | None = None,
    link_wrenches: jax.Array | None = None,
    params: SimulationParams,
    link_wrenches_at_com: bool = False,
    tendon_forces: jax.Array | None = None,
    mocap_positions: jax.Array | None = None,
    mocap_quaternions: jax.Array | None = None,
) -> tuple[State, StepOutput]:
    """Advance ``state`` by ``params.dt`` under commanded ``joint_torques (n,)`` and external
    ``link_wrenches (N, 6)`` ([force; torque], world axes, about each link's origin, or its COM
    with ``link_wrenches_at_com``), with soft contacts against the terrain and joint effects.
    ``tendon_forces (t,)`` [N] pull along the model's tendons (motors on tendons): they add the
    joint torques ``J^T f`` of the tendons at ``state`` to the command, held over the step.
    ``mocap_positions (k, 3)`` [m] and ``mocap_quaternions (k, 4)`` (wxyz, world frame) place
    the mocap bodies the loop closures hold on (``model.loops.mocap_names``) for the step, as
    MuJoCo's ``mocap_pos`` and ``mocap_quat`` (None: where the model has them, the file's pose);
    the closures pull their links towards them (see :func:`.model_step.with_mocap_poses`).

    The step is the world step (:func:`.world.world_step`) of the world of ``model`` alone
    (:meth:`.world.WorldModel.of`), without controllers. ``params.integrator``:

    - ``"implicit_euler"`` (the default): linearly implicit Euler. The stiff forces (contact
      normal and friction forces with the tangential deformation, position-limit springs and
      dampers, viscous damping and smoothed Coulomb friction of the joints) are taken at the end
      of the step, linearised: ``(M + h sum_L J_L^T H_L J_L + h diag(D_j + h K_j)) a = tau -
      h(q, nu) + J^T (f - h C v) - h K_j q_dot`` with ``nu+ = nu + h a``, solved by one
      articulated-body pass with augmented link inertias (``H_L = sum_p X_p^T (W + h C) X_p`` of
      the link's contact points, see :class:`.contacts.ImplicitContacts`) and joint armature: no
      factorisation, a fixed amount of work. The tangential deformation is updated implicitly in
      closed form. The fluid's drag (:mod:`jaxsim_like.dynamics.fluid`) is linearised at the end of
      the step too, its damping ``G_D`` of each link added to ``H_L`` (MuJoCo's ``implicitfast``
      does the same). The joint couplings, the tendons' rows
      (passive forces, limits, equalities; :mod:`.tendons`), the ball joints' cone limits
      (:mod:`.ball_limits`) and the soft joint limits (:mod:`.joint_limits`) follow the solve, with their exact effective masses (:func:`.couplings.enforce`).
    - ``"semi_implicit_euler"``: the same step with every force taken at its start (explicit).
    - ``"rk4"``: classic Runge-Kutta on the explicit rates.

    With self-collisions (``params.collisions``, see :meth:`.params.SimulationParams.build`) the
    links of the model touch each other as the links of a world do, solved with the rest of the
    step (``"implicit_euler"``): the step is that of the world of ``model`` alone with
    self-collisions. Their tangential deformation travels in ``state.pair_deformation (K, 3)``
    (None, as :meth:`.State.build` makes it: none yet; the next state carries it, so a jitted
    step compiles once more for it; :func:`pair_memory` starts it) and they are reported in
    ``StepOutput.self_contacts``. On a terrain with static boxes (``params.scenery``, see
    :meth:`.params.SimulationParams.build`'s ``static_boxes``) the boxes are the world's second
    model, welded to it: the model's shapes meet them as they meet its own links, the tangential
    deformation travels in ``state.pair_deformation`` and ``StepOutput.self_contacts`` reports
    them too.

    ``params`` is required: build it once, outside any jitted function
    (:meth:`.params.SimulationParams.build` does numpy work on the model).

    Returns the next state and the :class:`.model_step.StepOutput` of the step (positions,
    penetrations and contact flags at its start).
    """
    if link_wrenches is not None and jnp.shape(link_wrenches) != (model.number_of_links, 6):
        raise ValueError(f"link_wrenches must have shape ({model.number_of_links}, 6), got {tuple(jnp.shape(link_wrenches))}")
    world = WorldModel.of(model, params.world, params.model, params.collisions, params.scenery)
    wrench_field = "com_wrenches" if link_wrenches_at_com else "link_wrenches"
    inputs = ModelInputs(joint_torques=joint_torques, tendon_forces=tendon_forces, mocap_positions=mocap_positions,
                         mocap_quaternions=mocap_quaternions, **{wrench_field: link_wrenches})
    start = world.initial_state([state.replace(pair_deformation=None)])
    if params.collisions is None:
        following, outputs = world_step(world, start, [inputs], reports=False)
        return following.states[0].replace(pair_deformation=state.pair_deformation), outputs.models[0]
    following, outputs = world_step(world, start._replace(pair_deformation=pair_memory(params, state).pair_deformation), [inputs],
                                     reports=False)
    return following.states[0].replace(pair_deformation=following.pair_deformation), outputs.models[0]._replace(self_contacts=outputs.pairs)


def pair_memory(params: SimulationParams, state: State) -> State:
    """``state`` with the tangential deformation of the self-contacts of ``params.collisions``
    ``pair_deformation (K, 3)``: its own, or none yet (zeros) when it has none; ``state`` itself
    without self-collisions. ValueError when its shape is not the table's."""
    if params.collisions is None:
        return state
    slots = (params.collisions.table.candidate_slots, 3)
    if state.pair_deformation is None:
        return state.replace(pair_deformation=jnp.zeros(slots, state.joint_positions.dtype))
    if jnp.shape(state.pair_deformation) != slots:
        raise ValueError(f"state.pair_deformation must have shape {slots} (the self-collision table's slots), "
                         f"got {tuple(jnp.shape(state.pair_deformation))}")
    return state


def rollout(
    model: Model,
    state: State,
    joint_torques: jax.Array,
    *,
    params: SimulationParams,
    link_wrenches: jax.Array | None = None,
    link_wrenches_at_com: bool = False,
    checkpoint: bool = False,
    tendon_forces: jax.Array | None = None,
    mocap_positions: jax.Array | None = None,
    mocap_quaternions: jax.Array | None = None,
) -> tuple[State, tuple[State, StepOutput]]:
    """Run ``T`` steps with ``joint_torques (T, n)`` (and ``link_wrenches (T, N, 6)``, ``tendon_forces
    (T, t)``, ``mocap_positions (T, k, 3)``, ``mocap_quaternions (T, k, 4)``, see :func:`step`)
    in one ``lax.scan``.

    Returns the final state and the stacked ``(states, outputs)``: ``states`` holds the state
    after each step (with self-collisions, with their ``pair_deformation``, started by
    :func:`pair_memory`). ``checkpoint=True`` rematerialises each step in the backward pass, so the
    memory of a gradient stays flat in the horizon.
    """
    torques = jnp.asarray(joint_torques, state.joint_positions.dtype)
    if torques.ndim != 2 or torques.shape[1] != model.dofs:
        raise ValueError(f"joint_torques must have shape (T, {model.dofs}), got {tuple(torques.shape)}")

    def one_step(current, inputs):
        tau, wrenches, pulls, positions, quaternions = inputs
        next_state, outputs = step(
            model, current, joint_torques=tau, link_wrenches=wrenches, params=params, link_wrenches_at_com=link_wrenches_at_com,
            tendon_forces=pulls, mocap_positions=positions, mocap_quaternions=quaternions,
        )
        return next_state, (next_state, outputs)

    body = jax.checkpoint(one_step) if checkpoint else one_step
    return jax.lax.scan(body, pair_memory(params, state), (torques, link_wrenches, tendon_forces, mocap_positions, mocap_quaternions))
