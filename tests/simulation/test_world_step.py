"""The functional world step without contacts between models: the world of one model is the
step, several models step as they would alone (one by one or batched), and the world's
controllers, timed wrenches, history and reported joint wrenches are right (analytic cases and
identities)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.simulation import control, wrenches
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_rollout, world_step

DT = 0.002
TORQUES = jnp.array([0.3, -0.2])  # on the double pendulum


@pytest.fixture(scope="module")
def models(double_pendulum, box):
    return double_pendulum, box


@pytest.fixture(scope="module")
def states(models):
    pendulum, box = models
    # The box rests 0.5 mm deep on the ground; the pendulum swings 2 m away.
    half_height = float(-np.min(np.asarray(box.collidable_points)[:, 2]))
    return (
        js.State.build(pendulum, base_position=[2.0, 0.0, 2.5], joint_positions=[0.4, -0.3], joint_velocities=[0.5, 1.0]),
        js.State.build(box, base_position=[0.0, 0.0, half_height - 5e-4], base_velocity=[0.1, 0.0, -0.05, 0.0, 0.2, 0.0]),
    )


jitted_step = jax.jit(world_step)
jitted_single = jax.jit(js.step)
jitted_rollout = jax.jit(world_rollout, static_argnames="steps")


@pytest.mark.parametrize("integrator", ["implicit_euler", "semi_implicit_euler", "rk4"])
def test_models_step_as_they_would_alone(models, states, integrator):
    """Two models that do not touch: each steps as :func:`step` steps it alone, to rounding (rk4,
    the costliest to compile, with the box alone). XLA fuses the two graphs differently, so the
    last bit can differ: rk4's did by 1.7e-16 once the step's point positions became fused
    products of columns (2026-12-02)."""
    if integrator == "rk4":
        models, states = models[1:], states[1:]
    world = WorldModel.build(models, dt=DT, integrator=integrator, collisions=False)
    inputs = [ModelInputs(joint_torques=TORQUES if model.dofs else None) for model in models]
    next_world, outputs = jitted_step(world, world.initial_state(states), inputs)
    assert bool(outputs.finite)
    for m, (model, state) in enumerate(zip(models, states)):
        params = js.SimulationParams.build(model, dt=DT, integrator=integrator)
        alone, alone_out = jitted_single(model, state, joint_torques=inputs[m].joint_torques, params=params)
        for got, want in zip(jax.tree.leaves(next_world.states[m]), jax.tree.leaves(alone)):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(outputs.models[m].contact_forces, alone_out.contact_forces, rtol=1e-13, atol=1e-12)
    assert int(next_world.steps) == 1


def test_joint_wrenches_transmit_the_applied_torques_and_the_subtree_weight(models, states):
    """The reported joint wrench projected on each joint's axis is the torque the joint applied,
    and at rest the first joint carries the pendulum's weight."""
    pendulum, _ = models
    world = WorldModel.build([pendulum], dt=DT, collisions=False)
    state = states[0]
    _, outputs = jitted_step(world, world.initial_state([state]), [ModelInputs(joint_torques=TORQUES)])
    report, out = outputs.reports[0], outputs.models[0]
    links = np.asarray(pendulum.joint_link)
    axis = np.asarray(pendulum.joint_axis)[links]
    point = np.asarray(pendulum.joint_axis_point)[links]
    wrench = np.asarray(report.joint_wrenches)
    # About the axis point: torque + (origin - point) x force, projected on the axis.
    about_axis = wrench[:, 3:] + np.cross(-point, wrench[:, :3])
    np.testing.assert_allclose(np.sum(about_axis * axis, axis=1), out.joint_torques, atol=1e-9)

    at_rest = js.State.build(pendulum, base_position=[2.0, 0.0, 2.5])
    _, rest = jitted_step(world, world.initial_state([at_rest]), [ModelInputs(joint_torques=jnp.zeros(2))])  # the program above
    weight = float(jnp.sum(pendulum.link_mass[1:])) * 9.81
    base_R = np.asarray(js.dynamics.kinematics.forward_kinematics(pendulum, at_rest))[links[0], :3, :3]
    force_world = base_R @ np.asarray(rest.reports[0].joint_wrenches)[0, :3]
    np.testing.assert_allclose(force_world, [0, 0, weight], atol=1e-6)


