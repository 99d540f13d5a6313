"""Building models: lumping of fixed joints, ``reduce``, ``State.build`` errors and recompilation."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D
from jaxsim_like.dynamics.couplings import NO_LEADER

from .conftest import (
    Case,
    PinocchioTwin,
    assert_close,
    core_dynamics,
    inputs_of,
    random_samples,
    state_of,
)

# ---------------------------------------------------------------------------------------------
# Lumping

# base (moving root) <-fixed- sensor <-fixed- tip <-fixed- marker (massless); tip <-revolute- finger;
# base <-revolute- arm. Inertial frames are offset and rotated, joint origins rotated.
LUMPING_URDF = """<robot name="lumping">
  <link name="base"><inertial><origin xyz="0.1 0 0.05" rpy="0.1 0.2 0.3"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.0015" izz="0.04"/></inertial></link>
  <link name="sensor"><inertial><origin xyz="0.01 0.02 0.03" rpy="0.3 0 0.2"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial></link>
  <link name="tip"><inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="0.25"/>
    <inertia ixx="0.0001" ixy="0" ixz="0" iyy="0.0002" iyz="0" izz="0.0001"/></inertial></link>
  <link name="marker"/>
  <link name="finger"><inertial><origin xyz="0 0 0.02" rpy="0 0 0"/><mass value="0.1"/>
    <inertia ixx="0.0001" ixy="0" ixz="0" iyy="0.0001" iyz="0" izz="0.0001"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 0.2" rpy="0 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial></link>
  <joint name="base_to_sensor" type="fixed"><parent link="base"/><child link="sensor"/>
    <origin xyz="0.2 -0.1 0.3" rpy="0.4 -0.2 0.1"/></joint>
  <joint name="sensor_to_tip" type="fixed"><parent link="sensor"/><child link="tip"/>
    <origin xyz="0 0 0.1" rpy="0 0.5 0"/></joint>
  <joint name="tip_to_marker" type="fixed"><parent link="tip"/><child link="marker"/>
    <origin xyz="0.05 0 0" rpy="0 0 1.2"/></joint>
  <joint name="finger_joint" type="revolute"><parent link="tip"/><child link="finger"/>
    <origin xyz="0 0.03 0.04" rpy="0.2 0 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="arm_joint" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """``Rz(yaw) Ry(pitch) Rx(roll)``."""
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def transform(xyz, angles) -> np.ndarray:
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = rpy(*angles), xyz
    return H


def test_lumped_link_has_the_parallel_axis_mass_com_and_inertia():
    model = js.load_model(LUMPING_URDF)
    assert set(model.link_names) == {"base", "arm", "finger"}
    assert set(model.frame_names) == {"sensor", "tip", "marker"}
    B_H_sensor = transform([0.2, -0.1, 0.3], [0.4, -0.2, 0.1])
    B_H_tip = B_H_sensor @ transform([0, 0, 0.1], [0, 0.5, 0])
    B_H_marker = B_H_tip @ transform([0.05, 0, 0], [0, 0, 1.2])
    # (mass, COM in the base frame, inertia about the body's own COM in base axes)
    I_base = np.array([[0.02, 0.001, -0.002], [0.001, 0.03, 0.0015], [-0.002, 0.0015, 0.04]])
    R_base, R_sensor = rpy(0.1, 0.2, 0.3), B_H_sensor[:3, :3] @ rpy(0.3, 0, 0.2)
    bodies = [
        (2.0, np.array([0.1, 0, 0.05]), R_base @ I_base @ R_base.T),
        (0.5, B_H_sensor[:3, :3] @ [0.01, 0.02, 0.03] + B_H_sensor[:3, 3], R_sensor @ np.diag([0.001, 0.002, 0.003]) @ R_sensor.T),
        (0.25, B_H_tip[:3, 3], B_H_tip[:3, :3] @ np.diag([0.0001, 0.0002, 0.0001]) @ B_H_tip[:3, :3].T),
    ]
    mass = sum(m for m, _, _ in bodies)
    com = sum(m * c for m, c, _ in bodies) / mass
    inertia = sum(I + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com)) for m, c, I in bodies)
    base = model.link_index("base")
    assert_close(model.link_mass[base], mass, "lumped mass", tolerance=1e-14)
    assert_close(model.link_com[base], com, "lumped COM", tolerance=1e-14)
    assert_close(model.link_inertia[base], inertia, "lumped inertia", tolerance=1e-14)
    for name, H in (("sensor", B_H_sensor), ("tip", B_H_tip), ("marker", B_H_marker)):
        index = model.frame_index(name)
        assert model.frame_link[index] == base
        assert_close(model.frame_transform[index], H, "lumped frame transform", tolerance=1e-14)
    # A moving joint below a lumped link is re-parented to the body, its placement composed.
    finger = model.link_index("finger")
    assert model.parent[finger] == base
    assert_close(model.joint_transform[finger], B_H_tip @ transform([0, 0.03, 0.04], [0.2, 0, 0]), "re-parented joint", tolerance=1e-14)


@pytest.mark.parametrize("lumped", [Case("quadruped", True), Case("humanoid", True), Case("icub", True)], ids=str)
def test_lumped_inertias_equal_pinocchios_bodies(lab, lumped):
    """Pinocchio also merges the bodies on fixed joints into their joint's body (URDF: joint frame = link frame)."""
    case = lumped
    model, twin = lab.model(case), lab.twin(case)
    for i, (joint, J_M_L) in enumerate(zip(twin.link_joints, twin.link_placements)):
        assert np.allclose(J_M_L.homogeneous, np.eye(4)), f"{case}: link {model.link_names[i]} is not its joint's frame"
        body = twin.model.inertias[joint]
        where = f"{case} link {model.link_names[i]}"
        assert_close(model.link_mass[i], body.mass, "lumped mass vs Pinocchio", where=where)
        assert_close(model.link_com[i], body.lever, "lumped COM vs Pinocchio", where=where)
        assert_close(model.link_inertia[i], body.inertia, "lumped inertia vs Pinocchio", where=where)


