"""The object API behaves as the reference documents say (``../shared/reference``): physics only
once loaded, tuples and value types, double precision whatever JAX's global setting, link
accelerations by their definitions, point contacts, and unlimited limits. Each test cites the
documented sentence it checks."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsim_like import api

from .helpers import ARM, ASSETS, FREE_BOX, PENDULUM, SPHERE, approx, simulator

# Two links on one base: a tree with a branch (its traversal gathers parents with an index array).
TWO_ARMS = """<robot name="two_arms">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="left"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><origin xyz="-0.1 0 0"/><mass value="0.5"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="left_joint" type="continuous"><parent link="base"/><child link="left"/><axis xyz="0 1 0"/></joint>
  <joint name="right_joint" type="continuous"><parent link="base"/><child link="right"/><axis xyz="0 1 0"/></joint>
</robot>"""

WORLD_WITH_PHYSICS_PLUGIN = """<?xml version="1.0" ?>
<sdf version="1.7">
  <world name="with_physics">
    <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
  </world>
</sdf>
"""


def test_no_physics_until_a_physics_engine_is_set(caplog):
    """World.set_physics_engine: "By default, if the world file does not already contain a physics
    plugin, no physics is loaded by default." World.time: "A physics plugin need to be part of the
    simulation in order to make the time flow." GazeboSimulator.insert_world_from_sdf: "The
    default empty world does not have the ground plane nor any physics."."""
    sim = simulator(physics=False)
    world = sim.get_world()
    assert world.insert_model(str(SPHERE), api.Pose((0, 0, 1)), "ball")
    ball = world.get_model("ball")
    assert ball.reset_base_world_linear_velocity((1.0, 0, 0))
    for _ in range(5):
        assert sim.run()
    assert world.time() == 0.0 and ball.base_position() == (0, 0, 1)  # the time does not flow, nothing moves
    assert ball.base_world_linear_velocity() == (1.0, 0, 0)  # but resets are applied, as by paused runs

    assert world.set_physics_engine(api.PhysicsEngine_dart)
    assert sim.run() and world.time() == 0.001
    assert ball.base_position()[0] == pytest.approx(0.001, abs=1e-15) and ball.base_position()[2] < 1
    assert not world.set_physics_engine(42)
    assert "unknown physics engine 42" in caplog.records[-1].getMessage()


def test_a_world_file_with_a_physics_plugin_has_physics(tmp_path):
    """World.set_physics_engine: "if the world file does not already contain a physics plugin, no
    physics is loaded": a file with the plugin has physics, one with only a ``<physics>`` profile
    (as get_empty_world: "the default DART physics profile enabled") has none."""
    file = tmp_path / "physics.sdf"
    file.write_text(WORLD_WITH_PHYSICS_PLUGIN)
    for world_file, flows in ((file, True), (ASSETS / "world.sdf", False)):
        sim = api.Simulator(step_size=0.001, rtf=float("inf"))
        assert sim.insert_world_from_sdf(str(world_file)) and sim.initialize()
        assert sim.run() and sim.get_world().time() == (0.001 if flows else 0.0)