def test_exact_velocity_and_pid_controllers_run_in_the_core(models, states):
    """velocity_follower_dart joints reach their target in one explicit step (under a timed
    wrench); a position PID
    holds its command between controller updates (period 3 steps) and records a history."""
    pendulum, _ = models
    table = control.default_table(np.full(2, 1e3), np.full(2, 10.0))
    table[:, control.MODE] = int(control.JointControlMode.velocity_follower_dart)
    table[:, control.VELOCITY_TARGET] = [0.55, 0.97]  # within the 100 N m effort limits
    world = WorldModel.build([pendulum], dt=DT, integrator="semi_implicit_euler", collisions=False, exact_velocity=[True])
    pushed = wrenches.timed_table(1)  # a timed wrench on the tip link is part of the prediction
    pushed[0, wrenches.FORCE], pushed[0, wrenches.POINT], pushed[0, wrenches.LINK], pushed[0, wrenches.UNTIL] = [3.0, 0, 0], [0, 0, -1.0], 2, 1
    inputs = [ModelInputs(table=jnp.asarray(table), period=jnp.asarray(0.0), timed_wrenches=jnp.asarray(pushed))]
    next_world, _ = jitted_step(world, world.initial_state([states[0]]), inputs)
    np.testing.assert_allclose(next_world.states[0].joint_velocities, [0.55, 0.97], atol=1e-9)

    table[:, control.MODE] = int(control.JointControlMode.position)
    table[:, control.POSITION_TARGET] = [0.0, 0.0]
    world = WorldModel.build([pendulum], dt=DT, collisions=False)
    inputs = [ModelInputs(table=jnp.asarray(table), period=jnp.asarray(3 * DT))]
    final, outputs = jitted_rollout(world, world.initial_state([states[0]], history=8), inputs, steps=7)
    commanded = np.asarray(outputs.reports[0].commanded)
    # Updates at steps 0, 3 and 6; the command is held in between.
    np.testing.assert_array_equal(commanded[1], commanded[0])
    np.testing.assert_array_equal(commanded[2], commanded[0])
    assert not np.array_equal(commanded[3], commanded[2])
    np.testing.assert_array_equal(commanded[4], commanded[3])
    expected = -(1.0 * np.asarray(states[0].joint_positions) + 0.1 * np.asarray(states[0].joint_positions) * DT)
    np.testing.assert_allclose(commanded[0], expected, rtol=1e-12)
    history = np.asarray(final.histories[0])
    np.testing.assert_array_equal(history[:7], commanded)
    assert int(final.steps) == 7


