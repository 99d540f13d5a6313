"""Contacts: a cube on the ground plane, static boxes as obstacles, the world file's models
(ScenarIO's test_contacts behaviour: one contact per touched body, scoped names, the contact
wrench as the sum over the points)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like import api

from .helpers import ASSETS, FREE_BOX, approx


def static_box_sdf(name: str, link: str, pose: str, size: str) -> str:
    """A static model of one box collision (an obstacle)."""
    return f"""<?xml version="1.0" ?>
<sdf version="1.7">
  <model name="{name}">
    <static>true</static>
    <pose>{pose}</pose>
    <link name="{link}">
      <collision name="collision"><geometry><box><size>{size}</size></box></geometry></collision>
    </link>
  </model>
</sdf>
"""


STEP = static_box_sdf("step", "link", "0.6 0 0.1 0 0 0", "0.4 0.4 0.2")


def test_a_cube_falling_on_the_ground(make_world):
    sim, world = make_world(ground=True)
    assert world.model_names() == ("ground_plane",)
    assert world.insert_model(str(FREE_BOX), api.Pose([0, 0, 0.1], [1, 0, 0, 0]), "cube")  # 5 cm above the ground
    cube = world.get_model("cube")
    link = cube.get_link("box")
    assert not cube.contacts_enabled()
    assert cube.enable_contacts(enable=True) and cube.contacts_enabled()
    sim.run(paused=True)
    assert not link.in_contact() and cube.contacts() == ()

    for _ in range(1000):
        sim.run()
    assert link.in_contact() and cube.links_in_contact() == ("box",)
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
    assert link.contacts() == () and link.contact_wrench() == (0.0,) * 6


def test_static_boxes_are_obstacles_in_a_world_file():
    sim = api.Simulator(step_size=0.001, rtf=float("inf"))
    assert sim.insert_world_from_sdf(ASSETS / "world.sdf")
    assert sim.initialize()
    world = sim.get_world()
    assert world.set_physics_engine(api.PhysicsEngine_dart)  # the file has a <physics> profile, no physics plugin
    assert world.model_names() == ("ground_plane", "free_box", "sphere")
    assert approx(world.gravity(), [0, 0, -9.81], 0)
    assert world.insert_model_from_string(STEP)  # under the sphere, which rests on its top face
    # The static boxes are shapes of one more model of the step's world, welded, met through the
    # pairs (jaxsim_like.simulation.scenery): the models' terrain is the ground, a box's slots its 4.
    assert world._entries["free_box"].params.contact_slots == (4,)
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
    assert not static.get_link("link").apply_world_force([0, 0, 1])  # a static model
    # Moving the step moves the obstacle (no recompilation: the terrain is traced).
    assert static.reset_base_position([0.6, 0, 0.05])
    for _ in range(300):
        sim.run()
    assert sphere.base_position()[2] == pytest.approx(0.25, abs=0.02)


# Two links on vertical axes (gravity does not move them): the 2 cm sphere at the tip of link2
# swings into the box of the base, its grandparent, 0.5 m from joint2 at 60 degrees.
SWINGING_ARM = """<robot name="swinging_arm">
  <link name="world"/><joint name="weld" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 1"/></joint>
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.45 0.4330127 0"/><geometry><box size="0.1 0.1 0.2"/></geometry></collision></link>
  <link name="link1"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.001" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="link2"><inertial><origin xyz="0.25 0 0"/><mass value="0.5"/>
    <inertia ixx="1.3e-4" iyy="0.0105" izz="0.0105" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.02"/></geometry></collision></link>
  <joint name="joint1" type="continuous"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/></joint>
  <joint name="joint2" type="continuous"><parent link="link1"/><child link="link2"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/></joint>
