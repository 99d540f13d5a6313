"""Mocap bodies in the object API (issue 30, an extension: ScenarIO has none): a box welded to a
mocap body follows it where ``Model.set_mocap_pose`` puts it, without recompiling."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like import api

from .helpers import simulator

pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

QUIET = 'contype="0" conaffinity="0"'
XML = f"""<mujoco model="carried"><worldbody>
  <body name="hand" mocap="true" pos="0.3 0 1" quat="0.9 0 0.1 0.2"><geom type="sphere" size="0.02" {QUIET}/></body>
  <body name="box" pos="0.3 0.02 0.9" euler="0.1 0.2 0"><freejoint/><geom type="box" size="0.05 0.04 0.03" mass="0.5" {QUIET}/></body>
</worldbody><equality><weld body1="box" body2="hand" solref="0.002 1" solimp="0.9999 0.9999 0.001"/></equality></mujoco>"""
MOVE = np.array([0.05, -0.1, 0.2])


def test_a_box_welded_to_a_mocap_body_follows_where_it_is_put(caplog):
    """Moved by ``MOVE`` (orientation kept), the hand carries the box there within 0.3 s: the
    box's pose is its pose in the file shifted by ``MOVE``, as the stiff weld (a ``solimp`` of
    nearly one) holds it under gravity (MuJoCo's default ``solimp`` lets it sag by 6.6e-5 m)."""
    sim = simulator(step_size=0.001, steps_per_run=300)
    world = sim.get_world()
    assert world.insert_model_from_string(XML, api.Pose((0, 0, 0)), "carried")
    model = world.get_model("carried")
    assert model.mocap_body_names() == ("hand",)
    hand = np.array(model.mocap_pose("hand"))
    np.testing.assert_allclose(hand, np.r_[0.3, 0.0, 1.0, np.array([0.9, 0.0, 0.1, 0.2]) / np.linalg.norm([0.9, 0.1, 0.2])], atol=1e-15)
    start, orientation = np.array(model.base_position()), np.array(model.base_orientation())
    assert model.set_mocap_pose("hand", hand[:3] + MOVE, hand[3:])
    np.testing.assert_allclose(model.mocap_pose("hand")[:3], hand[:3] + MOVE, rtol=0, atol=1e-15)
    assert sim.run()
    np.testing.assert_allclose(model.base_position(), start + MOVE, rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.abs(np.dot(model.base_orientation(), orientation)), 1.0, rtol=0, atol=1e-10)
    assert not model.set_mocap_pose("wrist", hand[:3])
    assert "holds on no mocap body 'wrist'" in caplog.text
