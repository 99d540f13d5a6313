"""A tour of the ScenarIO-style object API (``jaxsim_like.api``), for gym-ignition users.

A quadruped is dropped on a ground plane next to a static step, stands up under position PIDs,
gets a push for 0.2 s, and its feet report their contacts; then the simulator is paced to real
time for a second. See docs/object_api.md for every method and the differences from ScenarIO.

    python examples/object_api.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from jaxsim_like import api, models

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


def main(quick: bool = False) -> None:
    api.set_verbosity(api.Verbosity_warning)
    simulator = api.Simulator(step_size=0.001, rtf=float("inf"), steps_per_run=10)
    assert simulator.initialize()
    world = simulator.get_world()

    # The default world is empty: add a ground plane and a step (static models are terrain).
    assert world.insert_model(api.get_ground_plane())
    assert world.insert_model_from_string(STEP)
    assert world.insert_model(models.path("quadruped"), api.Pose([0, 0, 0.5]), "dog")
    dog = world.get_model("dog")
    print(f"{dog.name()}: {dog.nr_of_links()} links, {dog.dofs()} joints, {dog.total_mass():.2f} kg, base '{dog.base_frame()}'")

    # Position control at 1 kHz, holding the initial (zero) configuration.
    assert dog.set_controller_period(simulator.step_size())
    for joint in dog.joints():
        assert joint.set_pid(api.PID(80, 0, 2))
    assert dog.set_joint_control_mode(api.JointControlMode_position)
    assert dog.enable_contacts(True)

    runs = 50 if quick else 150
    for _ in range(runs):
        assert simulator.run()
    print(f"t = {world.time():.2f} s: base at {np.round(dog.base_position(), 3)}, links in contact {dog.links_in_contact()}")
    for contact in dog.contacts():
        force = sum(point.force for point in contact.points)
        print(f"  {contact.body_a} touches {contact.body_b} at {len(contact.points)} point(s), force {np.round(force, 1)} N")

    # A push of 60 N along x for exactly 0.2 s of simulated time.
    base = dog.get_link(dog.base_frame())
    assert base.apply_world_force([60.0, 0.0, 0.0], duration=0.2)
    for _ in range(runs):
        assert simulator.run()
    print(f"t = {world.time():.2f} s: base at {np.round(dog.base_position(), 3)}, velocity {np.round(base.world_linear_velocity(), 3)}")

    # Resets are applied by the next run, paused or not; a paused run does not advance time.
    assert dog.reset_base_pose([0, 0, 0.5], [1, 0, 0, 0]) and dog.reset_base_world_velocity()
    assert simulator.run(paused=True)
    print(f"after a reset and a paused run: t = {world.time():.2f} s, base at {np.round(dog.base_position(), 3)}")

    # A finite real-time factor paces the runs to the wall clock.
    paced = api.Simulator(step_size=0.001, rtf=1.0, steps_per_run=10)
    assert paced.initialize()
    start = time.perf_counter()
    for _ in range(10 if quick else 100):
        paced.run()
    print(f"paced: {paced.get_world().time():.2f} s simulated in {time.perf_counter() - start:.2f} s of wall time")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    main(parser.parse_args().quick)
