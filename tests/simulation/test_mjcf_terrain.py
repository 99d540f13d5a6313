"""An MJCF file's static geometry as the terrain (``load_world(...).terrain``, ``Terrain.of``): a
floor off z = 0, a table that is a box of the world body and a wall that is a tilted plane hold
the bodies where MuJoCo holds them."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.loading import ContactSampling
from jaxsim_like.parsers import ModelLoadWarning, parse_mjcf_world
from jaxsim_like.parsers.mjcf_terrain import WALL_HALF_EXTENTS
from jaxsim_like.simulation import Terrain
from jaxsim_like.simulation.world import WorldModel, world_rollout

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

SCENE = """<mujoco model="room">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" pos="0 0 -0.05"/>
    <geom name="table" type="box" size="0.3 0.3 0.02" pos="0 0 0.5" euler="0 0 30"/>
    <geom name="wall" type="plane" size="1 1 0.1" pos="0.8 0 0" zaxis="-1 0 0"/>
    <body name="on_table" pos="0 0 0.7"><freejoint/><geom type="box" size="0.05 0.05 0.05" mass="0.5"/></body>
    <body name="on_floor" pos="0.55 -0.4 0.3"><freejoint/><geom type="box" size="0.05 0.05 0.05" mass="0.5"/></body>
    <body name="thrown" pos="0.5 0.4 0.0"><freejoint/><geom size="0.05" mass="0.5"/></body>
  </worldbody>
</mujoco>"""
SECONDS = 1.0
THROW = 1.0  # [m/s]: the ball's start, along x towards the wall


def test_the_terrain_description_has_the_floor_the_table_and_the_wall():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelLoadWarning)  # everything in the scene is represented
        terrain = parse_mjcf_world(SCENE).terrain
    assert terrain.box_names == ("table", "wall")
    np.testing.assert_allclose(terrain.ground_point, [0.0, 0.0, -0.05])
    np.testing.assert_allclose(terrain.box_half_extents, [[0.3, 0.3, 0.02], WALL_HALF_EXTENTS])
    wall = terrain.box_transforms[1]
    np.testing.assert_allclose(wall[:3, 2], [-1.0, 0.0, 0.0], atol=1e-12)  # the box's z: the plane's normal
    np.testing.assert_allclose(wall[:3, 3], [0.8 + WALL_HALF_EXTENTS[2], 0.0, 0.0], atol=1e-12)  # its face is the plane
    built = Terrain.of(terrain)
    assert float(built.plane_offset) == pytest.approx(-0.05) and built.box_transforms.shape == (2, 4, 4)
    assert float(Terrain.of(None).plane_offset) == 0.0


def test_bodies_rest_on_the_table_and_the_floor_and_stop_at_the_wall_as_in_mujoco(figures):
    m = mujoco.MjModel.from_xml_string(SCENE)
    d = mujoco.MjData(m)
    thrown = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "thrown")
    d.qvel[m.jnt_dofadr[m.body_jntadr[thrown]]] = THROW
    steps = int(round(SECONDS / m.opt.timestep))
    for _ in range(steps):
        mujoco.mj_step(m, d)
    theirs = {name: np.array(d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)]) for name in ("on_table", "on_floor", "thrown")}

    description = parse_mjcf_world(SCENE)
    models = [build_model(x, collidable_points=ContactSampling().points) for x in description.models]
    # The three bodies never touch each other (no pairs): only the terrain holds them.
    world = WorldModel.build(models, dt=float(m.opt.timestep), gravity=description.gravity, terrain=Terrain.of(description.terrain), collisions=False)
    states = [js.State.build(model, base_velocity=[THROW, 0, 0, 0, 0, 0] if model.name == "thrown" else None) for model in models]
    final = jax.jit(lambda s: world_rollout(world, s, None, steps)[0])(world.initial_state(states))
    ours = {model.name: np.asarray(state.base_position) for model, state in zip(models, final.states)}
    for name in ours:
        figures(f"MJCF terrain, {SECONDS:g} s vs mj_step: {name} distance", float(np.linalg.norm(ours[name] - theirs[name])), "m")
    assert ours["on_table"][2] == pytest.approx(0.52 + 0.05, abs=1.5e-3) and theirs["on_table"][2] == pytest.approx(0.57, abs=1e-3)
    assert ours["on_floor"][2] == pytest.approx(-0.05 + 0.05, abs=1.5e-3) and theirs["on_floor"][2] == pytest.approx(0.0, abs=1e-3)
    assert ours["thrown"][0] < 0.8 - 0.05 + 1.5e-3 and theirs["thrown"][0] < 0.8 - 0.05 + 1e-3  # the wall stops the ball
    assert abs(ours["on_table"][0]) < 1e-3 and abs(ours["on_table"][1]) < 1e-3
