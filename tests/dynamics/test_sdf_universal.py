"""SDF ``universal`` joints: two revolute joints through a massless link (see
:mod:`jaxsim_like.parsers.sdf_describe`), each axis with its own limits and dynamics; the mass
matrix and bias forces equal MuJoCo's on the same arm written as a body with two hinges, at
random states, at 1e-9; parallel axes are refused with the joint's line; a ``revolute2`` joint loads
as the same model."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import crba, rnea
from jaxsim_like.parsers import ModelLoadError

mujoco = pytest.importorskip("mujoco", reason="the reference needs the mjcf extra (in the test extra)")

ARM = """<?xml version="1.0"?><sdf version="1.9"><model name="u">
<link name="base"><inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
<joint name="fix" type="fixed"><parent>world</parent><child>base</child></joint>
<link name="arm"><pose>0 0 -0.3 0 0 0.4</pose>
  <inertial><pose>0.02 0.01 -0.2 0 0 0</pose><mass>1.5</mass>
    <inertia><ixx>0.03</ixx><iyy>0.04</iyy><izz>0.02</izz><ixy>0.001</ixy></inertia></inertial></link>
<joint name="u" type="universal"><parent>base</parent><child>arm</child><pose>0 0 0.1 0 0 0</pose>
  <axis><xyz>1 0 0</xyz><limit><lower>-1</lower><upper>1.2</upper></limit><dynamics><damping>0.3</damping></dynamics></axis>
  <axis2><xyz>0 0.6 0.8</xyz><dynamics><damping>0.1</damping><friction>0.05</friction></dynamics></axis2></joint>
</model></sdf>"""

# The same arm in MuJoCo: one body, two hinges at the joint's origin, the first nearer the parent.
ARM_MJCF = """<mujoco><option gravity="0 0 -9.80665"/><worldbody><body name="base">
<inertial pos="0 0 0" mass="2" diaginertia="0.1 0.1 0.1"/>
<body name="arm" pos="0 0 -0.3" euler="0 0 0.4">
  <joint name="u1" type="hinge" axis="1 0 0" pos="0 0 0.1"/><joint name="u2" type="hinge" axis="0 0.6 0.8" pos="0 0 0.1"/>
  <inertial pos="0.02 0.01 -0.2" mass="1.5" fullinertia="0.03 0.04 0.02 0.001 0 0"/></body></body></worldbody></mujoco>"""


def test_a_universal_joint_is_two_revolute_joints_through_a_massless_link():
    model = js.load_model(ARM)
    assert model.joint_names == ("u", "u::axis2") and "arm::u" in model.link_names and model.dofs == 2
    assert np.allclose(model.position_limit_lower, [-1.0, -np.inf]) and np.allclose(model.position_limit_upper, [1.2, np.inf])
    assert np.allclose(model.joint_damping, [0.3, 0.1]) and np.allclose(model.joint_friction, [0.0, 0.05])


def test_a_universal_joint_moves_as_two_hinges_in_mujoco():
    """The axes are given in the joint frame at zero position; the second turns with the first."""
    model = js.load_model(ARM)
    m = mujoco.MjModel.from_xml_string(ARM_MJCF)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    positions, velocities = rng.uniform(-1.5, 1.5, (6, 2)), rng.uniform(-3, 3, (6, 2))

    @jax.jit
    @jax.vmap
    def dynamics(q, v):
        state = js.State.build(model, joint_positions=q, joint_velocities=v)
        return crba.mass_matrix(model, state), rnea.bias_forces(model, state, gravity=jnp.array([0.0, 0.0, -9.80665]))

    masses, biases = dynamics(jnp.asarray(positions), jnp.asarray(velocities))
    for q, v, M_ours, bias in zip(positions, velocities, np.asarray(masses), np.asarray(biases)):
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(m, d)
        M = np.zeros((2, 2))
        mujoco.mj_fullM(m, d, M)
        assert np.abs(M_ours - M).max() < 1e-9 and np.abs(bias - d.qfrc_bias).max() < 1e-9


def test_parallel_universal_axes_are_refused():
    source = ARM.replace("<xyz>0 0.6 0.8</xyz>", "<xyz>2 0 0</xyz>")
    with pytest.raises(ModelLoadError, match="universal joint 'u' has parallel <axis> and <axis2>") as caught:
        js.load_model(source)
    assert caught.value.line == 7


def test_a_revolute2_joint_loads_as_the_universal_one():
    """ODE's hinge-2 turns about <axis> fixed in the parent, then <axis2> fixed in the child: the same model."""
    universal, revolute2 = js.load_model(ARM), js.load_model(ARM.replace('type="universal"', 'type="revolute2"'))
    assert revolute2.joint_names == universal.joint_names and revolute2.link_names == universal.link_names
    for one, two in zip(jax.tree.leaves(universal), jax.tree.leaves(revolute2)):
        assert np.array_equal(np.asarray(one), np.asarray(two))
