"""Screw joints in the dynamics core, on two SDF models (``tests/assets/sdf_joints``: a fixed chain
with a right-handed and a left-handed screw around a hinge, SDFormat 1.10's
``screw_thread_pitch``; a free body with a screw child and a hinge grandchild, 1.9's
``thread_pitch``): the link poses, mass matrix, bias forces, inverse and forward dynamics and
the link Jacobians equal those of Pinocchio's helical joint (``JointModelHelicalUnaligned``)
at 1e-9 at random states; the Jacobians equal central differences of the kinematics."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D

from .conftest import assert_close

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "sdf_joints"
SAMPLES = 3


def translation(p: np.ndarray) -> np.ndarray:
    H = np.eye(4)
    H[:3, 3] = p
    return H


class PinocchioTwin:
    """Pinocchio's model of one of ours, built from its numbers: each joint frame sits at the
    joint's axis point with the link's axes, so the link frame is ``J @ T(-p)``. Joints are in
    link order; ``order`` maps ours (joint order) to Pinocchio's velocity indices."""

    def __init__(self, model: js.Model):
        self.pin = pin.Model()
        transform = lambda name: np.asarray(getattr(model, name), dtype=float)
        P_H_C, axis, point, pitch = (transform(f) for f in ("joint_transform", "joint_axis", "joint_axis_point", "joint_pitch"))
        mass, com, inertia = transform("link_mass"), transform("link_com"), transform("link_inertia")
        root = 0
        if model.floating_base:
            root = self.pin.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
            body_offset = [np.eye(4)]
        else:
            body_offset = [np.asarray(model.base_transform, dtype=float)]
        joint_of_link = [root]
        for i in range(1, model.number_of_links):
            kind = model.joint_type[i]
            if kind == D.JointKind.SCREW:
                joint = pin.JointModelHelicalUnaligned(axis[i], float(pitch[i]))
            else:
                assert kind == D.JointKind.REVOLUTE
                joint = pin.JointModelRevoluteUnaligned(axis[i])
            placement = body_offset[model.parent[i]] @ P_H_C[i] @ translation(point[i])
            joint_of_link.append(
                self.pin.addJoint(joint_of_link[model.parent[i]], joint, pin.SE3(placement[:3, :3], placement[:3, 3]), f"j{i}")
            )
            body_offset.append(translation(-point[i]))
        for i in range(model.number_of_links):
            offset = body_offset[i]
            self.pin.appendBodyToJoint(joint_of_link[i], pin.Inertia(mass[i], com[i], inertia[i]), pin.SE3(offset[:3, :3], offset[:3, 3]))
        self.data = self.pin.createData()
        self.joint_of_link, self.body_offset = joint_of_link, body_offset
        self.order = np.array([self.pin.joints[joint_of_link[link]].idx_v for link in model.joint_link])
        self.base = 6 if model.floating_base else 0

    def q(self, position: np.ndarray, quaternion: np.ndarray, joints: np.ndarray) -> np.ndarray:
        q = np.zeros(self.pin.nq)
        if self.base:
            q[:7] = np.r_[position, quaternion[1:], quaternion[0]]
        q[self.order + (1 if self.base else 0)] = joints
        return q

    def v(self, base: np.ndarray, joints: np.ndarray) -> np.ndarray:
        v = np.zeros(self.pin.nv)
        v[:self.base] = base[:self.base]
        v[self.order] = joints
        return v

    def ours(self, generalized: np.ndarray) -> np.ndarray:
        """A Pinocchio vector ``(nv,)`` in our order (base first)."""
        return np.r_[generalized[: self.base], generalized[self.order]]


@jax.jit
def evaluate(model: js.Model, state: js.State, base_acceleration: jax.Array, qdd: jax.Array, tau: jax.Array) -> dict:
    wrench, torques = D.inverse_dynamics(model, state, base_acceleration=base_acceleration, joint_accelerations=qdd)
    base_acc, joint_acc = D.forward_dynamics(model, state, joint_torques=tau)
    stack = (lambda b, j: jnp.concatenate([b, j])) if model.floating_base else (lambda b, j: j)
    return {
        "mass_matrix": D.mass_matrix(model, state),
        "bias": D.bias_forces(model, state),
        "rnea": stack(wrench, torques),
        "aba": stack(base_acc, joint_acc),
        "poses": D.forward_kinematics(model, state),
        "jacobians": D.link_jacobians(model, state, velocity_representation="body"),
    }


