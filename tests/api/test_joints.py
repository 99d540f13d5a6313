"""Joints and controllers on a 7-DoF arm: control modes, PIDs, controller period, force history,
interpolated positions, exact velocity tracking, resets, errors and Gazebo's joint queries
(ScenarIO's test_pid_controllers, test_model and test_joint behaviour)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like import api

from .helpers import ARM, approx, arm_in_position_mode

DEG = np.pi / 180


@pytest.fixture
def arm_world(make_world):
    return make_world((ARM, None, "arm7"))


def test_position_control_holds_against_gravity_and_tracks_a_sinusoid(arm_world):
    sim, world = arm_world
    arm = arm_in_position_mode(sim, world)
    assert approx(arm.joint_position_targets(), arm.joint_positions(), 0)
    for _ in range(1000):
        assert sim.run()
    assert np.abs(np.subtract(arm.joint_positions(), arm.joint_position_targets())).max() < 1 * DEG

    joint1, joint6 = arm.get_joint("joint1"), arm.get_joint("joint6")
    start1, start6 = joint1.position(), joint6.position()
    range1 = 0.9 * (joint1.position_limit().max - joint1.position_limit().min) / 2
    range6 = 0.9 * (joint6.position_limit().max - joint6.position_limit().min) / 2
    for k in range(3100):  # one period of the sinusoid (3.03 s): both extremes and the zero crossings
        phase = np.sin(2 * np.pi * 0.33 * k * sim.step_size())
        reference1, reference6 = start1 + range1 * phase, start6 + range6 * phase
        assert joint1.set_position_target(reference1) and joint6.set_position_target(reference6)
        assert sim.run()
        assert abs(joint1.position() - reference1) < 3 * DEG
        assert abs(joint6.position() - reference6) < 3 * DEG


def test_switching_mode_sets_the_targets_to_the_state_and_resets_the_pid(arm_world, caplog):
    """Joint.position_target: "Raises: std::runtime_error if the DOF is not valid or if no
    position target was set"; set_control_mode and set_position_target: "Returns: True for
    success, false otherwise" (an invalid mode, a target the mode does not accept)."""
    sim, world = arm_world
    arm = world.get_model("arm7")
    joint = arm.get_joint("joint2")
    assert joint.control_mode() == api.JointControlMode.idle
    assert joint.generalized_force_target() == 0.0  # idle is force control with zero force
    with pytest.raises(api.JointError, match=r"\[arm7::joint2\] no position target was set"):
        joint.position_target()
    for _ in range(20):
        sim.run()  # the arm falls a little
    assert arm.set_joint_control_mode(api.JointControlMode.velocity, ["joint2"])
    assert joint.velocity_target() == joint.velocity() != 0
    with pytest.raises(api.JointError, match="no position target"):
        joint.position_target()
    assert joint.set_control_mode(api.JointControlMode_position)
    assert joint.position_target() == joint.position()

    # An integral-only PID accumulates; switching mode resets it, so the next command is small again.
    assert arm.set_controller_period(sim.step_size()) and arm.enable_history_of_applied_joint_forces(True, 1)
    assert joint.set_pid(api.PID(0, 20000, 0))
    assert joint.set_position_target(joint.position() + 0.1)
    for _ in range(10):
        sim.run()
    accumulated = joint.history_of_applied_joint_forces()[-1]
    assert joint.set_control_mode(api.JointControlMode.position) and joint.set_position_target(joint.position() + 0.1)
    sim.run()
    assert abs(joint.history_of_applied_joint_forces()[-1]) < abs(accumulated) / 5

    assert not joint.set_control_mode(api.JointControlMode.invalid)
    assert not joint.set_control_mode(42)
    assert joint.set_control_mode(api.JointControlMode.velocity)
    assert not joint.set_position_target(0.3)
    assert not arm.set_joint_acceleration_targets([0.0], ["joint2"])
    messages = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert [m.split(": ", 1)[1] for m in messages] == [
        "[arm7::joint2] the invalid control mode cannot be set",
        "[arm7::joint2] unknown control mode 42",
        "[arm7::joint2] control mode 'velocity' does not accept a position target (accepted in: position, position_interpolated, idle, force)",
        "[arm7::joint2] control mode 'velocity' does not accept a acceleration target (accepted in: idle, force)",
    ]


