"""Contacts: a cube on the ground plane, static boxes as obstacles, the world file's models
(ScenarIO's test_contacts behaviour: one contact per touched body, scoped names, the contact
wrench as the sum over the points)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like import api

from .helpers import ASSETS, FREE_BOX, approx

STEP = """<?xml version="1.0" ?>
<sdf version="1.7">
  <model name="step">
    <static>true</static>
    <pose>0.6 0 0.1 0 0 0</pose>
    <link name="link">
      <collision name="collision"><geometry><box><size>0.4 0.4 0.2</size></box></geometry></collision>
    </link>
  </model>
</sdf>
"""


def test_a_cube_falling_on_the_ground(make_world):
    sim, world = make_world(ground=True)
    assert world.model_names() == ["ground_plane"]
    assert world.insert_model(str(FREE_BOX), api.Pose([0, 0, 0.1], [1, 0, 0, 0]), "cube")  # 5 cm above the ground
    cube = world.get_model("cube")
    link = cube.get_link("box")
    assert not cube.contacts_enabled()
    assert cube.enable_contacts(enable=True) and cube.contacts_enabled()
    sim.run(paused=True)
    assert not link.in_contact() and cube.contacts() == []

    for _ in range(1000):
        sim.run()
    assert link.in_contact() and cube.links_in_contact() == ["box"]
    contacts = cube.contacts()
    assert len(contacts) == 1
    contact = contacts[0]
    assert (contact.body_a, contact.body_b) == ("cube::box", "ground_plane::link")
    assert len(contact.points) == 4  # one per bottom corner
    for point in contact.points:
        assert approx(point.normal, [0, 0, 1], 1e-12) and 0 < point.depth < 0.005
        assert abs(abs(point.position[0]) - 0.1) < 1e-3 and abs(abs(point.position[1]) - 0.15) < 1e-3
    weight = cube.total_mass() * -world.gravity()[2]
    assert sum(point.force[2] for point in contact.points) == pytest.approx(weight, abs=0.1)
    assert approx(link.contact_wrench(), [0, 0, weight, 0, 0, 0], 0.1)
    assert approx(link.contact_wrench()[3:], np.zeros(3), 1e-6)

    assert link.enable_contact_detection(False) and not link.contacts_enabled() and not cube.contacts_enabled()
    assert link.contacts() == [] and approx(link.contact_wrench(), np.zeros(6), 0)


def test_static_boxes_are_obstacles_in_a_world_file():
    sim = api.Simulator(step_size=0.001, rtf=float("inf"))
    assert sim.insert_world_from_sdf(ASSETS / "world.sdf")
    assert sim.initialize()
    world = sim.get_world()
    assert world.model_names() == ["ground_plane", "free_box", "sphere"]
    assert approx(world.gravity(), [0, 0, -9.81], 0)
    assert world.insert_model_from_string(STEP)  # under the sphere, which rests on its top face
    box, sphere = world.get_model("free_box"), world.get_model("sphere")
    assert approx(box.base_position(), [0, 0, 0.5], 1e-12) and approx(sphere.base_position(), [0.6, 0, 0.3], 1e-12)
    box.enable_contacts()
    sphere.enable_contacts()
    for _ in range(1000):
        sim.run()
    assert box.base_position()[2] == pytest.approx(0.05, abs=0.006)  # soft contacts sink up to 5 mm
    assert sphere.base_position()[2] == pytest.approx(0.3, abs=0.02)  # on one point: deeper
    assert [c.body_b for c in box.contacts()] == ["ground_plane::link"]
    (contact,) = sphere.contacts()
    assert contact.body_b == "step::link" and len(contact.points) == 1
    assert contact.points[0].force[2] == pytest.approx(9.81 * sphere.total_mass(), abs=0.1)
    static = world.get_model("step")
    assert static.nr_of_joints() == 0 and approx(static.base_position(), [0.6, 0, 0.1], 1e-12)
    with pytest.raises(api.LinkError, match="static model"):
        static.get_link("link").apply_world_force([0, 0, 1])
    # Moving the step moves the obstacle (no recompilation: the terrain is traced).
    assert static.reset_base_position([0.6, 0, 0.05])
    for _ in range(300):
        sim.run()
    assert sphere.base_position()[2] == pytest.approx(0.25, abs=0.02)
