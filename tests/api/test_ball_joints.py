"""Ball joints in the object API (issues 30 and 32), in one world (one compiled run): a model
with a ball joint and a hinge inserted from MJCF, reset to a quaternion and driven by torques,
reads back the positions (rotation vectors), velocities and applied forces of the functional
core's rollout to 1e-12; beside it a floating SDF model with a ball-jointed arm lands on the
ground plane with its contacts reported; resets take rotation vectors or unit quaternions; a
ball joint refuses the control modes and targets of a PID on its rotation vector."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import api
from jaxsim_like.dynamics import configuration

from .helpers import simulator

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

XML = """<mujoco model="balls"><worldbody>
  <body name="bob" pos="0 0 2">
    <joint name="ball" type="ball" pos="0 0 0.5" damping="0.1"/>
    <geom type="capsule" fromto="0 0 0.5 0.2 0.1 -0.1" size="0.04" mass="1" contype="0" conaffinity="0"/>
    <geom type="sphere" pos="0.2 0.1 -0.1" size="0.08" mass="2" contype="0" conaffinity="0"/>
  </body>
  <body name="arm" pos="1 0 2"><joint name="hinge" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1" contype="0" conaffinity="0"/></body>
</worldbody></mujoco>"""
SDF = """<sdf version="1.9"><model name="flail">
  <link name="torso"><inertial><mass>2</mass><inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.04</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.3 0.2 0.1</size></box></geometry></collision></link>
  <link name="bob"><pose>0.3 0 0 0 0 0</pose><inertial><mass>0.5</mass><inertia><ixx>0.002</ixx><iyy>0.002</iyy><izz>0.002</izz></inertia></inertial>
    <collision name="c"><geometry><sphere><radius>0.05</radius></sphere></geometry></collision></link>
  <joint name="shoulder" type="ball"><pose>-0.15 0 0 0 0 0</pose><parent>torso</parent><child>bob</child></joint>
