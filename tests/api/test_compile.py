"""One run is one call of a function compiled once per world structure: targets, gains, gravity,
the controller period, resets and getters never compile; the first wrench (or history) compiles
once, wrenches away from a link origin do not; inserting a model does."""

from __future__ import annotations

import numpy as np

from jaxsim_like import api
from jaxsim_like.api import engine

from .helpers import ARM, FREE_BOX, arm_in_position_mode


def compilations() -> tuple[int, int]:
    return engine.run_world._cache_size(), engine.observe._cache_size()


def test_runs_compile_once_per_world_structure(make_world):
    sim, world = make_world((ARM, None, "arm7"))
    arm = arm_in_position_mode(sim, world)
    sim.run()
    before = compilations()

    joint, link = arm.get_joint("joint3"), arm.get_link("link5")
    assert arm.set_joint_position_targets(np.add(arm.joint_positions(), 0.1)) and joint.set_pid(api.PID(50, 1, 2))
    assert world.set_gravity([0, 0, -3.7]) and arm.set_controller_period(0.004)
    assert arm.reset_joint_positions(np.full(7, 0.2)) and sim.run(paused=True) and sim.run()
    assert arm.set_joint_control_mode(api.JointControlMode.force, ["joint3"]) and joint.set_generalized_force_target(2.0)
    assert arm.set_joint_control_mode(api.JointControlMode.velocity, ["joint4"]) and arm.get_joint("joint4").set_velocity_target(0.1)
    assert arm.enable_contacts(True)
    assert joint.set_max_generalized_force(20) and joint.set_position_limits([(-1, 1)]) and joint.set_viscous_friction(0.1)
    for _ in range(20):
        sim.run()
    arm.joint_positions(), joint.history_of_applied_joint_forces(), arm.contacts(), link.world_pose()
    link.world_linear_acceleration(), joint.transmitted_wrench(), link.world_axis_aligned_box()
    assert compilations() == before

    # The first wrench and the first history switch the wrench slots and the recording of
    # commanded forces on: one compilation, then none (lever arms included).
    assert link.apply_world_force([1, 0, 0], duration=0.01) and link.apply_world_wrench([0, 1, 0], [0, 0, 0.1])
    assert arm.enable_history_of_applied_joint_forces(True, 50)
    sim.run()
    assert link.apply_world_force([0, 0, 1.0], duration=0.005)
    assert arm.enable_history_of_applied_joint_forces(False) and joint.enable_history_of_applied_joint_forces(True, 100)
    sim.run()
    assert compilations()[0] == before[0] + 1
    assert link.add_world_force([0, 0, 1.0], position=[0.1, 0, 0])
    sim.run()
    assert link.add_world_force([0, 1.0, 0]) and link.apply_world_wrench_to_co_m([1, 0, 0], [0, 0, 0])
    sim.run()
    assert len(joint.history_of_applied_joint_forces()) == 100 and compilations()[0] == before[0] + 1

    # A new model is a new structure; removing it returns to the compiled one.
    assert world.insert_model(str(FREE_BOX), api.Pose([2, 0, 1]), "box")
    sim.run()
    assert compilations()[0] == before[0] + 2
    assert world.remove_model("box")
    sim.run()
    sim.run()
    assert compilations()[0] == before[0] + 2
