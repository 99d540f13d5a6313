"""The pair budget in the object API: a run whose overlapping pairs of links exceed a pair
kind's budget logs one warning naming the kind and its budget, and one whose touching slots
exceed the touching budget logs one warning (issue 29)."""

from __future__ import annotations

import logging
import math

from jaxsim_like import api

from .helpers import simulator

CUBE = """<?xml version="1.0" ?>
<sdf version="1.7"><model name="{name}"><link name="box">
  <inertial><mass>1</mass><inertia><ixx>0.0067</ixx><iyy>0.0067</iyy><izz>0.0067</izz></inertia></inertial>
  <collision name="collision"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
</link></model></sdf>"""


def test_an_overflowing_pair_budget_is_reported_once_per_kind(caplog):
    """Three cubes turned 45 degrees about z in a row along the diagonal on the ground: two
    neighbouring pairs overlap (their bounding spheres and world boxes; the cubes 8 cm apart), a
    budget of one box-box pair holds one of them; three runs warn once."""
    sim = simulator(steps_per_run=5)
    world = sim.get_world()
    assert world.insert_model(api.get_ground_plane())
    turned = [math.cos(math.pi / 8), 0.0, 0.0, math.sin(math.pi / 8)]
    for name, x in (("left", -0.2), ("middle", 0.0), ("right", 0.2)):
        assert world.insert_model_from_string(CUBE.format(name=name), api.Pose([x, x, 0.1], turned))
    with caplog.at_level(logging.WARNING, logger="jaxsim_like.api"):
        assert not world.set_physics_engine(api.PhysicsEngine_dart, pair_budget={"cube-cube": 1})
        assert "pair_budget: budget names unknown pair kinds ['cube-cube']" in caplog.records[-1].getMessage()
        assert world.set_physics_engine(api.PhysicsEngine_dart, pair_budget=1)
        for _ in range(3):
            assert sim.run()
    warnings = [record.getMessage() for record in caplog.records if "pair budget" in record.getMessage()]
    assert len(warnings) == 1, warnings
    assert "box-box contacts (1 candidate pairs a step) left 1 overlapping pairs untested" in warnings[0]
    assert "pair_budget={'box-box': 2}" in warnings[0]


def test_an_overflowing_touching_budget_is_reported_once(caplog):
    """A cube resting on a cube on the ground touches it at its face's corners: a touching budget
    of one slot (of the box-box pair's 8) leaves the others out, and three runs warn once; a
    budget that is not a positive integer is refused."""
    sim = simulator(steps_per_run=10)
    world = sim.get_world()
    assert world.insert_model(api.get_ground_plane())
    for name, z in (("lower", 0.1), ("upper", 0.299)):
        assert world.insert_model_from_string(CUBE.format(name=name), api.Pose([0.0, 0.0, z], [1.0, 0.0, 0.0, 0.0]))
    with caplog.at_level(logging.WARNING, logger="jaxsim_like.api"):
        assert not world.set_physics_engine(api.PhysicsEngine_dart, touching_budget=0)
        assert "touching_budget must be an integer >= 1" in caplog.records[-1].getMessage()
        assert world.set_physics_engine(api.PhysicsEngine_dart, touching_budget=1)
        for _ in range(3):
            assert sim.run()
    warnings = [record.getMessage() for record in caplog.records if "touching budget" in record.getMessage()]
    assert len(warnings) == 1, warnings
    assert "the touching budget (1 contact slots between links a step) left" in warnings[0]
