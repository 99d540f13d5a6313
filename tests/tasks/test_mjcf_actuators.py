"""MJCF actuators (motor, position, velocity, and general ones of those forms) are read into the
description and become an action map whose joint forces are MuJoCo's ``qfrc_actuator`` at 1e-12
for random controls and states; what cannot be represented warns, located."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import tasks
from jaxsim_like.dynamics import build_model
from jaxsim_like.parsers import parse_mjcf
from jaxsim_like.simulation import control

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")
_GYMNASIUM = importlib.util.find_spec("gymnasium")  # its files only
ANT = Path(_GYMNASIUM.submodule_search_locations[0], "envs", "mujoco", "assets", "ant.xml") if _GYMNASIUM else None


def scene(actuators: str) -> str:
    return (
        '<mujoco><worldbody><body name="arm"><joint name="a" type="hinge" axis="0 1 0"/><geom size="0.1" fromto="0 0 0 0.3 0 0" type="capsule"/>'
        '<body name="slider" pos="0.3 0 0"><joint name="b" type="slide" axis="1 0 0"/><geom size="0.05"/></body></body></worldbody>'
        f"<actuator>{actuators}</actuator></mujoco>"
    )


def mujoco_forces(xml: str | Path, ctrl: np.ndarray, q: np.ndarray, qd: np.ndarray, joints: list[str]) -> np.ndarray:
    """MuJoCo's joint forces of the actuators at ``ctrl`` and the state ``q, qd`` of ``joints``."""
    m = mujoco.MjModel.from_xml_path(str(xml)) if isinstance(xml, Path) else mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in joints]
    d.qpos[[m.jnt_qposadr[j] for j in ids]], d.qvel[[m.jnt_dofadr[j] for j in ids]] = q, qd
    d.ctrl[:] = ctrl
    mujoco.mj_forward(m, d)
    return d.qfrc_actuator[[m.jnt_dofadr[j] for j in ids]]


def our_forces(mapping: tasks.ActionMap, action: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """The joint forces of ``action``: the torques, or the PID command of a constant target."""
    values = np.asarray(mapping.values(action))
    if mapping.kind == "torque":
        return values
    table = np.asarray(mapping.table)[np.asarray(mapping.joints)]
    if mapping.kind == "position":
        command = table[:, control.KP] * (values - q) - table[:, control.KD] * qd
    else:
        command = table[:, control.KP] * (values - qd)
    return np.clip(command, table[:, control.EFFORT_MIN], table[:, control.EFFORT_MAX])


def controls_of(actuators, action: np.ndarray) -> np.ndarray:
    low, high = np.array([a.ctrl_range if np.isfinite(a.ctrl_range).all() else (-1.0, 1.0) for a in actuators]).T
    return 0.5 * (low + high) + 0.5 * (high - low) * action


@pytest.mark.parametrize(
    "actuators",
    [
        '<motor joint="a" gear="3" ctrlrange="-1 2"/><motor joint="b" gear="-2"/>',
        '<position joint="a" kp="40" kv="3" gear="2" ctrlrange="-1 1" forcerange="-5 6"/><position joint="b" kp="10"/>',
        '<velocity joint="a" kv="7" gear="1.5" ctrlrange="-2 2"/><general joint="b" gainprm="4" biasprm="0 0 -4" biastype="affine"/>',
    ],
    ids=["motor", "position", "velocity"],
)
def test_actions_give_mujocos_actuator_forces(actuators: str):
    xml = scene(actuators)
    description = parse_mjcf(xml)
    mapping = tasks.ActionMap.of_actuators(build_model(description), description.actuators)
    rng = np.random.default_rng(0)
    for _ in range(3):
        action, q, qd = rng.uniform(-1, 1, 2), rng.normal(size=2), rng.normal(size=2)
        expected = mujoco_forces(xml, controls_of(description.actuators, action), q, qd, ["a", "b"])
        np.testing.assert_allclose(our_forces(mapping, action, q, qd), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(ANT is None, reason="gymnasium's files come with the gymnasium package (test extra)")
def test_gymnasiums_ant_motors():
    description = parse_mjcf(ANT)
    assert [(a.kind, a.gear, a.ctrl_range) for a in description.actuators] == [("motor", 150.0, (-1.0, 1.0))] * 8
    model = build_model(description)
    mapping = tasks.ActionMap.of_actuators(model, description.actuators)
    action = np.random.default_rng(1).uniform(-1, 1, 8)
    joints = [a.joint for a in description.actuators]
    expected = mujoco_forces(ANT, controls_of(description.actuators, action), np.zeros(8), np.zeros(8), joints)
    np.testing.assert_allclose(our_forces(mapping, action, 0, 0), expected, rtol=1e-12)
    assert [model.joint_names[i] for i in mapping.joints] == joints


def test_mixed_kinds_and_clipping_motors_have_no_single_map():
    description = parse_mjcf(scene('<motor joint="a"/><position joint="b" kp="1"/>'))
    with pytest.raises(ValueError, match=r"of one kind to form one action map, got \['motor', 'position'\]"):
        tasks.ActionMap.of_actuators(build_model(description), description.actuators)
    description = parse_mjcf(scene('<motor name="m" joint="a" ctrlrange="-2 2" forcerange="-1 1"/>'))
    with pytest.raises(ValueError, match=r"force range of motor\(s\) \['m'\] clips their controls"):
        tasks.ActionMap.of_actuators(build_model(description), description.actuators)


def test_actuators_not_represented_warn_located_and_are_dropped():
    xml = scene('<motor name="m" joint="a"/>\n<general name="filtered" joint="b" dyntype="filter" dynprm="0.1"/>')
    with pytest.warns(js.ModelLoadWarning, match=r"<string>:2: <general name=\"filtered\">: 1 actuator\(s\) of a kind not represented .* dropped: 'filtered'"):
        description = parse_mjcf(xml)
    assert [a.name for a in description.actuators] == ["m"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", js.ModelLoadWarning)
        with pytest.raises(js.ModelLoadError, match="filtered"):
            js.load_model(xml, strict=True)


_DM_CONTROL = importlib.util.find_spec("dm_control")  # its files only
MANIPULATOR = Path(_DM_CONTROL.submodule_search_locations[0], "suite", "manipulator.xml") if _DM_CONTROL else None


@pytest.mark.skipif(MANIPULATOR is None, reason="dm_control's files come with the dm_control package (test extra)")
def test_motors_on_joints_and_on_a_fixed_tendon_give_mujocos_actuator_forces():
    """dm_control's manipulator: four joint motors and the grasp, a motor on the fixed tendon
    ``0.5 thumb + 0.5 finger`` (gear 2): one torque map whose joint torques are MuJoCo's
    ``qfrc_actuator`` on every joint."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)  # springs
        description = parse_mjcf(MANIPULATOR)
    assert [(a.name, a.joint, a.tendon) for a in description.actuators][-1] == ("grasp", "", "grasp")
    model = build_model(description)
    mapping = tasks.ActionMap.of_actuators(model, description.actuators)
    assert mapping.joints[-1] == -1 and mapping.moments.shape == (5, model.dofs)
    action = np.random.default_rng(2).uniform(-1, 1, 5)
    m = mujoco.MjModel.from_xml_path(str(MANIPULATOR))
    d = mujoco.MjData(m)
    d.ctrl[:] = controls_of(description.actuators, action)
    mujoco.mj_forward(m, d)
    dofs = [m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)] for name in model.joint_names]
    np.testing.assert_allclose(np.asarray(mapping.inputs(action).joint_torques), d.qfrc_actuator[dofs], rtol=1e-12, atol=1e-12)