# ---------------------------------------------------------------------------------------------
# reduce

LAB_CASE = Case("icub", True)
"""The case whose compiled program the reduction tests read: this module runs on its worker (tests/conftest.py)."""
KEPT_JOINTS = ("torso_yaw", "r_knee", "r_hip_pitch", "torso_pitch", "r_ankle_pitch", "r_hip_roll", "torso_roll", "r_hip_yaw", "r_ankle_roll")


@dataclasses.dataclass(frozen=True)
class Reduction:
    """The full model, the reduced one, the locked positions, the reduced twin and our jitted function."""

    case: Case
    full: js.Model
    reduced: js.Model
    locked: dict[str, float]
    twin: PinocchioTwin
    function: Any


@pytest.fixture(scope="module")
def reduction(lab) -> Reduction:
    """The floating iCub reduced to torso and right leg, locked elsewhere at random positions."""
    case = LAB_CASE
    full, full_twin = lab.model(case), lab.twin(case)
    rng = np.random.default_rng(11)
    locked = {name: float(rng.uniform(-1, 1)) for name in full.joint_names if name not in KEPT_JOINTS}
    reduced = js.reduce(full, KEPT_JOINTS, locked)
    at_locked = random_samples(full, seed=0, count=1)[0]
    at_locked = dataclasses.replace(at_locked, q=np.array([locked.get(name, 0.0) for name in full.joint_names]))
    pm = full_twin.model
    pin_reduced = pin.buildReducedModel(pm, [pm.getJointId(name) for name in locked], full_twin.configuration(at_locked))
    function = jax.jit(core_dynamics)
    return Reduction(case, full, reduced, locked, PinocchioTwin(reduced, pin_reduced), function)


def test_reduce_keeps_the_given_joint_order(reduction):
    full, reduced = reduction.full, reduction.reduced
    assert reduced.joint_names == KEPT_JOINTS
    assert reduced.floating_base and reduced.dofs == len(KEPT_JOINTS)
    assert_close(reduced.total_mass, full.total_mass, "reduced total mass", tolerance=1e-14)
    assert set(reduced.frame_names) >= set(full.link_names) - set(reduced.link_names)


