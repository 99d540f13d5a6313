"""Simulator lifecycle, worlds, paused runs and real-time pacing (ScenarIO's test_gazebo_simulator)."""

from __future__ import annotations

import time

import numpy as np
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
def test_invalid_settings_do_not_initialize(settings):
    sim = api.Simulator(*settings)
    with pytest.raises(api.SimulatorError, match="must be positive"):
        sim.initialize()
    assert not sim.initialized()
    with pytest.raises(api.SimulatorError, match="before initialize"):
        sim.run()


def test_lifecycle_and_default_world():
    sim = api.Simulator(step_size=0.001, rtf=float("inf"), steps_per_run=1)
    assert (sim.step_size(), sim.real_time_factor(), sim.steps_per_run()) == (0.001, float("inf"), 1)
    with pytest.raises(api.SimulatorError, match="before initialize"):
        sim.get_world()
    assert sim.initialize() and sim.initialized() and sim.initialize()
    assert sim.world_names() == ["default"]
    world = sim.get_world()
    assert world is sim.get_world("default") and world.name() == "default" and world.id() != 0
    assert world.model_names() == [] and world.time() == 0.0
    assert not sim.running() and sim.pause()
    assert sim.run(paused=True) and world.time() == 0.0
    assert sim.run() and world.time() == 0.001
    assert sim.run() and world.time() == 0.002
    with pytest.raises(api.SimulatorError, match="before initialize"):
        sim.insert_world_from_sdf("")
    with pytest.raises(api.WorldError, match="no such world"):
        sim.get_world("mars")
    assert sim.close() and not world.valid()
    with pytest.raises(api.SimulatorError, match="closed"):
        sim.run()


def test_steps_per_run():
    sim = simulator(step_size=0.002, steps_per_run=5)
    world = sim.get_world()
    sim.run()
    assert world.time() == pytest.approx(0.01)
    sim.run(paused=True)
    assert world.time() == pytest.approx(0.01)


def test_world_renaming_and_several_worlds(tmp_path):
    sim = api.Simulator(rtf=float("inf"))
    assert sim.insert_world_from_sdf("", "myWorld")
    assert sim.initialize() and sim.world_names() == ["myWorld"] and sim.get_world().name() == "myWorld"

    file = tmp_path / "worlds.sdf"
    file.write_text(TWO_WORLDS)
    sim = api.Simulator(rtf=float("inf"))
    assert sim.insert_worlds_from_sdf(str(file), ["terra", "luna"])
    assert sim.initialize() and sim.world_names() == ["terra", "luna"]
    assert np.allclose(sim.get_world("luna").gravity(), [0, 0, -1.62])
    sim.run()
    assert sim.get_world("terra").time() == sim.get_world("luna").time() == 0.001

    sim = api.Simulator(rtf=float("inf"))
    with pytest.raises(api.SimulatorError, match="1 world names given for 2 worlds"):
        sim.insert_worlds_from_sdf(str(file), ["one"])
    assert sim.insert_worlds_from_sdf(str(file)) and sim.initialize() and sim.world_names() == ["earth", "moon"]


def test_a_finite_rtf_paces_the_runs():
    sim = api.Simulator(step_size=0.01, rtf=2.0, steps_per_run=2)
    sim.initialize()
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