@jax.jit
def poses_at(model: js.Model, joint_positions: jax.Array) -> jax.Array:
    """``W_H_L (k, N, 4, 4)`` of a fixed-base model at each of the joint positions ``(k, n)``."""
    return jax.vmap(lambda q: D.forward_kinematics(model, js.State.build(model, joint_positions=q)))(joint_positions)


class ScrewCase:
    def __init__(self, name: str):
        self.model = js.load_model(ASSETS / f"{name}.sdf")
        self.twin = PinocchioTwin(self.model)
        rng = np.random.default_rng(11)
        self.samples = []
        for _ in range(SAMPLES):
            quaternion = rng.normal(size=4)
            self.samples.append(
                dict(position=rng.normal(size=3), quaternion=quaternion / np.linalg.norm(quaternion), q=rng.uniform(-3, 3, self.model.dofs),
                     base_velocity=rng.normal(size=6), base_acceleration=rng.normal(size=6),
                     qd=rng.normal(size=self.model.dofs), qdd=rng.normal(size=self.model.dofs), tau=rng.normal(size=self.model.dofs))
            )

    def state(self, sample: dict) -> js.State:
        if not self.model.floating_base:
            return js.State.build(self.model, joint_positions=sample["q"], joint_velocities=sample["qd"])
        return js.State.build(
            self.model, base_position=sample["position"], base_quaternion=sample["quaternion"], base_velocity=sample["base_velocity"],
            joint_positions=sample["q"], joint_velocities=sample["qd"], velocity_representation="body",
        )


@pytest.fixture(scope="module", params=["screw_chain", "screw_floating"])
def screw_case(request):
    return ScrewCase(request.param)


@pytest.fixture(scope="module")
def results(screw_case):
    floating = screw_case.model.floating_base
    return [
        jax.tree.map(np.asarray, evaluate(
            screw_case.model, screw_case.state(s), jnp.asarray(s["base_acceleration"]) if floating else None, jnp.asarray(s["qdd"]), jnp.asarray(s["tau"])
        ))
        for s in screw_case.samples
    ]


def test_the_pitch_follows_the_file_version(screw_case):
    """1.10: ``screw_thread_pitch`` [m/rev], right-handed positive; 1.9: ``thread_pitch`` [rad/m], left-handed positive."""
    model = screw_case.model
    pitches = np.asarray(model.joint_pitch)[list(model.joint_link)]
    expected = [0.05 / (2 * np.pi), 0.0, -0.2 / (2 * np.pi)] if model.name == "screw_chain" else [-1 / 12.5, 0.0]
    assert np.allclose(pitches, expected, rtol=1e-15, atol=0.0)


def test_dynamics_agree_with_pinocchio(screw_case, results):
    twin, model, data = screw_case.twin, screw_case.twin.pin, screw_case.twin.data
    for sample, ours in zip(screw_case.samples, results):
        q = twin.q(sample["position"], sample["quaternion"], sample["q"])
        v = twin.v(sample["base_velocity"], sample["qd"])
        a = twin.v(sample["base_acceleration"], sample["qdd"])
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        P = np.r_[np.arange(twin.base), twin.order]  # our index -> Pinocchio's
        assert_close(ours["mass_matrix"], M[np.ix_(P, P)], "screw: mass matrix vs Pinocchio")
        assert_close(ours["bias"], twin.ours(pin.nle(model, data, q, v)), "screw: bias forces vs Pinocchio")
        assert_close(ours["rnea"], twin.ours(pin.rnea(model, data, q, v, a)), "screw: inverse dynamics vs Pinocchio")
        assert_close(ours["aba"], twin.ours(pin.aba(model, data, q, v, twin.v(np.zeros(6), sample["tau"]))), "screw: forward dynamics vs Pinocchio")
        pin.computeJointJacobians(model, data, q)
        pin.framesForwardKinematics(model, data, q)
        for link in range(screw_case.model.number_of_links):
            offset = twin.body_offset[link]
            W_H_L = data.oMi[twin.joint_of_link[link]].homogeneous @ offset
            assert_close(ours["poses"][link], W_H_L, "screw: link poses vs Pinocchio", where=screw_case.model.link_names[link])
            # Body Jacobian of the link frame: the joint frame's, moved by the offset.
            J = pin.getJointJacobian(model, data, twin.joint_of_link[link], pin.LOCAL)
            X = pin.SE3(offset[:3, :3], offset[:3, 3]).inverse().action
            assert_close(ours["jacobians"][link], (X @ J)[:, P], "screw: link Jacobians vs Pinocchio", where=screw_case.model.link_names[link])


