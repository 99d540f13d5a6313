"""Ball joints in the step: a spherical pendulum and a free body with a ball-jointed arm move as
MuJoCo's ``mj_step`` (its Euler: our semi-implicit Euler, with a joint spring; with joint
damping, which MuJoCo's Euler takes implicitly, our implicit Euler) to rounding over 1 s at 1 ms; RK4 keeps the undamped
pendulum's energy; the world step moves it as the step of the model alone; gradients through a
rollout equal central differences."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_step

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

PENDULUM = """<mujoco><option timestep="0.001" integrator="Euler"/><worldbody>
  <body name="bob" pos="0 0 2">
    <joint name="ball" type="ball" pos="0 0 0.5" damping="{damping}" stiffness="{stiffness}"/>
    <geom type="capsule" fromto="0 0 0.5 0.2 0.1 -0.1" size="0.04" mass="1" contype="0" conaffinity="0"/>
    <geom type="sphere" pos="0.2 0.1 -0.1" size="0.08" mass="2" contype="0" conaffinity="0"/>
  </body></worldbody></mujoco>"""

FREE = """<mujoco><option timestep="0.001" integrator="Euler"/><worldbody>
  <body name="torso">
    <freejoint name="root"/>
    <geom type="box" size="0.2 0.1 0.05" mass="2" contype="0" conaffinity="0"/>
    <body name="arm" pos="0.2 0 0" quat="0.8 0 0.6 0">
      <joint name="shoulder" type="ball" pos="0.01 0.02 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" mass="0.6" contype="0" conaffinity="0"/>
    </body>
  </body></worldbody></mujoco>"""

DT, STEPS = 0.001, 1000
Q0 = np.array([0.9, 0.3, -0.2, 0.1]) / np.linalg.norm([0.9, 0.3, -0.2, 0.1])
W0 = np.array([0.5, -1.0, 2.0])


def mujoco_run(xml: str, qpos: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's ``qpos`` and ``qvel`` after each of ``STEPS`` steps."""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    positions, velocities = [], []
    for _ in range(STEPS):
        mujoco.mj_step(m, d)
        positions.append(d.qpos.copy())
        velocities.append(d.qvel.copy())
    return np.array(positions), np.array(velocities)


@jax.jit
def run(model: js.Model, state: js.State, params: js.SimulationParams) -> js.State:
    """The states after each of ``STEPS`` steps."""
    return js.rollout(model, state, jnp.zeros((STEPS, model.dofs), state.joint_positions.dtype), params=params)[1][0]


@pytest.mark.parametrize("damping, stiffness, integrator", [(0.0, 2.0, "semi_implicit_euler"), (0.3, 0.0, "implicit_euler")])
def test_a_spherical_pendulum_moves_as_mujoco(damping, stiffness, integrator):
    """With a spring towards the identity (``-k log Q``, explicit in both) or joint damping."""
    xml = PENDULUM.format(damping=damping, stiffness=stiffness)
    model = js.load_model(xml)
    assert model.joint_position_size == 4 and model.dofs == 3
    positions, velocities = mujoco_run(xml, Q0, W0)
    params = js.SimulationParams.build(model, dt=DT, integrator=integrator)
    states = run(model, js.State.build(model, joint_positions=Q0, joint_velocities=W0), params)
    assert np.ptp(positions[:, 1]) > 0.5  # it swings
    assert np.abs(np.asarray(states.joint_positions) - positions).max() < 1e-11
    assert np.abs(np.asarray(states.joint_velocities) - velocities).max() < 1e-10


