"""Joint springs (MJCF ``stiffness`` towards ``springref``, SDF ``spring_stiffness`` towards
``spring_reference``): a chain of two hinges with springs, its joints' ``ref`` away from zero,
moves as MuJoCo's (the same semi-implicit Euler step: equal to rounding), and the implicit step
holds a stiff spring at a step where the explicit one diverges."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

CHAIN = """<mujoco><compiler angle="radian"/><option timestep="0.001" integrator="Euler"/>
  <worldbody><body name="upper" pos="0 0 1">
    <joint name="shoulder" type="hinge" axis="0 1 0" stiffness="{k1}" springref="0.4" ref="0.1"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
    <body name="lower" pos="0.3 0 0">
      <joint name="elbow" type="hinge" axis="0 1 0" stiffness="3" springref="-0.5"/>
      <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.025" mass="0.5"/>
    </body></body></worldbody></mujoco>"""


@pytest.fixture(scope="module")
def chain():
    xml = CHAIN.format(k1=20)
    return xml, js.load_model(xml)


def test_a_chain_of_springs_moves_as_mujoco(chain):
    xml, model = chain
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0 + [0.3, 0.2]
    steps = 1000
    expected = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        expected.append(d.qpos - m.qpos0)
    params = js.SimulationParams.build(model, dt=0.001, integrator="semi_implicit_euler")
    state = js.State.build(model, joint_positions=jnp.array([0.3, 0.2]))
    _, (states, _) = jax.jit(lambda s: js.rollout(model, s, jnp.zeros((steps, 2)), params=params))(state)
    error = np.abs(np.asarray(states.joint_positions) - np.array(expected)).max()
    assert np.ptp(np.array(expected)[:, 0]) > 0.1  # the springs swing the chain
    assert error < 1e-9, error


def test_the_implicit_step_holds_a_stiff_spring_where_the_explicit_step_diverges():
    """A spring of 2e4 N m/rad on the shoulder: at 20 ms its period (about 10 ms) is below two
    steps, so the explicit step diverges; the implicit one holds the shoulder at its spring's
    balance against gravity."""
    model = js.load_model(CHAIN.format(k1=2e4))
    state = js.State.build(model, joint_positions=jnp.array([0.3, 0.2]))
    finals = {}
    for integrator in ("semi_implicit_euler", "implicit_euler"):
        params = js.SimulationParams.build(model, dt=0.02, integrator=integrator)
        final, _ = jax.jit(lambda s: js.rollout(model, s, jnp.zeros((100, 2)), params=params))(state)
        finals[integrator] = final
    assert not np.isfinite(np.asarray(finals["semi_implicit_euler"].joint_positions)).all()
    held = finals["implicit_euler"]
    assert abs(float(held.joint_positions[0]) - 0.3) < 2e-3  # springref 0.4 minus ref 0.1; gravity bends it by < 1 mrad
    assert abs(float(held.joint_velocities[0])) < 1e-3  # the soft elbow (3 N m/rad, undamped) still swings


def test_sdf_springs_are_read():
    sdf = """<?xml version="1.0"?><sdf version="1.7"><model name="m">
      <link name="base"/><link name="arm"><inertial><mass>1</mass></inertial></link>
      <joint name="hinge" type="revolute"><parent>base</parent><child>arm</child><axis><xyz>0 1 0</xyz>
        <dynamics><spring_stiffness>12.5</spring_stiffness><spring_reference>0.25</spring_reference></dynamics>
      </axis></joint></model></sdf>"""
    model = js.load_model(sdf)
    assert float(model.joint_stiffness[0]) == 12.5 and float(model.joint_spring_reference[0]) == 0.25