</model></sdf>"""
Q0 = np.array([0.9, 0.3, -0.2, 0.1]) / np.linalg.norm([0.9, 0.3, -0.2, 0.1])
W0 = np.array([0.5, -1.0, 2.0])
TORQUES = np.array([0.3, -0.2, 0.4, 0.5])  # the ball's about the child frame's axes, then the hinge's
HINGE0, STEPS, RUNS, DT = 0.3, 300, 30, 0.001


@pytest.fixture(scope="module")
def driven():
    """The MJCF model after ``STEPS`` steps in force mode from the ball at ``Q0``, ``W0`` (and the
    SDF model dropped beside it, its arm thrown), and the core's final state and last step
    outputs of the MJCF model from the same start under the same torques."""
    sim = simulator(step_size=DT, steps_per_run=STEPS // RUNS)
    world = sim.get_world()
    assert world.insert_model(api.get_ground_plane())
    assert world.insert_model_from_string(XML, api.Pose((0, 0, 0)), "balls")
    assert world.insert_model_from_string(SDF, api.Pose((3, 0, 0.2)), "flail")
    model, flail = world.get_model("balls"), world.get_model("flail")
    ball = model.get_joint("ball")
    assert ball.reset_joint_position(Q0) and ball.reset_joint_velocity(W0)
    assert model.get_joint("hinge").reset_joint_position([HINGE0])
    assert model.set_joint_control_mode(api.JointControlMode_force)
    assert model.set_joint_generalized_force_targets(TORQUES)
    assert flail.enable_contacts(True) and flail.get_joint("shoulder").reset_joint_velocity([0.0, 0.0, 3.0])
    for _ in range(RUNS):
        assert sim.run()
    core = js.load_model(XML)
    params = js.SimulationParams.build(core, dt=DT, integrator="implicit_euler", gravity=world.gravity())
    start = js.State.build(core, joint_positions=np.r_[Q0, HINGE0], joint_velocities=np.r_[W0, 0.0])
    final, (_, outputs) = jax.jit(lambda s: js.rollout(core, s, jnp.broadcast_to(jnp.asarray(TORQUES), (STEPS, 4)), params=params))(start)
    return sim, world, model, core, final, jax.tree.map(lambda x: np.asarray(x[-1]), outputs)


def test_a_ball_joint_is_one_joint_of_three_dofs(driven):
    _, _, model, _, _, _ = driven
    ball = model.get_joint("ball")
    assert model.joint_names() == ("ball", "hinge") and model.nr_of_joints() == 2 and model.dofs() == 4
    assert ball.dofs() == 3 and ball.type() == api.JointType_ball and model.dofs(["ball"]) == 3
    assert [joint.name() for joint in model.joints()] == ["ball", "hinge"]
    assert ball.child_link().name() == "bob" and ball.parent_link().name() == "world"
    with pytest.raises(api.DOFIndexError):
        ball.position(3)
    with pytest.raises(api.JointNotFound):
        model.get_joint("ball:x")


def test_positions_velocities_and_forces_are_the_cores(driven):
    """Positions are each ball's rotation vector ``log Q`` (child frame), velocities its angular
    velocity in the child frame, as the core's state after the same steps."""
    _, _, model, core, final, outputs = driven
    expected_positions = np.asarray(configuration.dof_positions(core, final.joint_positions))
    np.testing.assert_allclose(model.joint_positions(), expected_positions, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.joint_velocities(), np.asarray(final.joint_velocities), rtol=0, atol=1e-12)
    ball = model.get_joint("ball")
    np.testing.assert_allclose(ball.joint_position(), expected_positions[:3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.joint_positions(["hinge", "ball"]), np.r_[expected_positions[3], expected_positions[:3]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ball.joint_velocity(), np.asarray(final.joint_velocities)[:3], rtol=0, atol=1e-12)
    # The torques on the ball: the command and the ball's damping, as the core applied them.
    np.testing.assert_allclose(model.joint_generalized_forces(), outputs.joint_torques, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ball.joint_generalized_force_target(), TORQUES[:3], rtol=0)
    assert np.abs(np.asarray(ball.joint_generalized_force()) - TORQUES[:3]).max() > 1e-3  # damping acts
    assert np.linalg.norm(expected_positions[:3] - np.asarray(configuration.dof_positions(core, jnp.r_[Q0, HINGE0]))[:3]) > 0.05  # it moved


def test_resets_take_rotation_vectors_and_unit_quaternions(driven):
    sim, _, model, _, _, _ = driven
    ball = model.get_joint("ball")
    rotation = np.array([0.4, -0.3, 1.1])
    assert model.reset_joint_positions(np.r_[rotation, -0.2]) and model.reset_joint_velocities([1.0, 2.0, 3.0, 4.0])
    assert sim.run(paused=True)
    np.testing.assert_allclose(model.joint_positions(), np.r_[rotation, -0.2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(model.joint_velocities(), [1.0, 2.0, 3.0, 4.0], rtol=0)
    assert ball.reset_position(0.5, dof=1) and sim.run(paused=True)  # one component; the others kept
    np.testing.assert_allclose(ball.joint_position(), [0.4, 0.5, 1.1], rtol=0, atol=1e-15)
    almost_unit = Q0 * (1 + 5e-7)
    assert ball.reset_joint_position(almost_unit) and sim.run(paused=True)
    expected = np.asarray(js.dynamics.spatial.quaternion_log(jnp.asarray(Q0)))
    np.testing.assert_allclose(ball.joint_position(), expected, rtol=0, atol=1e-15)
    assert not ball.reset_joint_position(2 * Q0)  # not a rotation
    assert not ball.reset_joint_position([0.1, 0.2])  # neither 3 nor 4 values


def test_a_ball_joint_refuses_position_and_velocity_control(driven, caplog):
    _, _, model, _, _, _ = driven
    ball, hinge = model.get_joint("ball"), model.get_joint("hinge")
    for mode in (api.JointControlMode_position, api.JointControlMode_position_interpolated, api.JointControlMode_velocity, api.JointControlMode_velocity_follower_dart):
        assert not ball.set_control_mode(mode)
        assert "a ball joint cannot be controlled in mode" in caplog.records[-1].getMessage() and "[balls::ball]" in caplog.records[-1].getMessage()
    assert not model.set_joint_control_mode(api.JointControlMode_position)
    assert hinge.control_mode() == api.JointControlMode_force  # nothing switched
    assert not ball.set_joint_position_target([0.1, 0.2, 0.3])
    assert "a ball joint takes no position target" in caplog.records[-1].getMessage()
    assert not model.set_joint_velocity_targets([0.0, 0.0, 0.0, 1.0])
    assert ball.set_control_mode(api.JointControlMode_idle) and ball.control_mode() == api.JointControlMode_idle
    assert ball.set_control_mode(api.JointControlMode_force)


def test_a_floating_model_with_a_ball_joint_lands_on_the_ground(driven):
    _, world, _, _, _, _ = driven
    flail = world.get_model("flail")
    assert flail.get_joint("shoulder").dofs() == 3 and flail.dofs() == 3
    assert 0.0 < flail.base_position()[2] < 0.1 and set(flail.links_in_contact()) >= {"torso"}
    assert np.all(np.isfinite(flail.joint_positions())) and abs(flail.joint_positions()[2]) > 0.1  # the arm swung