</robot>"""


def test_self_collisions_stop_a_swinging_link_unless_the_srdf_disables_the_pair(make_world):
    """With self-collisions on, the tip bounces off the base's box (joint2 back below 0.9 rad
    after 0.4 s); an SRDF loaded afterwards that disables (link2, base) lets it pass (1.3 rad)."""
    sim, world = make_world(steps_per_run=100)
    assert world.insert_model_from_string(SWINGING_ARM)
    arm = world.get_model("swinging_arm")
    assert not arm.self_collisions_enabled()
    assert arm.enable_self_collisions(True) and arm.self_collisions_enabled()

    def swing() -> float:
        assert arm.reset_joint_positions([0.0, 0.8]) and arm.reset_joint_velocities([0.0, 2.0])
        for _ in range(4):
            assert sim.run()
        return float(arm.joint_positions()[1])

    assert swing() < 0.9
    srdf = '<robot name="swinging_arm"><disable_collisions link1="link2" link2="base" reason="Never"/></robot>'
    assert arm.load_srdf(srdf) and arm.self_collisions_enabled()
    assert swing() > 1.25
    assert arm.enable_self_collisions(False) and not arm.self_collisions_enabled()


def cube_sdf(name: str) -> str:
    """A free 5 kg cube of 0.2 m."""
    return f"""<?xml version="1.0" ?><sdf version="1.7"><model name="{name}"><link name="box">
      <inertial><mass>5</mass><inertia><ixx>0.0333</ixx><iyy>0.0333</iyy><izz>0.0333</izz></inertia></inertial>
      <collision name="collision"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
    </link></model></sdf>"""


def test_a_cube_dropped_on_two_cubes_touches_both(make_world):
    """ScenarIO's multiple-contact scenario: a cube dropped across two cubes on the ground rests on
    both; each contact names the other model's link, with the normal into the reporting link and
    the force that statics predicts."""
    sim, world = make_world(ground=True, steps_per_run=10)
    for name, position in (("left", [-0.1005, 0, 0.1]), ("right", [0.1005, 0, 0.1]), ("top", [0, 0, 0.35])):
        assert world.insert_model_from_string(cube_sdf(name), api.Pose(position, [1, 0, 0, 0]))
        world.get_model(name).enable_contacts()
    top, left = world.get_model("top"), world.get_model("left")
    for _ in range(100):
        assert sim.run()
    assert top.get_link("box").in_contact()
    contacts = {contact.body_b: contact for contact in top.contacts()}
    assert set(contacts) == {"left::box", "right::box"}
    weight = 5 * 9.81
    for contact in contacts.values():
        assert contact.body_a == "top::box" and len(contact.points) == 4
        assert sum(point.force[2] for point in contact.points) == pytest.approx(weight / 2, rel=0.01)
        # Face on face: the face normal to 1e-3 (issue 32; gym-ignition's test_contacts).
        assert all(np.abs(np.asarray(point.normal) - [0, 0, 1]).max() < 1e-3 and 0 < point.depth < 0.002 for point in contact.points)
    assert approx(top.get_link("box").contact_wrench()[:3], [0, 0, weight], 0.01 * weight)
    below = {contact.body_b: contact for contact in left.contacts()}
    assert set(below) == {"ground_plane::link", "top::box"}
    assert sum(point.force[2] for point in below["top::box"].points) == pytest.approx(-weight / 2, rel=0.01)
    assert sum(point.force[2] for point in below["ground_plane::link"].points) == pytest.approx(1.5 * weight, rel=0.01)


TABLE = static_box_sdf("table", "top", "0 0 0.35 0 0 0", "0.8 0.6 0.1")


def test_a_cube_over_a_static_tables_edge_rests_on_it(make_world):
    """A 5 kg cube (0.2 m) on a static table, 5 cm of it past the table's edge, its centre over the
    top: it stays where it was put (met through the bodies' points alone, the table's edge under
    its face was no contact and it tipped over it), and its one contact names the table's link,
    carrying its weight."""
    sim, world = make_world(ground=True, steps_per_run=10)
    assert world.insert_model_from_string(TABLE)
    assert world.insert_model_from_string(cube_sdf("cube"), api.Pose([0.4 + 0.05 - 0.1, 0, 0.4995], [1, 0, 0, 0]))
    cube = world.get_model("cube")
    cube.enable_contacts()
    for _ in range(100):  # 1 s
        assert sim.run()
    assert approx(cube.base_position(), [0.35, 0, 0.5], 5e-4)  # the top at z = 0.4, its edge at x = 0.4
    assert max(np.abs(cube.base_world_linear_velocity()).max(), np.abs(cube.base_world_angular_velocity()).max()) < 1e-6
    assert approx(cube.base_orientation(), [1, 0, 0, 0], 1e-3)
    (contact,) = cube.contacts()
    assert contact.body_b == "table::top"
    assert sum(point.force[2] for point in contact.points) == pytest.approx(5 * 9.81, rel=0.005)