def test_reduced_model_matches_pinocchio_reduced_model(reduction):
    """M, RNEA and ABA of ``reduce`` against ``pin.buildReducedModel`` (mixed representation)."""
    reduced, twin = reduction.reduced, reduction.twin
    for k, sample in enumerate(random_samples(reduced, seed=5, count=3)):
        inputs = inputs_of(sample, "mixed", twin.link_poses(sample))
        ours = reduction.function(reduced, state_of(reduced, sample, "mixed"), inputs)
        reference = twin.reference(sample, "mixed")
        for quantity in ("mass_matrix", "rnea", "aba"):
            assert_close(ours[quantity], reference[quantity], f"reduced {quantity} vs Pinocchio", where=f"sample {k}")


def test_reduced_model_equals_the_full_model_with_locked_joints(lab, reduction):
    """With the locked joints still at their positions, the reduced model's M and RNEA are the
    full model's restricted to the base and the kept joints (wrenches on kept links only)."""
    full, reduced = reduction.full, reduction.reduced
    kept = [full.joint_index(name) for name in KEPT_JOINTS]
    rows = np.concatenate([np.arange(6), 6 + np.array(kept)])
    for k, small in enumerate(random_samples(reduced, seed=6, count=2)):
        q, qd, qdd = (np.array([reduction.locked.get(name, 0.0) for name in full.joint_names]), np.zeros(full.dofs), np.zeros(full.dofs))
        q[kept], qd[kept], qdd[kept] = small.q, small.qd, small.qdd
        wrenches = np.zeros((full.number_of_links, 6))
        wrenches[[full.link_index(name) for name in reduced.link_names]] = small.wrenches
        sample = dataclasses.replace(small, q=q, qd=qd, qdd=qdd, tau=np.zeros(full.dofs), wrenches=wrenches)
        whole = lab.results(reduction.case).evaluate_sample(sample)["mixed"]
        part = reduction.function(reduced, state_of(reduced, small, "mixed"), inputs_of(small, "mixed", reduction.twin.link_poses(small)))
        where = f"sample {k}"
        assert_close(part["mass_matrix"], whole["mass_matrix"][np.ix_(rows, rows)], "reduced M vs full M", where=where)
        assert_close(part["rnea"], whole["rnea"][rows], "reduced RNEA vs full RNEA", where=where)


def test_reduce_rejects_unknown_and_duplicate_joints(reduction):
    full = reduction.full
    with pytest.raises(ValueError, match="no joint named 'elbow'"):
        js.reduce(full, ["elbow"])
    with pytest.raises(ValueError, match="duplicates"):
        js.reduce(full, ["r_knee", "r_knee"])
    with pytest.raises(ValueError, match="locked_positions has 2 values"):
        js.reduce(full, ["r_knee"], [0.0, 1.0])