def test_a_free_body_with_a_ball_joint_moves_as_mujoco():
    model = js.load_model(FREE)
    base_quaternion = np.array([0.9, 0.1, 0.3, -0.2]) / np.linalg.norm([0.9, 0.1, 0.3, -0.2])
    position, linear, B_omega = np.array([0.1, 0.2, 3.0]), np.array([0.3, -0.2, 1.0]), np.array([1.0, -2.0, 0.5])
    positions, velocities = mujoco_run(FREE, np.r_[position, base_quaternion, Q0], np.r_[linear, B_omega, W0])
    R = np.asarray(js.dynamics.spatial.quaternion_to_rotation(jnp.asarray(base_quaternion)))
    state = js.State.build(
        model, base_position=position, base_quaternion=base_quaternion, base_velocity=np.r_[linear, R @ B_omega],
        joint_positions=Q0, joint_velocities=W0,
    )
    states = run(model, state, js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler"))
    assert np.abs(np.asarray(states.base_position) - positions[:, :3]).max() < 1e-11
    assert np.abs(np.asarray(states.base_quaternion) - positions[:, 3:7]).max() < 1e-11
    assert np.abs(np.asarray(states.joint_positions) - positions[:, 7:]).max() < 1e-11
    assert np.abs(np.asarray(states.joint_velocities) - velocities[:, 6:]).max() < 1e-10


@pytest.fixture(scope="module")
def pendulum():
    return js.load_model(PENDULUM.format(damping=0.0, stiffness=0.0))


def test_rk4_keeps_the_energy_of_the_undamped_pendulum(pendulum):
    params = js.SimulationParams.build(pendulum, dt=0.01, integrator="rk4")
    state = js.State.build(pendulum, joint_positions=Q0, joint_velocities=W0)

    @jax.jit
    def energies(state):
        final, (states, _) = js.rollout(pendulum, state, jnp.zeros((100, 3)), params=params)
        energy = jax.vmap(lambda s: js.dynamics.mechanical_energy(pendulum, s))(states)
        return final, energy, js.dynamics.mechanical_energy(pendulum, state)

    final, energy, start = energies(state)
    assert np.abs(np.asarray(energy) - float(start)).max() < 1e-7 * abs(float(start))
    assert abs(np.linalg.norm(np.asarray(final.joint_positions)) - 1.0) < 1e-14


def test_the_world_steps_a_ball_joint_as_the_model_alone(pendulum):
    state = js.State.build(pendulum, joint_positions=Q0, joint_velocities=W0)
    alone = run(pendulum, state, js.SimulationParams.build(pendulum, dt=DT, integrator="semi_implicit_euler"))
    world = WorldModel.build([pendulum], dt=DT, integrator="semi_implicit_euler", collisions=False)
    moved, _ = jax.jit(world_step)(world, world.initial_state([state]), [ModelInputs()])
    np.testing.assert_allclose(moved.states[0].joint_positions, alone.joint_positions[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(moved.states[0].joint_velocities, alone.joint_velocities[0], rtol=0, atol=1e-13)


def test_gradients_through_a_rollout_equal_central_differences(pendulum):
    params = js.SimulationParams.build(pendulum, dt=0.005, integrator="semi_implicit_euler")
    target = jnp.array([0.3, -0.4, 0.5])

    def loss(omega, mass_scale):
        model = pendulum.replace(link_mass=pendulum.link_mass * mass_scale)
        state = js.State.build(model, joint_positions=Q0, joint_velocities=omega)
        torques = jnp.tile(jnp.array([0.2, -0.1, 0.05]), (40, 1))
        final, _ = js.rollout(model, state, torques, params=params)
        bob = js.dynamics.forward_kinematics(model, final)[model.link_index("bob"), :3, 3]
        return jnp.sum((bob - target) ** 2) + jnp.sum(final.joint_velocities**2)

    value_and_grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    omega, scale = jnp.asarray(W0), jnp.asarray(1.0)
    _, (grad_omega, grad_scale) = value_and_grad(omega, scale)

    def f(omega, scale):  # the same program's value: one compilation
        return value_and_grad(omega, scale)[0]

    eps = 1e-6
    fd_omega = np.array([(f(omega + eps * e, scale) - f(omega - eps * e, scale)) / (2 * eps) for e in np.eye(3)])
    fd_scale = (f(omega, scale + eps) - f(omega, scale - eps)) / (2 * eps)
    np.testing.assert_allclose(grad_omega, fd_omega, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_scale, fd_scale, rtol=1e-6, atol=1e-8)
