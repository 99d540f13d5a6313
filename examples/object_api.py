"""A ScenarIO client of the object API (``jaxsim_like.api``), written the way gym-ignition users
write theirs: a port is a change of imports.

It uses ScenarIO's documented idioms: each method that "Returns: True for success, false
otherwise" is checked with ``assert`` (and an expected failure with ``assert not``); the default
world has no physics, so the time does not flow until ``set_physics_engine``; getters return
tuples, which compare with ``==``. A quadruped is dropped on a ground plane next to a static step,
stands under position PIDs, is pushed for 0.2 s, and its feet report their contacts.

    python examples/object_api.py [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np

from jaxsim_like import api as scenario_gazebo  # was: from scenario import gazebo as scenario_gazebo
from jaxsim_like import models

STEP = """<?xml version="1.0" ?>
<sdf version="1.7">
  <model name="step">
    <static>true</static>
    <pose>1.0 0 0.05 0 0 0</pose>
    <link name="link">
      <collision name="collision"><geometry><box><size>0.5 1.0 0.1</size></box></geometry></collision>
    </link>
  </model>
</sdf>
"""


def run(quick: bool = False, verbose: bool = True) -> dict:
    """The client; returns the figures it reached."""
    scenario_gazebo.set_verbosity(scenario_gazebo.Verbosity_warning)
    gazebo = scenario_gazebo.GazeboSimulator(step_size=0.001, rtf=float("inf"), steps_per_run=10)
    assert gazebo.insert_world_from_sdf("")  # the default empty world: no ground plane, no physics
    assert gazebo.initialize()
    world = gazebo.get_world()

    pose = scenario_gazebo.Pose((0.0, 0.0, 0.5), (1.0, 0.0, 0.0, 0.0))
    assert world.insert_model(scenario_gazebo.get_ground_plane())
    assert world.insert_model_from_string(STEP)
    assert world.insert_model(models.path("quadruped"), pose, "dog")
    dog = world.get_model("dog")
    assert dog.base_position() == pose.position and dog.base_orientation() == pose.orientation

    # Failures return False and log the reason (silenced here: they are expected).
    scenario_gazebo.set_verbosity(scenario_gazebo.Verbosity_suppress_all)
    assert not world.insert_model(models.path("quadruped"), pose, "dog")  # the name is taken
    assert not world.insert_model("/no/such/robot.urdf")
    assert not dog.set_joint_position_targets([0.0])  # one value for every joint
    assert world.get_model("cat") is None
    scenario_gazebo.set_verbosity(scenario_gazebo.Verbosity_warning)

    # Without a physics engine, runs do not step: the time does not flow.
    assert gazebo.run() and world.time() == 0.0 and dog.base_position() == pose.position
    assert world.set_physics_engine(scenario_gazebo.PhysicsEngine_dart)

    # Position control at 1 kHz, holding the initial (zero) configuration. A standing quadruped is
    # an inverted pendulum: tilting its trunk by a small angle about its feet lets gravity push it
    # further with m g h = 17.8 kg * 9.81 m/s^2 * 0.42 m = 73 N m per radian, which the stiffness of
    # the joints of its four legs (about 4 kp) must exceed. ScenarIO's default PID(1, 0.1, 0.01)
    # gives 4 N m/rad, and the dog topples within a second; kp = 80 gives four times gravity's
    # stiffness (kp = 10 topples in 3 s, 20 barely holds) and kd = 2 damps the legs. The period
    # makes the PIDs update every step: without it they compute one command and hold it.
    assert dog.set_controller_period(gazebo.step_size())
    for joint in dog.joints():
        assert joint.set_pid(scenario_gazebo.PID(80, 0, 2))
    assert dog.set_joint_control_mode(scenario_gazebo.JointControlMode_position)
    assert dog.enable_contacts(True)

    runs = 50 if quick else 150
    for _ in range(runs):
        assert gazebo.run()
    standing = dog.base_position()
    feet = dog.links_in_contact()
    if verbose:
        print(f"t = {world.time():.2f} s: base at {np.round(standing, 3)}, links in contact {feet}")
        for contact in dog.contacts():
            force = np.sum([point.force for point in contact.points], axis=0)
            print(f"  {contact.body_a} touches {contact.body_b} at {len(contact.points)} point(s), force {np.round(force, 1)} N")

    # A push of 60 N along x for exactly 0.2 s of simulated time.
    base = dog.get_link(dog.base_frame())
    assert base.apply_world_force((60.0, 0.0, 0.0), duration=0.2)
    for _ in range(runs):
        assert gazebo.run()
    pushed = dog.base_position()
    if verbose:
        print(f"t = {world.time():.2f} s: base at {np.round(pushed, 3)}, velocity {np.round(base.world_linear_velocity(), 3)}")

    # Resets are applied by the next run, paused or not; a paused run does not advance the time.
    time_before = world.time()
    assert dog.reset_base_pose(pose.position, pose.orientation) and dog.reset_base_world_velocity()
    assert gazebo.run(paused=True) and world.time() == time_before and dog.base_position() == pose.position
    assert gazebo.close()
    return {
        "time_s": time_before,
        "standing_height_m": standing[2],
        "feet_in_contact": len(feet),
        "pushed_m": pushed[0] - standing[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    figures = run(parser.parse_args(argv).quick)
    print({name: round(value, 4) for name, value in figures.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