def test_getters_return_tuples_and_value_types_compare_and_print_by_value():
    """Model.base_position: "Return type: Tuple[float, float, float]"; Link.contacts:
    "Tuple[Contact]"; Model.joint_positions: "Tuple[float]"; World.model_names: "Tuple[string]";
    Pose, PID, Limit, JointLimit, Contact and ContactPoint are value types with properties."""
    sim = simulator()
    world = sim.get_world()
    pose = api.Pose((0.1, -0.2, 0.3), (np.cos(0.3), 0, np.sin(0.3), 0))
    assert world.insert_model(str(FREE_BOX), pose, "box") and world.insert_model(str(PENDULUM))
    box, pendulum = world.get_model("box"), world.get_model("pendulum")
    link = box.get_link("box")
    assert box.base_position() == pose.position and box.base_orientation() == pose.orientation
    assert link.world_pose() == pose and link.position() == pose.position
    values = [box.base_world_linear_velocity(), link.world_linear_velocity(), link.body_angular_acceleration(),
              link.contact_wrench(), pendulum.joint_positions(), pendulum.get_joint("pivot").joint_velocity(),
              world.gravity(), pose.position, pose.orientation]
    assert all(type(value) is tuple and all(type(x) is float for x in value) for value in values)
    assert world.model_names() == ("box", "pendulum") and sim.world_names() == ("default",)
    assert pendulum.joint_names() == ("pivot",) and link.contacts() == ()
    assert type(box.links()) is tuple and type(pendulum.joints()) is tuple

    assert repr(api.Pose((1, 2, 3))) == "Pose(position=(1.0, 2.0, 3.0), orientation=(1.0, 0.0, 0.0, 0.0))"
    assert api.Pose((1, 2, 3)) == api.Pose([1.0, 2.0, 3.0], np.array([1, 0, 0, 0])) != api.Pose((1, 2, 3.5))
    assert api.PID(1, 0.1, 0.01) == api.PID(1.0, 0.1, 0.01) != api.PID(1, 0.1, 0.02)
    assert repr(api.Limit(-1, 1)) == "Limit(min=-1.0, max=1.0)" and api.Limit(-1, 1) == api.Limit(-1.0, 1.0)
    assert api.JointLimit([0, 1], np.array([2, 3])) == api.JointLimit((0.0, 1.0), (2.0, 3.0))
    point = api.ContactPoint(0.001, np.array([0, 0, 9.8]), (0, 0, 1), [0.1, 0.2, 0.0])
    assert point == api.ContactPoint(0.001, (0, 0, 9.8), (0, 0, 1), (0.1, 0.2, 0)) and point.torque == (0, 0, 0)
    assert repr(point) == (
        "ContactPoint(depth=0.001, force=(0.0, 0.0, 9.8), normal=(0.0, 0.0, 1.0), position=(0.1, 0.2, 0.0), torque=(0.0, 0.0, 0.0))"
    )
    assert api.Contact("a::b", "c::d", [point]) == api.Contact("a::b", "c::d", (point,)) != api.Contact("a::b", "c::d")


def test_double_precision_whatever_the_global_jax_setting():
    """ScenarIO computes in double (``std::array<double, 3>``): a reset reads back exactly
    (Joint.reset_position, then Joint.position: "The position of the joint"), and the user's own
    float32 code stays float32. Limits of np.finfo(float).max (Joint.set_max_generalized_force,
    set_velocity_limit) are unlimited: no overflow warning."""

    def run_pendulum() -> tuple[float, ...]:
        sim = simulator()
        world = sim.get_world()
        assert world.insert_model(str(PENDULUM))
        pendulum = world.get_model("pendulum")
        joint = pendulum.get_joint("pivot")
        assert joint.reset_position(0.3) and sim.run(paused=True)
        assert joint.position() == 0.3 and pendulum.joint_positions() == (0.3,)
        huge = np.finfo(float).max
        assert joint.set_max_generalized_force(huge) and joint.set_velocity_limit(huge)
        assert joint.max_generalized_force() == huge and joint.velocity_limit() == api.Limit(-huge, huge)
        assert pendulum.set_joint_control_mode(api.JointControlMode_force) and joint.set_generalized_force_target(1e6)
        assert joint.enable_history_of_applied_joint_forces(True, 1)
        for _ in range(10):
            assert sim.run()
        assert joint.history_of_applied_joint_forces() == (1e6,)
        return pendulum.joint_positions() + pendulum.joint_velocities() + pendulum.joint_accelerations()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.config.update("jax_enable_x64", False)
        try:
            in_float32_setting = run_pendulum()
            assert jnp.zeros(3).dtype == jnp.float32 and jax.jit(lambda x: 2 * x)(jnp.ones(2)).dtype == jnp.float32
        finally:
            jax.config.update("jax_enable_x64", True)
    assert in_float32_setting == run_pendulum()  # bit for bit: the same float64 computation


