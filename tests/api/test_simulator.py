"""Simulator lifecycle, worlds, paused runs and real-time pacing (ScenarIO's test_gazebo_simulator)."""

from __future__ import annotations

import time

import pytest

from jaxsim_like import api

from .helpers import simulator

TWO_WORLDS = """<?xml version="1.0" ?>
<sdf version="1.7">
  <world name="earth"><gravity>0 0 -9.81</gravity></world>
  <world name="moon"><gravity>0 0 -1.62</gravity></world>
</sdf>
"""


@pytest.mark.parametrize("settings", [(0.0, 1.0, 1), (0.001, 0.0, 1), (0.001, -1.0, 1), (0.001, 1.0, 0)])
def test_invalid_settings_do_not_initialize(settings, caplog):
    """GazeboSimulator.initialize and run: "Returns: True for success, false otherwise."."""
    sim = api.Simulator(*settings)
    assert not sim.initialize()
    assert "must be positive" in caplog.records[-1].getMessage() and caplog.records[-1].levelname == "ERROR"
    assert not sim.initialized()
    assert not sim.run()
    assert "call initialize() first" in caplog.records[-1].getMessage()


def test_lifecycle_and_default_world(caplog):
    """GazeboSimulator.insert_world_from_sdf: "This function can only be used while the simulator
    object is uninitialized" and "Returns: True for success, false otherwise"; get_world:
    "Get a simulated world" (None, logged, for an unknown name)."""
    sim = api.Simulator(step_size=0.001, rtf=float("inf"), steps_per_run=1)
    assert (sim.step_size(), sim.real_time_factor(), sim.steps_per_run()) == (0.001, float("inf"), 1)
    assert sim.get_world() is None
    assert sim.initialize() and sim.initialized() and sim.initialize()
    assert sim.world_names() == ("default",)
    world = sim.get_world()
    assert world is sim.get_world("default") and world.name() == "default" and world.id() != 0
    assert world.model_names() == () and world.time() == 0.0
    assert world.set_physics_engine(api.PhysicsEngine_dart)
    assert not sim.running() and sim.pause()
    assert sim.run(paused=True) and world.time() == 0.0
    assert sim.run() and world.time() == 0.001
    assert sim.run() and world.time() == 0.002
    assert not sim.insert_world_from_sdf("")
    assert "only be inserted before initialize" in caplog.records[-1].getMessage()
    assert sim.get_world("mars") is None
    assert "no world 'mars'" in caplog.records[-1].getMessage()
    assert sim.close() and not world.valid()
    assert not sim.run() and not sim.initialize()
    assert "closed" in caplog.records[-1].getMessage()


def test_steps_per_run():
    sim = simulator(step_size=0.002, steps_per_run=5)
    world = sim.get_world()
    sim.run()
    assert world.time() == pytest.approx(0.01)
    sim.run(paused=True)
    assert world.time() == pytest.approx(0.01)


def test_world_renaming_and_several_worlds(tmp_path, caplog):
    """GazeboSimulator.insert_worlds_from_sdf: "worldNames (Tuple[string], optional) - Optionally
    override the names of the worlds"; "Returns: True for success, false otherwise" (a wrong
    number of names, a duplicate name, a missing file)."""
    sim = api.Simulator(rtf=float("inf"))
    assert sim.insert_world_from_sdf("", "myWorld")
    assert not sim.insert_world_from_sdf("", "myWorld")  # a world name already inserted
    assert sim.initialize() and sim.world_names() == ("myWorld",) and sim.get_world().name() == "myWorld"

    file = tmp_path / "worlds.sdf"
    file.write_text(TWO_WORLDS)
    sim = api.Simulator(rtf=float("inf"))
    assert sim.insert_worlds_from_sdf(str(file), ["terra", "luna"])
    assert sim.initialize() and sim.world_names() == ("terra", "luna")
    assert sim.get_world("luna").gravity() == (0, 0, -1.62)
    assert sim.get_world("terra").set_physics_engine() and sim.get_world("luna").set_physics_engine()
    sim.run()
    assert sim.get_world("terra").time() == sim.get_world("luna").time() == 0.001

    sim = api.Simulator(rtf=float("inf"))
    assert not sim.insert_worlds_from_sdf(str(file), ["one"])
    assert "1 world names given for 2 worlds" in caplog.records[-1].getMessage()
    assert not sim.insert_worlds_from_sdf(str(file), ["twin", "twin"])
    assert not sim.insert_worlds_from_sdf(str(tmp_path / "missing.sdf"))
    assert sim.insert_worlds_from_sdf(str(file)) and sim.initialize() and sim.world_names() == ("earth", "moon")


def test_a_finite_rtf_paces_the_runs():
    sim = api.Simulator(step_size=0.01, rtf=2.0, steps_per_run=2)
    assert sim.initialize() and sim.get_world().set_physics_engine(api.PhysicsEngine_dart)
    start = time.perf_counter()
    for _ in range(10):
        sim.run()
    elapsed = time.perf_counter() - start
    assert sim.get_world().time() == pytest.approx(0.2)
    assert 0.1 <= elapsed < 0.5  # 0.2 s of simulated time at twice the real time

    fast = simulator(step_size=0.01, steps_per_run=2)
    start = time.perf_counter()
    for _ in range(10):
        fast.run()
    assert time.perf_counter() - start < 0.05