def test_targets_follow_the_joint_serialisation(arm_world):
    _, world = arm_world
    arm = world.get_model("arm7")
    assert arm.set_joint_control_mode(api.JointControlMode_force)
    targets = np.arange(7) / 10
    assert arm.set_joint_position_targets(targets) and approx(arm.joint_position_targets(), targets, 0)
    assert approx(arm.joint_position_targets(["joint7", "joint2"]), [0.6, 0.1], 0)
    assert arm.set_joint_velocity_targets([-0.1, 6], ["joint3", "joint1"])
    assert approx(arm.joint_velocity_targets(["joint1", "joint3"]), [6, -0.1], 0)
    assert arm.set_joint_acceleration_targets(targets) and approx(arm.joint_acceleration_targets(), targets, 0)
    assert arm.set_joint_generalized_force_targets(-targets) and approx(arm.joint_generalized_force_targets(), -targets, 0)
    assert arm.set_base_pose_target((0, 0, 5), (0, 0, 0, 1.0)) and arm.set_base_orientation_target((0, 0, 1.0, 0))
    assert approx(arm.base_position_target(), [0, 0, 5], 0) and approx(arm.base_orientation_target(), [0, 0, 1, 0], 0)
    assert arm.set_base_world_velocity_target((1, 2, 3), (4, 5, 6))
    assert arm.set_base_world_angular_acceleration_target((-1, -2, -3))
    assert approx(arm.base_world_angular_velocity_target(), [4, 5, 6], 0)
    assert approx(arm.base_world_angular_acceleration_target(), [-1, -2, -3], 0)
    with pytest.raises(api.ModelError, match="no base linear acceleration target was set"):
        arm.base_world_linear_acceleration_target()


def test_bad_calls_raise_the_reference_exceptions_or_return_false(arm_world, caplog):
    """ScenarIO: "Raises: std::runtime_error if the DOF is not valid" (Joint.position), "Raises:
    std::runtime_error if the joint does not exist" (Model.get_joint); the setters return "True
    for success, false otherwise" and log why."""
    _, world = arm_world
    arm = world.get_model("arm7")
    joint = arm.get_joint("joint1")
    assert not arm.reset_joint_positions([0.1, 0.2, 0.3])
    assert "Nr of DoFs joint=7 data=3" in caplog.records[-1].getMessage()
    assert arm.set_joint_control_mode(api.JointControlMode.force)
    assert not arm.set_joint_generalized_force_targets([1.0], ["joint1", "joint2"])
    assert "Nr of DoFs joint=2 data=1" in caplog.records[-1].getMessage()
    with pytest.raises(api.DOFMismatch, match=r"\[arm7::joint1\] Nr of DoFs joint=1 data=1"):
        joint.position(dof=1)
    with pytest.raises(api.DOFMismatch, match=r"\[arm7::joint1\] Nr of DoFs joint=1 data=1"):
        joint.set_position_target(0.5, dof=1)
    assert not joint.set_joint_position_target([1.0, 2.0])
    assert "data=2" in caplog.records[-1].getMessage()
    with pytest.raises(api.JointNotFound, match=r"\[elbow\] Joint does not exist"):
        arm.get_joint("elbow")
    with pytest.raises(api.JointNotFound, match="elbow"):
        arm.joint_positions(["joint1", "elbow"])
    with pytest.raises(api.LinkNotFound, match=r"\[finger\] Link does not exist"):
        arm.get_link("finger")
    assert not arm.set_controller_period(0)
    assert "controller period must be positive" in caplog.records[-1].getMessage()
    assert not arm.reset_base_world_linear_velocity([1, 0, 0])
    assert "fixed-base model has no base velocity" in caplog.records[-1].getMessage()
    assert not arm.reset_joint_velocities([np.nan] * 7)
    assert "must not contain NaN" in caplog.records[-1].getMessage()


def test_joint_resets_are_applied_by_the_next_run(arm_world):
    sim, world = arm_world
    arm = world.get_model("arm7")
    assert approx(arm.joint_positions(), np.zeros(7), 0)
    assert arm.reset_joint_positions([0.05] * 7)
    assert approx(arm.joint_positions(), np.zeros(7), 0)
    assert sim.run(paused=True) and world.time() == 0.0
    assert approx(arm.joint_positions(), [0.05] * 7, 1e-15) and approx(arm.joint_velocities(), np.zeros(7), 0)
    sim.run()
    assert not approx(arm.joint_velocities(), np.zeros(7), 1e-9)
    subset = arm.joint_names()[:4]
    assert arm.reset_joint_positions([-0.4] * 4, subset) and arm.reset_joint_velocities([3.0] * 4, subset)
    joint = arm.get_joint("joint7")
    assert joint.reset(0.2, -1.0) and joint.reset_joint([0.3], [-2.0])
    sim.run(paused=True)
    assert approx(arm.joint_positions(subset), [-0.4] * 4, 1e-15) and approx(arm.joint_velocities(subset), [3.0] * 4, 1e-15)
    assert joint.position() == 0.3 and joint.velocity() == -2.0