def _velocities(link: api.Link) -> np.ndarray:
    return np.concatenate([link.world_linear_velocity(), link.world_angular_velocity(), link.body_linear_velocity()])


def test_link_accelerations_are_the_derivatives_of_the_documented_velocities():
    """Link.world_linear_acceleration: "Get the linear mixed acceleration of the link", the
    derivative of world_linear_velocity ("The linear mixed velocity of the link"); the body
    accelerations are the same vectors in the axes of the link after the step (Gazebo's
    ``W_R_L^T a`` with the orientation world_pose reads; not the derivative of
    body_linear_velocity). Checked against central differences of the velocity getters along the
    step's own accelerations (resets and paused runs), in float64."""
    sim = simulator()
    world = sim.get_world()
    assert world.insert_model(str(ARM), None, "arm7")
    arm = world.get_model("arm7")
    assert arm.set_joint_control_mode(api.JointControlMode.force)
    assert arm.set_joint_generalized_force_targets([5, -8, 3, 6, 1, -2, 0.5])
    for _ in range(200):
        sim.run()
    q, qd = np.array(arm.joint_positions()), np.array(arm.joint_velocities())
    assert sim.run()
    qdd = np.array(arm.joint_accelerations())
    assert approx((np.array(arm.joint_velocities()) - qd) / sim.step_size(), qdd, 1e-9)  # the step's accelerations
    links = [arm.get_link(name) for name in ("link3", "link5", "link7")]
    reported = [(l.world_linear_acceleration(), l.world_angular_acceleration(), l.body_linear_acceleration(),
                 l.body_angular_acceleration()) for l in links]
    rotations = [l.world_pose().transform[:3, :3] for l in links]  # after the step

    h = 1e-6
    differences = []
    for sign in (1, -1):  # the state the step started from, moved by +-h along (qd, qdd)
        assert arm.reset_joint_positions(q + sign * h * qd) and arm.reset_joint_velocities(qd + sign * h * qdd)
        assert sim.run(paused=True)
        differences.append([_velocities(l) for l in links])
    assert arm.reset_joint_positions(q) and arm.reset_joint_velocities(qd) and sim.run(paused=True)
    for R, (linear, angular, body_linear, body_angular), plus, minus in zip(rotations, reported, *differences):
        derivative = (plus - minus) / (2 * h)
        assert approx(linear, derivative[:3], 1e-6) and approx(angular, derivative[3:6], 1e-6)
        assert approx(body_linear, R.T @ linear, 1e-12) and approx(body_angular, R.T @ angular, 1e-12)
        # The derivative of the body velocity differs by w x v: not what ScenarIO calls the body acceleration.
        assert np.linalg.norm(derivative[6:] - np.asarray(body_linear)) > 0.1
    assert np.linalg.norm(reported[-1][0]) > 1


def test_a_free_body_accelerates_as_newton_and_euler_say():
    """Link.world_linear_acceleration / world_angular_acceleration of a floating box pushed off its
    centre (Link.add_world_force: a force "at ``position`` from the centre of mass"), against
    Newton's and Euler's equations over the step: the gyroscopic moment of a free body taken at the
    step's midpoint, linearised (``(I + h/2 G) a = tau - w x I w``, ``G = d(w x I w)/dw``), as the
    implicit step takes it."""
    sim = simulator()
    world = sim.get_world()
    assert world.insert_model(str(FREE_BOX), api.Pose((0, 0, 1), (np.cos(0.2), np.sin(0.2), 0, 0)), "box")
    box = world.get_model("box")
    link = box.get_link("box")
    assert box.reset_base_world_velocity((0.3, -0.2, 0.5), (1.0, 2.0, 3.0)) and sim.run(paused=True)
    force, offset = np.array([2.0, -1.0, 4.0]), np.array([0.05, 0.1, -0.02])
    R, omega = link.world_pose().transform[:3, :3], np.array(link.world_angular_velocity())
    inertia = np.array(link.world_inertia_matrix())
    assert link.add_world_force(force, position=offset) and sim.run()
    torque = np.cross(R @ offset, force)
    assert approx(link.world_linear_acceleration(), force / box.total_mass() + np.array(world.gravity()), 1e-9)
    gyroscopic = np.cross(omega[:, None], inertia, axis=0) - np.cross(inertia @ omega, np.eye(3), axis=0)
    implicit = inertia + 0.5 * sim.step_size() * gyroscopic
    assert approx(link.world_angular_acceleration(), np.linalg.solve(implicit, torque - np.cross(omega, inertia @ omega)), 1e-9)
    R_after = link.world_pose().transform[:3, :3]
    assert approx(link.body_linear_acceleration(), R_after.T @ np.array(link.world_linear_acceleration()), 1e-12)