def test_jacobians_equal_central_differences():
    """On the fixed chain, the mixed link Jacobians are the derivatives of the link poses."""
    model = js.load_model(ASSETS / "screw_chain.sdf")
    q = np.random.default_rng(5).uniform(-2, 2, model.dofs)
    eps = 1e-6
    steps = np.concatenate([np.eye(model.dofs), -np.eye(model.dofs)]) * eps
    poses = np.asarray(poses_at(model, jnp.asarray(q + steps)))
    plus, minus = poses[: model.dofs], poses[model.dofs :]
    linear = (plus[..., :3, 3] - minus[..., :3, 3]) / (2 * eps)
    dR = (plus[..., :3, :3] - minus[..., :3, :3]) / (2 * eps)
    R = np.asarray(poses_at(model, jnp.asarray(q[None])))[0, :, :3, :3]
    W = dR @ np.swapaxes(R, -1, -2)[None]
    angular = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)
    expected = np.concatenate([linear, angular], axis=-1).transpose(1, 2, 0)
    ours = D.link_jacobians(model, js.State.build(model, joint_positions=q), velocity_representation="mixed")
    assert_close(ours, expected, "screw: Jacobians vs central differences", tolerance=1e-8)


def test_a_screw_advances_by_its_pitch():
    """One turn of the 1.10 chain's first screw moves its nut 0.05 m along the axis, turned back where it was."""
    model = js.load_model(ASSETS / "screw_chain.sdf")
    poses = np.asarray(poses_at(model, jnp.asarray([[0.0, 0.0, 0.0], [2 * np.pi, 0.0, 0.0]])))
    nut = model.link_index("nut")
    W_axis = poses[0, nut, :3, :3] @ np.asarray(model.joint_axis[nut])
    assert np.allclose(poses[1, nut, :3, :3], poses[0, nut, :3, :3], atol=1e-12)
    assert np.allclose(poses[1, nut, :3, 3] - poses[0, nut, :3, 3], 0.05 * W_axis, atol=1e-12)


def test_reduce_locks_a_screw_at_its_turned_and_advanced_pose():
    """Locking both screws of the chain (turned and advanced by their pitches) leaves the hinge
    and the bolt, now a frame of the arm, where the full model has them."""
    model = js.load_model(ASSETS / "screw_chain.sdf")
    reduced = D.reduce(model, ["hinge"], {"lead": 1.3, "bolt_screw": -0.7})
    full = D.forward_kinematics(model, js.State.build(model, joint_positions=jnp.array([1.3, 0.4, -0.7])))
    W_H_L = D.forward_kinematics(reduced, js.State.build(reduced, joint_positions=jnp.array([0.4])))
    W_H_F = D.frame_poses(reduced, W_H_L)
    assert_close(W_H_L[reduced.link_index("arm")], full[model.link_index("arm")], "screw: reduced link pose")
    assert_close(W_H_F[reduced.frame_index("bolt")], full[model.link_index("bolt")], "screw: reduced frame pose")


def test_the_gradient_with_respect_to_the_pitches_equals_central_differences():
    """``d/d pitch`` of a weighted sum of the forward dynamics' accelerations on the fixed chain."""
    model = js.load_model(ASSETS / "screw_chain.sdf")
    rng = np.random.default_rng(9)
    state = js.State.build(model, joint_positions=rng.uniform(-2, 2, 3), joint_velocities=rng.normal(size=3))
    tau, weights = jnp.asarray(rng.normal(size=3)), jnp.asarray(rng.normal(size=3))

    @jax.jit
    def objective(pitch: jax.Array) -> jax.Array:
        _, qdd = D.forward_dynamics(model.replace(joint_pitch=pitch), state, joint_torques=tau)
        return jnp.dot(weights, qdd)

    pitch = np.asarray(model.joint_pitch)
    gradient = np.asarray(jax.grad(objective)(jnp.asarray(pitch)))
    eps = 1e-6
    screws = [model.link_index("nut"), model.link_index("bolt")]
    expected = [(objective(jnp.asarray(pitch).at[i].add(eps)) - objective(jnp.asarray(pitch).at[i].add(-eps))) / (2 * eps) for i in screws]
    assert np.abs(gradient[screws]).min() > 1e-3
    assert_close(gradient[screws], np.asarray(expected), "screw: gradient of ABA w.r.t. the pitch vs central differences", tolerance=1e-7)