def test_history_of_applied_joint_forces(arm_world):
    sim, world = arm_world
    arm = world.get_model("arm7")
    assert arm.set_joint_control_mode(api.JointControlMode_force)
    assert not arm.history_of_applied_joint_forces_enabled()
    assert arm.enable_history_of_applied_joint_forces(True, 3) and arm.history_of_applied_joint_forces_enabled()
    torques = np.zeros(7)
    expected = np.zeros(7 * 3)
    for _ in range(10):
        torques += 0.1
        assert arm.set_joint_generalized_force_targets(torques)
        sim.run()
        expected = np.concatenate([expected, torques])[-7 * 3 :]
        assert approx(arm.history_of_applied_joint_forces(), expected, 1e-12)
    joint = arm.get_joint("joint3")
    assert approx(joint.history_of_applied_joint_forces(), [0.8, 0.9, 1.0], 1e-12)
    assert approx(arm.history_of_applied_joint_forces(["joint3", "joint1"]), [0.8, 0.8, 0.9, 0.9, 1.0, 1.0], 1e-12)
    assert arm.get_joint("joint1").enable_history_of_applied_joint_forces(False)
    assert arm.get_joint("joint1").history_of_applied_joint_forces() == ()
    with pytest.raises(api.ModelError, match="same size"):
        arm.history_of_applied_joint_forces()
    # A longer window starts with zeros for the steps before it was enabled.
    assert arm.get_joint("joint1").enable_history_of_applied_joint_forces(True, 5)
    sim.run()
    assert approx(arm.get_joint("joint1").history_of_applied_joint_forces(), [0, 0, 0, 0, 1.0], 1e-12)


def test_the_controller_period_is_decoupled_from_the_physics_step(arm_world):
    """Runs of one physics step, the program the file's other tests compile: the PID's period
    counts physics steps across runs."""
    sim, world = arm_world
    arm = arm_in_position_mode(sim, world)
    assert arm.set_controller_period(0.005) and arm.controller_period() == 0.005
    assert arm.get_joint("joint4").controller_period() == 0.005
    assert arm.set_joint_position_targets(np.add(arm.joint_positions(), 0.01))
    assert arm.enable_history_of_applied_joint_forces(True, 30)
    for _ in range(30):
        sim.run()
    history = np.array(arm.history_of_applied_joint_forces(["joint2"]))
    # The PID updates every 5 physics steps and holds its command in between.
    assert np.all(history.reshape(6, 5) == history.reshape(6, 5)[:, :1])
    assert len(np.unique(history)) == 6


def test_position_interpolated_follows_a_smooth_trajectory_to_the_target(arm_world):
    sim, world = arm_world
    arm = arm_in_position_mode(sim, world)
    joint = arm.get_joint("joint1")
    start = joint.position()
    assert joint.set_control_mode(api.JointControlMode.position_interpolated)
    assert joint.set_position_target(start + 0.5) and joint.position_target() == start + 0.5
    duration = 1.875 * 0.5 / joint.velocity_limit().max  # the quintic's peak speed is the velocity limit
    positions = []
    for _ in range(round(duration / sim.step_size()) + 300):
        sim.run()
        positions.append(joint.position())
    positions = np.array(positions)
    half = round(duration / 2 / sim.step_size())
    assert positions[half] == pytest.approx(start + 0.25, abs=1 * DEG)
    assert positions[-1] == pytest.approx(start + 0.5, abs=0.2 * DEG)
    speeds = np.diff(positions) / sim.step_size()
    assert speeds.max() < 1.1 * joint.velocity_limit().max and np.abs(np.diff(speeds)).max() < 0.05


def test_velocity_follower_dart_tracks_velocities_exactly(arm_world):
    sim, world = arm_world
    arm = arm_in_position_mode(sim, world)
    first, second = arm.get_joint("joint2"), arm.get_joint("joint4")
    assert first.set_max_generalized_force(1e4) and second.set_max_generalized_force(1e4)
    assert first.set_control_mode(api.JointControlMode.velocity_follower_dart)
    for velocity in (0.2, -0.1, 0.05):  # the other joints stay under their position PIDs
        assert first.set_velocity_target(velocity)
        sim.run()
        assert first.velocity() == pytest.approx(velocity, abs=1e-9)
    assert second.set_velocity([0.3])  # Gazebo's SetVelocity switches to this mode
    assert second.control_mode() == api.JointControlMode.velocity_follower_dart
    sim.run()
    assert first.velocity() == pytest.approx(0.05, abs=1e-9) and second.velocity() == pytest.approx(0.3, abs=1e-9)
    assert first.set_max_generalized_force(1.0) and first.set_velocity_target(-2.0)
    sim.run()
    assert first.velocity() > -1.0  # exact up to the effort limit


