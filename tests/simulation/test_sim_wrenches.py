"""External link wrenches: world axes, about the link origin or (``link_wrenches_at_com``) its COM."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxsim_like as js

DT = 0.001


def test_world_force_cancelling_gravity_keeps_the_sphere_still(sphere, sim):
    params = js.SimulationParams.build(sphere, dt=DT)
    start = np.array([0.2, -0.1, 1.0])
    state = js.State.build(sphere, base_position=start)
    force = -float(sphere.total_mass) * np.asarray(params.gravity)
    wrench = np.concatenate([force, np.zeros(3)])[None]
    _, states, outputs = sim(sphere, state, params, steps=1000, link_wrenches=wrench)
    assert not np.asarray(outputs.in_contact).any()
    np.testing.assert_allclose(np.asarray(states.base_position), np.broadcast_to(start, (1000, 3)), atol=1e-12)
    np.testing.assert_allclose(np.asarray(states.base_velocity), 0.0, atol=1e-12)
    # Without it, the sphere falls.
    _, states, _ = sim(sphere, state, params, steps=1000, link_wrenches=0 * wrench)
    assert float(states.base_position[299, 2]) == pytest.approx(1.0 - 0.5 * 9.81 * 0.3**2, abs=0.01)


step = jax.jit(js.step, static_argnames=("link_wrenches_at_com",))


@pytest.fixture(scope="module")
def swinging(pendulum):
    """The pendulum at q = 0.3 rad, q_dot = -0.4 rad/s, and its parameters."""
    return js.State.build(pendulum, joint_positions=[0.3], joint_velocities=[-0.4]), js.SimulationParams.build(pendulum, dt=DT)


def test_wrench_at_com_equals_wrench_at_origin_plus_the_moment_of_the_force(pendulum, swinging):
    """``[f; tau]`` about the COM is ``[f; tau + (W_p_com - W_p_origin) x f]`` about the link origin."""
    state, params = swinging
    pole = pendulum.link_index("pole")
    force, torque = np.array([3.0, -2.0, 5.0]), np.array([0.4, 1.5, -0.7])
    W_H_pole = np.asarray(js.dynamics.forward_kinematics(pendulum, state))[pole]
    offset = W_H_pole[:3, :3] @ np.asarray(pendulum.link_com[pole])
    assert np.linalg.norm(offset) == pytest.approx(1.0)
    at_com = np.zeros((pendulum.number_of_links, 6))
    at_com[pole] = [*force, *torque]
    at_origin = np.zeros_like(at_com)
    at_origin[pole] = [*force, *(torque + np.cross(offset, force))]
    next_com, out_com = step(pendulum, state, link_wrenches=at_com, params=params, link_wrenches_at_com=True)
    next_origin, out_origin = step(pendulum, state, link_wrenches=at_origin, params=params)
    np.testing.assert_allclose(np.asarray(next_com.joint_velocities), np.asarray(next_origin.joint_velocities), rtol=1e-12)
    # The same wrench read about the origin instead differs by exactly the moment of the force.
    next_plain, _ = step(pendulum, state, link_wrenches=at_com, params=params)
    axis = W_H_pole[:3, :3] @ np.asarray(pendulum.joint_axis[pole])
    expected = DT * float(np.cross(offset, force) @ axis) / 1.00016
    difference = float(next_com.joint_velocities[0] - next_plain.joint_velocities[0])
    assert difference == pytest.approx(expected, rel=1e-9)


def test_force_through_the_pivot_has_no_effect_on_the_joint(pendulum, swinging):
    """The pole's origin is on the joint axis: a force there moves nothing; at the bob it does."""
    state, params = swinging
    pole = pendulum.link_index("pole")
    wrenches = np.zeros((pendulum.number_of_links, 6))
    wrenches[pole, :3] = [10.0, 0.0, 4.0]
    free, _ = step(pendulum, state, params=params, link_wrenches=np.zeros_like(wrenches))
    pushed, _ = step(pendulum, state, link_wrenches=wrenches, params=params)
    assert float(pushed.joint_velocities[0]) == pytest.approx(float(free.joint_velocities[0]), abs=1e-12)
    at_bob, _ = step(pendulum, state, link_wrenches=wrenches, params=params, link_wrenches_at_com=True)
    assert abs(float(at_bob.joint_velocities[0] - free.joint_velocities[0])) > 1e-3