def test_a_stiff_pid_is_taken_at_the_end_of_an_implicit_step(models, states):
    """Position PIDs of 1e5 N m/rad at dt = 10 ms, far past what an explicit step of this pendulum
    takes, settle with the implicit step, where the command is the PID of the end-of-step state,
    ``-p q' - d (q' - q) / dt``, and blow up with the explicit one."""
    pendulum, _ = models
    pendulum = pendulum.replace(effort_limit=jnp.full(2, 1e9, dtype=float))  # strongly typed, as parsed: nothing traced again
    table = control.default_table(np.full(2, 1e9), np.full(2, 10.0), gains=(1e5, 0.0, 50.0, -np.inf, np.inf, -np.inf, np.inf, 0.0))
    table[:, control.MODE] = int(control.JointControlMode.position)
    table[:, control.POSITION_TARGET] = 0.0
    inputs = [ModelInputs(table=jnp.asarray(table), period=jnp.asarray(0.0))]
    start = states[0].replace(base_position=jnp.array([0.0, 0.0, 2.5]))
    ends = {}
    for integrator in ("implicit_euler", "semi_implicit_euler"):
        world = WorldModel.build([pendulum], dt=0.01, integrator=integrator, collisions=False)
        final, _ = jitted_rollout(world, world.initial_state([start]), inputs, steps=100)
        ends[integrator] = np.abs(np.asarray(final.states[0].joint_positions)).max()
        if integrator == "implicit_euler":
            positions = [np.asarray(start.joint_positions)]
            state = world.initial_state([start])
            for _ in range(3):
                state, out = jitted_step(world, state, inputs)
                q_next, v_next = np.asarray(state.states[0].joint_positions), np.asarray(state.states[0].joint_velocities)
                np.testing.assert_allclose(out.reports[0].commanded, -1e5 * q_next - 50.0 * (q_next - positions[-1]) / 0.01, rtol=1e-9)
                np.testing.assert_allclose(v_next, (q_next - positions[-1]) / 0.01, rtol=1e-9)
                positions.append(q_next)
    assert ends["implicit_euler"] < 1e-3
    assert not ends["semi_implicit_euler"] < 1.0


def test_timed_wrenches_act_until_their_step(models):
    """A 2 N force on the free box in zero gravity, applied at a point 0.1 m off its origin for
    5 steps: its momentum grows by F 5 dt and it spins by the force's moment."""
    _, box = models
    world = WorldModel.build([box], dt=DT, gravity=[0.0, 0.0, 0.0], collisions=False)
    table = wrenches.timed_table(2)
    table[0, wrenches.FORCE] = [2.0, 0.0, 0.0]
    table[0, wrenches.POINT] = [0.0, 0.1, 0.0]
    table[0, wrenches.UNTIL] = 5
    state = js.State.build(box, base_position=[0.0, 0.0, 5.0])
    final, outputs = jitted_rollout(
        world, world.initial_state([state]), [ModelInputs(timed_wrenches=jnp.asarray(table))], steps=8
    )
    mass = float(box.link_mass[0])
    np.testing.assert_allclose(final.states[0].base_velocity[:3], [2.0 * 5 * DT / mass, 0, 0], rtol=1e-9)
    applied = np.asarray(outputs.reports[0].link_wrenches)[:, 0]
    np.testing.assert_allclose(applied[:5], np.tile([2.0, 0, 0, 0, 0, -0.2], (5, 1)), atol=1e-5)
    np.testing.assert_array_equal(applied[0], [2.0, 0, 0, 0, 0, -0.2])
    np.testing.assert_array_equal(applied[5:], 0.0)
    assert abs(float(final.states[0].base_velocity[5])) > 0


def test_world_steps_batch(models, states):
    """jit(vmap) over a batch of world states equals the worlds stepped one by one (gradients
    through the world step: ``test_world_contacts``). The inputs and the world are those of the
    implicit case above, whose compiled step steps the worlds one by one."""
    world = WorldModel.build(models, dt=DT, collisions=False)
    inputs = [ModelInputs(joint_torques=TORQUES), ModelInputs()]
    start = world.initial_state(states)
    batch = jax.tree.map(lambda x: jnp.stack([x, x]), start)
    moved = batch.states[0].replace(joint_positions=batch.states[0].joint_positions.at[1].add(0.1))
    batch = batch._replace(states=(moved, batch.states[1]))
    stepped, outputs = jax.jit(jax.vmap(world_step, in_axes=(None, 0, None)))(world, batch, inputs)
    assert stepped.states[0].joint_positions.shape == (2, 2) and bool(jnp.all(outputs.finite))
    second = start._replace(states=(start.states[0].replace(joint_positions=moved.joint_positions[1]), start.states[1]))
    alone, _ = jitted_step(world, second, inputs)
    np.testing.assert_allclose(stepped.states[0].joint_velocities[1], alone.states[0].joint_velocities, rtol=1e-12)