def test_limits_gains_and_friction(arm_world):
    sim, world = arm_world
    arm = world.get_model("arm7")
    joint = arm.get_joint("joint2")
    assert joint.pid() == api.PID(1, 0.1, 0.01) and joint.type() == api.JointType.revolute and joint.dofs() == 1
    assert joint.max_generalized_force() == 87 and approx(arm.joint_limits(["joint2"]).max, [1.76], 0)
    assert joint.set_max_generalized_force(50) and joint.max_generalized_force() == 50
    assert joint.set_pid(api.PID(10, 0, 1, cmd_min=-100, cmd_max=100))
    assert (joint.pid().cmd_min, joint.pid().cmd_max) == (-50, 50)  # clipped to the maximum force
    assert joint.set_effort_limits([(-20, 30)]) and approx(joint.joint_max_generalized_force(), [30], 0)
    assert joint.set_joint_velocity_limit([1.5]) and joint.velocity_limit() == api.Limit(-1.5, 1.5)
    assert joint.set_velocity_limits([(-1, 2)]) and joint.joint_velocity_limit().max == (2.0,)
    assert joint.set_position_limits([(-0.5, 0.7)]) and joint.position_limit() == api.Limit(-0.5, 0.7)
    assert not joint.set_position_limits([(1, 0)])
    assert joint.set_coulomb_friction(0.3) and joint.coulomb_friction() == pytest.approx(0.3)
    assert joint.set_viscous_friction(0.2) and joint.viscous_friction() == pytest.approx(0.2)
    assert arm.set_joint_control_mode(api.JointControlMode.force, ["joint2"])
    assert joint.set_generalized_force_target(100.0)
    arm.enable_history_of_applied_joint_forces(True, 1, ["joint2"])
    sim.run()
    assert joint.history_of_applied_joint_forces()[-1] == 30  # commands are clipped to the effort limits


def test_gazebo_joint_queries(arm_world):
    sim, world = arm_world
    arm = arm_in_position_mode(sim, world)
    for _ in range(1000):
        sim.run()
    joint = arm.get_joint("joint2")
    assert approx(joint.axis(), [0, 1, 0], 0) and joint.parent_link_name() == "link1" and joint.child_link_name() == "link2"
    assert joint.pose() == api.Pose() and joint.name(scoped=True) == "arm7::joint2"
    assert joint.child_link().name() == "link2" and joint.parent_link().name() == "link1"
    assert joint.parent_model() == arm
    # Holding still, joint 1 carries the weight of everything above it.
    above = arm.total_mass(arm.link_names()[1:])
    wrench = arm.get_joint("joint1").transmitted_wrench()
    assert wrench[:3] == pytest.approx([0, 0, above * 9.8], abs=0.05)
    tau = np.array([np.dot(j.transmitted_wrench()[3:], j.axis()) for j in arm.joints()])
    assert approx(tau, arm.joint_generalized_forces(), 0.05)  # the actuated component is the joint torque


# A gripper welded to the world whose right finger mimics the left one (q_right = q_left).
GRIPPER = """<robot name="gripper">
  <link name="world"/>
  <joint name="weld" type="fixed"><parent link="world"/><child link="palm"/><origin xyz="0 0 0.5"/></joint>
  <link name="palm"><inertial><mass value="0.5"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="left" type="prismatic"><parent link="palm"/><child link="left_finger"/><origin xyz="0 0.02 0.05"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="20" velocity="0.2"/></joint>
  <link name="left_finger"><inertial><mass value="0.05"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="right" type="prismatic"><parent link="palm"/><child link="right_finger"/><origin xyz="0 -0.02 0.05"/>
    <axis xyz="0 -1 0"/><limit lower="0" upper="0.04" effort="20" velocity="0.2"/><mimic joint="left"/></joint>
  <link name="right_finger"><inertial><mass value="0.05"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""


def test_a_mimic_joint_follows_its_leader_and_ignores_its_own_target(make_world, caplog):
    """Position targets for both fingers, the follower's off its rule: the follower reports the
    position its leader gives it, keeps its target as set, and one warning names it."""
    sim, world = make_world((GRIPPER, None, "gripper"))
    gripper = world.get_model("gripper")
    assert gripper.set_controller_period(sim.step_size())
    for joint in gripper.joints():
        assert joint.set_pid(api.PID(200, 0, 5))
    assert gripper.set_joint_control_mode(api.JointControlMode_position)
    for _ in range(300):
        assert gripper.set_joint_position_targets([0.03, 0.01])
        assert sim.run()
    left, right = gripper.get_joint("left"), gripper.get_joint("right")
    assert left.position() == pytest.approx(0.03, abs=1e-3)
    assert right.position() == pytest.approx(left.position(), abs=1e-9)
    assert right.position_target() == 0.01
    warnings = [r.getMessage() for r in caplog.records if "mimic joint" in r.getMessage()]
    assert warnings == ["[gripper::right] a mimic joint follows its leader 'left': its targets are kept but its controller applies nothing"]