# A hand: 'thumb' mimics 'index' (q = 2 q_index + 0.1), 'wrist' above both.
HAND = """<robot name="hand">
  <link name="palm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="wrist" type="revolute"><parent link="palm"/><child link="carpus"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="carpus"><inertial><mass value="0.5"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="index" type="revolute"><parent link="carpus"/><child link="f1"/><origin xyz="0 0.02 0.1"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="f1"><inertial><mass value="0.05"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="thumb" type="revolute"><parent link="carpus"/><child link="f2"/><origin xyz="0 -0.02 0.1"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="index" multiplier="2" offset="0.1"/></joint>
  <link name="f2"><inertial><mass value="0.05"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""


def test_reduce_keeps_folds_or_refuses_couplings():
    """Both joints kept: the coupling follows the new order; the leader locked: its position folds
    into the offset (``q_thumb = 2 * 0.3 + 0.1``); the follower alone locked: a ValueError."""
    hand = js.load_model(HAND)
    assert (hand.couplings.follower, hand.couplings.leader) == ((2,), (1,))
    kept = js.reduce(hand, ["thumb", "index"])
    assert (kept.couplings.follower, kept.couplings.leader) == ((0,), (1,))
    folded = js.reduce(hand, ["wrist", "thumb"], {"index": 0.3})
    assert (folded.couplings.follower, folded.couplings.leader) == ((1,), (NO_LEADER,))
    assert float(folded.couplings.offset[0]) == pytest.approx(0.7)
    assert float(folded.couplings.violation(jnp.array([0.0, 0.7]))[0]) == pytest.approx(0.0)
    assert js.reduce(hand, ["wrist"]).couplings.rows == 0
    with pytest.raises(ValueError, match="joint 'index' leads the locked mimic joint 'thumb': lock both or keep both"):
        js.reduce(hand, ["wrist", "index"])


# ---------------------------------------------------------------------------------------------
# State.build and argument errors


@pytest.fixture(scope="module")
def pendulum(lab):
    return lab.model(Case("double_pendulum", False))


@pytest.fixture(scope="module")
def free_box(lab):
    return lab.model(Case("free_box", True))


@pytest.mark.parametrize(
    "argument, value",
    [
        ("base_position", np.zeros(2)),
        ("base_quaternion", np.zeros(3)),
        ("base_velocity", np.zeros(5)),
        ("joint_positions", np.zeros(3)),
        ("joint_velocities", np.zeros((2, 1))),
    ],
)
def test_state_build_names_the_argument_with_a_wrong_shape(pendulum, argument, value):
    with pytest.raises(ValueError, match=argument):
        js.State.build(pendulum, **{argument: value})


def test_state_build_rejects_base_velocity_on_a_fixed_base_and_unknown_representations(pendulum, free_box):
    with pytest.raises(ValueError, match="fixed base"):
        js.State.build(pendulum, base_velocity=np.ones(6))
    with pytest.raises(ValueError, match="velocity_representation"):
        js.State.build(free_box, velocity_representation="world")
    state = js.State.build(free_box, base_velocity=np.ones(6))
    assert state.base_velocity.dtype == jnp.float64 and state.velocity_representation == "mixed"


def test_state_build_defaults_to_the_file_pose_at_rest(pendulum):
    state = js.State.build(pendulum)
    assert_close(state.base_transform, pendulum.base_transform, "default base pose", tolerance=1e-15)
    assert not np.any(np.asarray(state.joint_positions)) and not np.any(np.asarray(state.joint_velocities))


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda m, s: D.inverse_dynamics(m, s, joint_accelerations=np.zeros(3)), "joint_accelerations"),
        (lambda m, s: D.forward_dynamics(m, s, joint_torques=np.zeros(1)), "joint_torques"),
        (lambda m, s: D.forward_dynamics(m, s, link_wrenches=np.zeros((2, 6))), "link_wrenches"),
        (lambda m, s: D.inverse_dynamics(m, s, link_wrenches=np.zeros((3, 3))), "link_wrenches"),
    ],
    ids=["rnea-accelerations", "aba-torques", "aba-wrenches", "rnea-wrenches"],
)
def test_dynamics_name_the_argument_with_a_wrong_shape(pendulum, call, argument):
    state = js.State.build(pendulum)
    with pytest.raises(ValueError, match=argument):
        jax.eval_shape(call, pendulum, state)


# ---------------------------------------------------------------------------------------------
# Recompilation


def test_jit_retraces_only_when_the_topology_changes(lab, pendulum):
    traces = []

    @jax.jit
    def accelerations(model, state):
        traces.append(model.name)
        return D.forward_dynamics(model, state)[1]

    state = js.State.build(pendulum, joint_positions=np.array([0.3, -0.2]))
    first = accelerations(pendulum, state)
    heavier = accelerations(pendulum.replace(link_mass=pendulum.link_mass.at[2].multiply(5.0)), state)
    moved = accelerations(pendulum.replace(joint_transform=pendulum.joint_transform.at[2, 2, 3].add(-0.5)), state)
    reloaded = accelerations(js.load_model(Case("double_pendulum", False).path, floating_base=False), state)
    assert len(traces) == 1, "changing traced parameters or reloading the same file must not retrace"
    assert not np.allclose(first, heavier) and not np.allclose(first, moved), "the new parameters were not used"
    assert_close(reloaded, first, "reloaded model", tolerance=1e-14)
    cart_pole = lab.model(Case("cart_pole", False))
    accelerations(cart_pole, js.State.build(cart_pole))
    assert len(traces) == 2, "another topology must retrace"
