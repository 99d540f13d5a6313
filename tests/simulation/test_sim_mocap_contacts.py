"""The colliding geoms of MJCF mocap bodies (issue 30): a mocap body whose geoms collide is a model
of the world of its own, one link fixed at the pose its state's base pose sets (a kinematic
body, at rest for the contacts, as MuJoCo takes a mocap body's velocity); it touches the other
models through the collision table.

A mocap paddle moving at 0.2 m/s pushes a free box along the floor as MuJoCo's ``mj_step`` does
with the same ``mocap_pos`` sequence (float64, 1 ms, 1 s). One compiled run, MuJoCo the same file.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.loading import ContactSampling
from jaxsim_like.simulation.world import WorldModel, world_step

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

PADDLE = """<mujoco model="paddle">
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/>
    </body>
    <body name="paddle" mocap="true" pos="-0.15 0 0.08">
      <geom type="box" size="0.02 0.15 0.05"/>
    </body>
  </worldbody>
</mujoco>"""
DT, STEPS, SPEED = 0.001, 1000, 0.2
START = np.array([-0.15, 0.0, 0.08])


def _paddle_positions() -> np.ndarray:
    """``(T, 3)``: the paddle's position at the start of each step [m]."""
    return START + SPEED * DT * np.arange(STEPS)[:, None] * np.array([1.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def pushed() -> tuple[np.ndarray, np.ndarray]:
    """The box's position after each step ``(T, 3)``, ours and MuJoCo's."""
    description = js.load_world(PADDLE)
    models = [build_model(d, collidable_points=ContactSampling().points) for d in description.models]
    world = WorldModel.build(models, dt=DT, gravity=description.gravity, max_penetration=3e-4)

    @jax.jit
    def run(state, positions):
        def one(current, position):
            paddle = current.states[1].replace(base_position=position)
            following, _ = world_step(world, current._replace(states=(current.states[0], paddle)))
            return following, following.states[0].base_position

        return jax.lax.scan(one, state, positions)[1]

    ours = np.asarray(run(world.initial_state(), jnp.asarray(_paddle_positions())))
    m = mujoco.MjModel.from_xml_string(PADDLE)
    m.opt.timestep = DT
    data = mujoco.MjData(m)
    theirs = np.zeros((STEPS, 3))
    for k, position in enumerate(_paddle_positions()):
        data.mocap_pos[0] = position
        mujoco.mj_step(m, data)
        theirs[k] = data.qpos[:3]
    return ours, theirs


def test_a_colliding_mocap_body_is_a_fixed_model_of_the_world():
    description = js.load_world(PADDLE)
    assert [(m.name, m.fixed_to_world) for m in description.models] == [("box", False), ("paddle", True)]
    np.testing.assert_array_equal(description.models[1].M_H_root[:3, 3], START)
    assert [c.geometry.size for c in description.models[1].links[0].collisions] == [pytest.approx((0.04, 0.3, 0.1))]
    with pytest.warns(js.ModelLoadWarning, match="the file has 2 trees \\('box', 'paddle'\\)"):
        js.parsers.parse_mjcf(PADDLE)
    quiet = PADDLE.replace('<geom type="box" size="0.02 0.15 0.05"/>', '<geom type="box" size="0.02 0.15 0.05" contype="0" conaffinity="0"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [m.name for m in js.load_world(quiet).models] == ["box"]


def test_a_mocap_paddle_pushes_a_box_as_in_mujoco(pushed, figures):
    """The box is pushed along x by the paddle (0.16 m in MuJoCo over the last 0.85 s) and stays
    within 5 mm of MuJoCo's: how far it lags behind the paddle is each contact law's (the paddle
    at rest for the contact's damping, in both); it neither turns nor leaves the floor."""
    ours, theirs = pushed
    lag = figures("mocap paddle: box x from MuJoCo's at 1 s [m]", float(ours[-1, 0] - theirs[-1, 0]))
    figures("mocap paddle: max |box - MuJoCo's box| over 1 s [m]", float(np.abs(ours - theirs).max()))
    assert theirs[-1, 0] > 0.15 and ours[-1, 0] > 0.15
    assert np.abs(ours - theirs).max() < 5e-3 and abs(lag) < 5e-3
    assert np.abs(ours[:, 1]).max() < 1e-9 and np.abs(ours[:, 2] - 0.1).max() < 1e-3