def test_contact_points_are_point_contacts_and_the_wrench_adds_the_lever_arms():
    """Link.contact_wrench: "All the contact wrenches are composed to an equivalent wrench applied
    to the origin of the link frame and expressed in world coordinates"; a ContactPoint's torque is
    zero (point contacts). A cube on the ground under a pure torque is held by its contacts: their
    wrench about the origin is the opposite torque, which only the lever arms provide."""
    sim = simulator(steps_per_run=10)
    world = sim.get_world()
    assert world.insert_model(api.get_ground_plane()) and world.insert_model(str(FREE_BOX), api.Pose((0, 0, 0.05)), "cube")
    cube = world.get_model("cube")
    link = cube.get_link("box")
    assert cube.enable_contacts(True) and link.apply_world_torque((0, 0.05, 0), duration=1.0)
    for _ in range(60):
        sim.run()
    (contact,) = link.contacts()
    assert len(contact.points) == 4 and all(point.torque == (0.0, 0.0, 0.0) for point in contact.points)
    lever = sum(np.cross(np.subtract(p.position, link.position()), p.force) for p in contact.points)
    wrench = link.contact_wrench()
    assert approx(wrench[3:], lever, 1e-6) and approx(wrench[3:], [0, -0.05, 0], 1e-3)
    # The overdamped default law (api.world.FIRM_DAMPING_RATIO) still sinks the cube, placed at the
    # surface, towards its resting depth: 5.6e-4 of its weight short after 0.6 s.
    weight = -world.gravity()[2] * cube.total_mass()
    assert approx(wrench[:3], [0, 0, weight], 1e-3 * weight)


def test_float32_user_code_and_the_api_on_the_same_model_structure():
    """The object API computes in float64 "without changing the dtype of the user's own
    functional code": the user's float32 step of a branching model, then the API on it."""
    import jaxsim_like as js

    jax.config.update("jax_enable_x64", False)
    try:
        model = js.load_model(TWO_ARMS)
        params = js.SimulationParams.build(model, dt=0.001)
        state, _ = jax.jit(lambda m, s, p: js.step(m, s, params=p))(model, js.State.build(model), params)
        assert state.joint_positions.dtype == jnp.float32
        sim = simulator()
        assert sim.get_world().insert_model_from_string(TWO_ARMS) and sim.run()
    finally:
        jax.config.update("jax_enable_x64", True)


def test_the_api_then_float32_user_code_on_the_same_model_structure():
    """The other order: the API's float64 run of the box, then the user's float32 step of the same
    box, whose contact slots pick the deepest 4 of its 8 corners (index tables cached per model
    structure, which JAX converts once per array: they are kept per x64 mode)."""
    import jaxsim_like as js

    sim = simulator()
    assert sim.get_world().insert_model_from_file(str(FREE_BOX)) and sim.run()
    jax.config.update("jax_enable_x64", False)
    try:
        model = js.load_model(FREE_BOX)
        params = js.SimulationParams.build(model, dt=0.001)
        assert params.contact_slots is not None and sum(params.contact_slots) < len(model.point_link)
        state = js.State.build(model, base_position=[0.0, 0.0, 0.1])
        state, _ = jax.jit(lambda m, s, p: js.step(m, s, params=p))(model, state, params)
        assert state.base_position.dtype == jnp.float32
    finally:
        jax.config.update("jax_enable_x64", True)
