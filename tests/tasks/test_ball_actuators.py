"""MJCF actuators on a ball joint (MuJoCo's joint transmission: the gear's first three numbers an
axis in the joint frame, the length its dot with ``log(Q)``): a motor about an oblique axis, and
position and velocity actuators about the joint's axes, as action maps, move a ball pendulum as
MuJoCo's ``mj_step`` (Euler: our semi-implicit Euler) to rounding over 1 s at 1 ms, position
actuators with ``kv`` too (their damping along the gear axis, implicit as in MuJoCo's implicitfast
with our implicit Euler); the ones no action map represents warn, located, and are dropped."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import tasks
from jaxsim_like.dynamics import build_model
from jaxsim_like.parsers import parse_mjcf
from jaxsim_like.simulation import control
from jaxsim_like.simulation import world as world_module

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

PENDULUM = """<mujoco><option timestep="0.001" integrator="Euler"/><worldbody>
  <body name="bob" pos="0 0 2">
    <joint name="ball" type="ball" pos="0 0 0.5"/>
    <geom type="capsule" fromto="0 0 0.5 0.2 0.1 -0.1" size="0.04" mass="1" contype="0" conaffinity="0"/>
    <geom type="sphere" pos="0.2 0.1 -0.1" size="0.08" mass="2" contype="0" conaffinity="0"/>
  </body></worldbody><actuator>{}</actuator></mujoco>"""
DT, STEPS = 0.001, 1000
Q0 = np.array([0.9, 0.3, -0.2, 0.1]) / np.linalg.norm([0.9, 0.3, -0.2, 0.1])
W0 = np.array([0.5, -1.0, 2.0])


@jax.jit
def rollout(world: world_module.WorldModel, start: world_module.WorldState, inputs: world_module.ModelInputs) -> tuple[jax.Array, jax.Array]:
    """The joint positions and velocities after each of ``STEPS`` world steps under ``inputs``."""

    def step(state, _):
        state = world_module.world_step(world, state, [inputs])[0]
        return state, (state.states[0].joint_positions, state.states[0].joint_velocities)

    return jax.lax.scan(step, start, None, length=STEPS)[1]


def mujoco_and_ours(xml: str, integrator: str):
    """The action map of ``xml``'s actuators, MuJoCo's data after ``STEPS`` ``mj_step``s and its
    ``[qpos; qvel]`` after each ``(STEPS, 7)``, and our joint positions and velocities after each
    world step with ``integrator``, both under the same controls from ``Q0``, ``W0``."""
    description = parse_mjcf(xml)
    model = build_model(description)
    mapping = tasks.ActionMap.of_actuators(model, description.actuators)
    action = np.linspace(0.6, -0.4, mapping.size)
    low, high = np.array([a.ctrl_range if np.isfinite(a.ctrl_range).all() else (-1.0, 1.0) for a in description.actuators]).T
    m = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(m)
    data.qpos[:], data.qvel[:], data.ctrl[:] = Q0, W0, 0.5 * (low + high) + 0.5 * (high - low) * action
    expected = []
    for _ in range(STEPS):
        mujoco.mj_step(m, data)
        expected.append(np.r_[data.qpos, data.qvel])
    world = world_module.WorldModel.build([model], dt=DT, integrator=integrator, collisions=False)
    start = world.initial_state([js.State.build(model, joint_positions=Q0, joint_velocities=W0)])
    positions, velocities = rollout(world, start, mapping.inputs(jnp.asarray(action)))
    return mapping, data, np.array(expected), np.asarray(positions), np.asarray(velocities)


@pytest.mark.parametrize(
    "actuators",
    [
        '<motor joint="ball" gear="0.3 -0.5 0.8" ctrlrange="-2 2"/><motor joint="ball" gear="0 0 1.5"/>',
        '<position joint="ball" kp="20" gear="2 0 0" ctrlrange="-1 1"/><position joint="ball" kp="8" gear="0 0 -1.5"/>',
        '<velocity joint="ball" kv="3" gear="0 1.5 0" ctrlrange="-2 2"/>',
    ],
    ids=["motor", "position", "velocity"],
)
def test_actuators_on_a_ball_joint_move_it_as_mujoco(actuators: str):
    _, data, expected, positions, velocities = mujoco_and_ours(PENDULUM.format(actuators), "semi_implicit_euler")
    assert np.abs(data.qfrc_actuator).max() > 0.1 and np.ptp(expected[:, 1]) > 0.3  # driven, and it swings
    assert np.abs(positions - expected[:, :4]).max() < 1e-11
    assert np.abs(velocities - expected[:, 4:]).max() < 1e-10


def test_ball_actuators_no_map_represents_warn_and_are_dropped():
    """Position and velocity actuators about an oblique axis, and a position one with ``kv`` and a
    force range (its damping acts outside the controller's clip), are dropped; a motor about an
    oblique axis is kept."""
    xml = PENDULUM.format(
        '<motor name="m" joint="ball" gear="1 1 0"/><position name="p" joint="ball" kp="1" gear="1 1 0"/>'
        '<velocity name="v" joint="ball" kv="1" gear="0 1 1"/><position name="d" joint="ball" kp="1" kv="0.1" forcerange="-1 1"/>'
    )
    with pytest.warns(js.ModelLoadWarning, match=r"<position name=\"p\">: 3 actuator\(s\) .* dropped: 'p', 'v', 'd'"):
        description = parse_mjcf(xml)
    assert [(a.name, a.joint, a.gear_axis) for a in description.actuators] == [("m", "ball", (1.0, 1.0, 0.0))]


@pytest.mark.parametrize(
    ("actuators", "integrator", "theirs"),
    [
        ('<position joint="ball" kp="2" kv="0.2" gear="2 0 0"/><position joint="ball" kp="3" kv="0.5" gear="0 0 -1.5" ctrlrange="-1 1"/>',
         "semi_implicit_euler", "Euler"),
        # kp=0: our implicit Euler takes kp at the end of the step, implicitfast at its start (O(dt) apart);
        # kv=50 is past explicit Euler's stability at 1 ms (mj_step with Euler diverges).
        ('<position joint="ball" kp="0" kv="50" gear="2 0 0"/>', "implicit_euler", "implicitfast"),
    ],
    ids=["euler", "implicit"],
)
def test_ball_position_actuators_with_kv_move_it_as_mujoco(actuators: str, integrator: str, theirs: str):
    """A position actuator's ``kv`` on a ball joint damps ``g . omega`` (MuJoCo's actuator
    velocity), not the rate of the rotation vector: the pendulum moves as ``mj_step``'s."""
    xml = PENDULUM.format(actuators).replace('integrator="Euler"', f'integrator="{theirs}"')
    mapping, data, expected, positions, velocities = mujoco_and_ours(xml, integrator)
    rows = list(mapping.joints)
    assert np.all(np.asarray(mapping.table)[rows, control.KD] == 0) and np.all(np.asarray(mapping.damping)[rows] > 0)  # damping, not PID
    assert np.abs(data.qfrc_actuator).max() > 0.1 and np.ptp(expected[:, 1]) > 0.3  # driven, and it swings
    assert np.abs(positions - expected[:, :4]).max() < 1e-11
    assert np.abs(velocities - expected[:, 4:]).max() < 1e-10
