"""Fixtures of the dynamics tests: model cases, their Pinocchio twins, random samples, compiled
functions and the conversions between our velocity representations and Pinocchio's.

A *case* is a model (a URDF test asset or the iCub) with a fixed or a floating base. For each
case, :func:`evaluate_all` (every quantity the tests check) is jitted once with the model as an
argument, evaluated on a few random samples, and the results are cached for the whole session by
the ``lab`` fixture: compilation dominates the cost of the suite, so each case compiles one
program that all test modules share. Every quantity and identity is computed in the mixed
representation (``FULL``); the quantities through which the conversions between representations
pass (``CONVERTED``: mass matrix, RNEA and ABA with link wrenches, link Jacobians and ``J_dot nu``)
in the body and inertial ones as well (the same identity in three representations compiled three
times the program and checked the same code).

Pinocchio's conventions: q = [position, quaternion xyzw, joints] (a continuous joint as cos, sin);
v = [linear; angular] body velocity of the free-flyer joint frame, then the joint velocities;
accelerations are their derivatives; ``fext`` holds one wrench per joint, in the joint frame,
[force; torque]. ``LOCAL`` is our body representation, ``WORLD`` inertial and
``LOCAL_WORLD_ALIGNED`` mixed. A Jacobian of ours in representation r equals Pinocchio's times
``G_r``, the map from our generalised velocity (base part in r) to Pinocchio's (see
:meth:`PinocchioTwin.velocity_map`); generalised forces map with ``G_r^T``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import zlib
from pathlib import Path
from typing import Any

import icub_models
import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D

ASSETS = Path(__file__).resolve().parents[1] / "assets"
EXPECTED_ASSETS = ("pendulum", "double_pendulum", "cart_pole", "free_box", "sphere", "quadruped", "humanoid")
ICUB = "icub"
REPRESENTATIONS = ("body", "inertial", "mixed")
FULL = "mixed"
"""The representation in which every quantity is computed and every identity checked."""
CONVERTED = ("mass_matrix", "rnea", "aba", "link_jacobians", "link_bias_accelerations")
"""The quantities computed in every representation: with the states' base velocities, they reach
each conversion of ``jaxsim_like.dynamics.representations`` (transforms, forces, accelerations, a
velocity to inertial) in each; ``test_with_velocity_representation`` converts velocities back."""
PIN_FRAME = {"body": pin.LOCAL, "inertial": pin.WORLD, "mixed": pin.LOCAL_WORLD_ALIGNED}
SAMPLES_PER_CASE = 4
REFERENCE_TOLERANCE = 1e-9
FRAMES_CHECKED = 1


def asset_names() -> list[str]:
    """The expected assets and any other URDF found in ``tests/assets`` (missing ones fail later)."""
    return sorted(set(EXPECTED_ASSETS) | {path.stem for path in ASSETS.glob("*.urdf")})


@dataclasses.dataclass(frozen=True)
class Case:
    """A model to test: an asset name (or ``icub``) and the kind of base."""

    asset: str
    floating: bool

    def __str__(self) -> str:
        return f"{self.asset}-{'floating' if self.floating else 'fixed'}"

    @property
    def path(self) -> Path:
        if self.asset == ICUB:
            return Path(icub_models.get_model_file("iCubGazeboV2_5"))
        path = ASSETS / f"{self.asset}.urdf"
        if not path.is_file():
            pytest.fail(f"expected test asset {path} is missing (the dynamics tests need every one of {EXPECTED_ASSETS})")
        return path


ASSET_CASES = [Case(name, floating) for name in asset_names() for floating in (False, True)]
ICUB_CASES = [Case(ICUB, False), Case(ICUB, True)]
ALL_CASES = ASSET_CASES + ICUB_CASES


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``case``: every model case; ``asset_case``: the test assets only; ``rep``: each representation."""
    if "case" in metafunc.fixturenames:
        metafunc.parametrize("case", ALL_CASES, ids=str)
    if "asset_case" in metafunc.fixturenames:
        metafunc.parametrize("asset_case", ASSET_CASES, ids=str)
    if "rep" in metafunc.fixturenames:
        metafunc.parametrize("rep", REPRESENTATIONS)


# ---------------------------------------------------------------------------------------------
# Tolerances and the record of the largest errors (printed at the end of the session).

LARGEST_ERRORS: dict[str, float] = {}


def assert_close(actual: Any, expected: Any, quantity: str, *, tolerance: float = REFERENCE_TOLERANCE, where: str = "") -> float:
    """``max|actual - expected| <= tolerance * max(1, max|expected|)``; records the scaled error."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{quantity} {where}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{quantity} {where}: non-finite values {actual}"
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    error = float(np.max(np.abs(actual - expected), initial=0.0)) / scale
    LARGEST_ERRORS[quantity] = max(LARGEST_ERRORS.get(quantity, 0.0), error)
    assert error <= tolerance, (
        f"{quantity} {where}: scaled error {error:.3e} > {tolerance:.1e} (scale {scale:.3g})\n"
        f"actual:\n{actual}\nexpected:\n{expected}"
    )
    return error


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if LARGEST_ERRORS:
        terminalreporter.section("dynamics: largest scaled error per quantity")
        for quantity, error in sorted(LARGEST_ERRORS.items()):
            terminalreporter.line(f"{quantity:45s} {error:.2e}")


# ---------------------------------------------------------------------------------------------
# Rigid-body conversions in numpy (independent of the library under test).


def rotation(quaternion: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit wxyz quaternion."""
    w, x, y, z = quaternion
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def quaternion_wxyz(R: np.ndarray) -> np.ndarray:
    x, y, z, w = pin.Quaternion(R).coeffs()
    return np.array([w, x, y, z])


def pose(position: np.ndarray, quaternion: np.ndarray) -> np.ndarray:
    """``W_H_B (4, 4)``."""
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = rotation(quaternion), position
    return H


def motion_transform(H: np.ndarray) -> np.ndarray:
    """``A_X_B (6, 6)`` of ``A_H_B`` for ``[linear; angular]`` motion vectors."""
    return pin.SE3(H[:3, :3], H[:3, 3]).action


def blockdiag(R: np.ndarray) -> np.ndarray:
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = R
    return out


def from_body(rep: str, H: np.ndarray) -> np.ndarray:
    """``(6, 6)``: the velocity of frame ``W_H_L = H`` in ``rep`` from its body velocity."""
    if rep == "body":
        return np.eye(6)
    if rep == "inertial":
        return motion_transform(H)
    return blockdiag(H[:3, :3])


def to_body(rep: str, H: np.ndarray) -> np.ndarray:
    """``(6, 6)``: the body velocity of frame ``H`` from its velocity in ``rep``."""
    return np.linalg.inv(from_body(rep, H))


def acceleration_in(rep: str, H: np.ndarray, v_body: np.ndarray, a_body: np.ndarray) -> np.ndarray:
    """The derivative of a frame's velocity in ``rep`` from its body velocity and its derivative."""
    if rep != "mixed":
        return from_body(rep, H) @ a_body
    R = H[:3, :3]
    return np.concatenate([R @ (a_body[:3] + np.cross(v_body[3:], v_body[:3])), R @ a_body[3:]])


def acceleration_from(rep: str, H: np.ndarray, v_body: np.ndarray, a_rep: np.ndarray) -> np.ndarray:
    """The derivative of the body velocity from the derivative of the velocity in ``rep``."""
    if rep != "mixed":
        return to_body(rep, H) @ a_rep
    R = H[:3, :3]
    return np.concatenate([R.T @ a_rep[:3] - np.cross(v_body[3:], v_body[:3]), R.T @ a_rep[3:]])


def wrench_in(rep: str, H: np.ndarray, f_body: np.ndarray) -> np.ndarray:
    """A wrench on frame ``H`` given in body coordinates, written in ``rep`` (same power)."""
    return to_body(rep, H).T @ f_body


def velocity_of_pose_derivative(rep: str, H: np.ndarray, H_dot: np.ndarray) -> np.ndarray:
    """The velocity in ``rep`` of a frame with pose ``H`` and pose derivative ``H_dot``."""
    if rep == "body":
        twist = np.linalg.inv(H) @ H_dot
        return np.concatenate([twist[:3, 3], pin.unSkew(twist[:3, :3])])
    if rep == "inertial":
        twist = H_dot @ np.linalg.inv(H)
        return np.concatenate([twist[:3, 3], pin.unSkew(twist[:3, :3])])
    return np.concatenate([H_dot[:3, 3], pin.unSkew(H_dot[:3, :3] @ H[:3, :3].T)])


def advance_pose(rep: str, H: np.ndarray, velocity: np.ndarray, dt: float) -> np.ndarray:
    """The pose after ``dt`` seconds at a constant ``velocity`` given in ``rep``."""
    if rep == "body":
        return H @ pin.exp6(pin.Motion(velocity * dt)).homogeneous
    if rep == "inertial":
        return pin.exp6(pin.Motion(velocity * dt)).homogeneous @ H
    out = np.eye(4)
    out[:3, :3] = pin.exp3(velocity[3:] * dt) @ H[:3, :3]
    out[:3, 3] = H[:3, 3] + velocity[:3] * dt
    return out


# ---------------------------------------------------------------------------------------------
# Random samples and our states.


@dataclasses.dataclass(frozen=True)
class Sample:
    """A physical state with inputs; base and link quantities in body coordinates.

    ``velocity``/``acceleration (6,)``: the base body velocity and its derivative (zero with a
    fixed base); ``wrenches (N, 6)``: external wrench on each link, in the link frame.
    """

    position: np.ndarray
    quaternion: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    wrenches: np.ndarray

    @property
    def base_pose(self) -> np.ndarray:
        return pose(self.position, self.quaternion)


def random_samples(model: js.Model, seed: int, count: int) -> list[Sample]:
    """``count`` random samples; a fixed base stays where the file welds it."""
    rng = np.random.default_rng(seed)
    n, N = model.dofs, model.number_of_links
    W_H_B = np.asarray(model.base_transform)
    samples = []
    for _ in range(count):
        if model.floating_base:
            quaternion = rng.normal(size=4)
            position, quaternion = rng.normal(size=3), quaternion / np.linalg.norm(quaternion)
            velocity, acceleration = rng.normal(size=6), rng.normal(size=6)
        else:
            position, quaternion = W_H_B[:3, 3].copy(), quaternion_wxyz(W_H_B[:3, :3])
            velocity, acceleration = np.zeros(6), np.zeros(6)
        samples.append(
            Sample(
                position=position,
                quaternion=quaternion,
                velocity=velocity,
                acceleration=acceleration,
                q=rng.uniform(-np.pi, np.pi, n),
                qd=rng.normal(size=n),
                qdd=rng.normal(size=n),
                tau=rng.normal(size=n),
                wrenches=rng.normal(size=(N, 6)),
            )
        )
    return samples


def state_of(model: js.Model, sample: Sample, rep: str) -> js.State:
    """Our state of ``sample`` with the base velocity in ``rep``."""
    return js.State.build(
        model,
        base_position=sample.position,
        base_quaternion=sample.quaternion,
        base_velocity=from_body(rep, sample.base_pose) @ sample.velocity,
        joint_positions=sample.q,
        joint_velocities=sample.qd,
        velocity_representation=rep,
    )


def inputs_of(sample: Sample, rep: str, link_poses: np.ndarray) -> dict[str, jax.Array]:
    """Our inputs of ``sample`` in ``rep``: base acceleration, qdd, torques and link wrenches."""
    return {
        "base_acceleration": jnp.asarray(acceleration_in(rep, sample.base_pose, sample.velocity, sample.acceleration)),
        "joint_accelerations": jnp.asarray(sample.qdd),
        "joint_torques": jnp.asarray(sample.tau),
        "link_wrenches": jnp.asarray(np.stack([wrench_in(rep, H, f) for H, f in zip(link_poses, sample.wrenches)])),
    }


def generalized(model: js.Model, base: jax.Array, joints: jax.Array) -> jax.Array:
    """``[base; joints]`` with a floating base, else ``joints``."""
    return jnp.concatenate([base, joints]) if model.floating_base else joints


def core_dynamics(model: js.Model, state: js.State, inputs: dict) -> dict:
    """Mass matrix, RNEA (with link wrenches) and ABA in the state's representation, the base and
    joint parts concatenated."""
    base_wrench, torques = D.inverse_dynamics(
        model,
        state,
        base_acceleration=inputs["base_acceleration"],
        joint_accelerations=inputs["joint_accelerations"],
        link_wrenches=inputs["link_wrenches"],
    )
    base_acceleration, joint_accelerations = D.forward_dynamics(
        model, state, joint_torques=inputs["joint_torques"], link_wrenches=inputs["link_wrenches"]
    )
    return {
        "mass_matrix": D.mass_matrix(model, state),
        "rnea": jnp.concatenate([base_wrench, torques]),
        "aba": jnp.concatenate([base_acceleration, joint_accelerations]),
    }


# ---------------------------------------------------------------------------------------------
# The function under test: everything, in one representation.


def inverse_and_forward(model: js.Model, state: js.State, inputs: dict[str, jax.Array], rep: str) -> tuple:
    """RNEA of the sample's accelerations and ABA of its torques, both with its link wrenches, in
    ``rep``: ``(base_wrench, torques, base_acceleration, joint_accelerations)``."""
    kw = {"velocity_representation": rep}
    f_ext = inputs["link_wrenches"]
    base_wrench, torques = D.inverse_dynamics(
        model,
        state,
        base_acceleration=inputs["base_acceleration"],
        joint_accelerations=inputs["joint_accelerations"],
        link_wrenches=f_ext,
        **kw,
    )
    return (base_wrench, torques, *D.forward_dynamics(model, state, joint_torques=inputs["joint_torques"], link_wrenches=f_ext, **kw))


def evaluate(model: js.Model, state: js.State, inputs: dict[str, jax.Array], *, rep: str, frames: tuple[str, ...], extended: bool) -> dict[str, jax.Array]:
    """Every quantity checked by the tests, in ``rep``.

    ``extended`` adds link velocities, bias and gravity forces, the COM velocity, Jacobian and
    bias acceleration, the potential energy, and the identities RNEA(ABA), ABA(RNEA) and the RNEA
    differences: on the test assets (the iCub leaves them out to save compile time).
    """
    kw = {"velocity_representation": rep}
    f_ext = inputs["link_wrenches"]
    base_wrench, torques, base_acceleration, joint_accelerations = inverse_and_forward(model, state, inputs, rep)
    out = {
        "link_poses": D.forward_kinematics(model, state),
        "link_jacobians": D.link_jacobians(model, state, **kw),
        "link_bias_accelerations": D.link_bias_accelerations(model, state, **kw),
        "mass_matrix": D.mass_matrix(model, state, **kw),
        "rnea": generalized(model, base_wrench, torques),
        "aba": generalized(model, base_acceleration, joint_accelerations),
        "com_position": D.com_position(model, state),
        "centroidal_momentum": D.centroidal_momentum(model, state),
        "centroidal_momentum_matrix": D.centroidal_momentum_matrix(model, state, **kw),
        "kinetic_energy": D.kinetic_energy(model, state),
    }
    if frames:
        out["frame_poses"] = D.frame_poses(model, out["link_poses"])
        out["frame_jacobians"] = jnp.stack([D.frame_jacobian(model, state, f, **kw) for f in frames])
        out["frame_bias_accelerations"] = jnp.stack([D.frame_bias_acceleration(model, state, f, **kw) for f in frames])
    if not extended:
        return out
    out |= {
        "link_velocities": D.link_velocities(model, state, **kw),
        "bias_forces": D.bias_forces(model, state, **kw),
        "gravity_forces": D.gravity_forces(model, state, **kw),
        "com_velocity": D.com_velocity(model, state),
        "com_jacobian": D.com_jacobian(model, state, **kw),
        "com_bias_acceleration": D.com_bias_acceleration(model, state, **kw),
        "potential_energy": D.potential_energy(model, state),
    }
    out["rnea_of_aba"] = generalized(
        model,
        *D.inverse_dynamics(
            model, state, base_acceleration=base_acceleration, joint_accelerations=joint_accelerations, link_wrenches=f_ext, **kw
        ),
    )
    # A floating base has no actuator: its wrench from RNEA is applied to the base link.
    on_base = f_ext.at[0].add(base_wrench) if model.floating_base else f_ext
    out["aba_of_rnea"] = generalized(model, *D.forward_dynamics(model, state, joint_torques=torques, link_wrenches=on_base, **kw))
    nv = model.generalized_velocity_size
    if nv:

        def rnea_at(nu_dot: jax.Array) -> jax.Array:
            base = nu_dot[:6] if model.floating_base else None
            joints = nu_dot[6:] if model.floating_base else nu_dot
            return generalized(model, *D.inverse_dynamics(model, state, base_acceleration=base, joint_accelerations=joints, **kw))

        out["rnea_differences"] = jax.vmap(rnea_at)(jnp.eye(nv)).T - out["bias_forces"][:, None]
    return out


# ---------------------------------------------------------------------------------------------
# Pinocchio.


class PinocchioTwin:
    """Pinocchio's model of the same file, with the maps between its variables and ours."""

    def __init__(self, model: js.Model, pin_model: pin.Model):
        pm = self.model = pin_model
        self.data = pm.createData()
        self.floating = model.floating_base
        self.n, self.nv = model.dofs, model.generalized_velocity_size
        body = pin.FrameType.BODY
        missing = [name for name in model.link_names if not pm.existFrame(name, body)]
        assert not missing, f"links missing in Pinocchio's model: {missing}"
        self.link_frames = [pm.getFrameId(name, body) for name in model.link_names]
        self.frame_names = tuple(name for name in model.frame_names if pm.existFrame(name, body))
        self.frame_ids = [pm.getFrameId(name, body) for name in self.frame_names]
        # Each link of ours is one body of Pinocchio: its joint and the link frame in that joint's frame.
        self.link_joints = [pm.frames[f].parentJoint for f in self.link_frames]
        self.link_placements = [pm.frames[f].placement for f in self.link_frames]
        assert len(set(self.link_joints)) == len(self.link_joints), "two links of ours on one Pinocchio joint"
        joints = [pm.getJointId(name) for name in model.joint_names]
        self.idx_q = np.array([pm.idx_qs[j] for j in joints], dtype=int)
        self.nq_joint = np.array([pm.nqs[j] for j in joints], dtype=int)
        self.idx_v = np.array([pm.idx_vs[j] for j in joints], dtype=int)
        offset = 6 if self.floating else 0
        self.permutation = np.zeros((pm.nv, self.nv))
        self.permutation[self.idx_v, offset + np.arange(self.n)] = 1.0
        # Free-flyer joint frame J and our base link frame B: J_X_B maps body velocities.
        self.J_M_B = self.link_placements[0]
        self.J_X_B = self.J_M_B.action

    @classmethod
    def of_file(cls, model: js.Model, path: Path) -> PinocchioTwin:
        root = (pin.JointModelFreeFlyer(),) if model.floating_base else ()
        return cls(model, pin.buildModelFromUrdf(str(path), *root))

    def matrix(self, value: np.ndarray, rows: int) -> np.ndarray:
        """A Pinocchio matrix ``(rows, nv)`` (eigenpy returns one column as a vector)."""
        return np.reshape(value, (rows, self.model.nv))

    def configuration(self, sample: Sample) -> np.ndarray:
        q = np.zeros(self.model.nq)
        if self.floating:
            W_M_J = pin.SE3(sample.base_pose) * self.J_M_B.inverse()
            q[:7] = pin.SE3ToXYZQUAT(W_M_J)
        for k in range(self.n):
            i = self.idx_q[k]
            q[i : i + self.nq_joint[k]] = [np.cos(sample.q[k]), np.sin(sample.q[k])] if self.nq_joint[k] == 2 else sample.q[k]
        return q

    def velocity(self, base: np.ndarray, joints: np.ndarray) -> np.ndarray:
        """Pinocchio's ``v`` (or ``a``) from the base link's body velocity (or its derivative)."""
        v = self.permutation[:, (6 if self.floating else 0) :] @ joints
        if self.floating:
            v[:6] = self.J_X_B @ base
        return v

    def velocity_map(self, rep: str, W_H_B: np.ndarray) -> np.ndarray:
        """``G_r (nv_pin, nv)``: Pinocchio's ``v`` from our ``nu`` with the base velocity in ``rep``."""
        G = self.permutation.copy()
        if self.floating:
            G[:6, :6] = self.J_X_B @ to_body(rep, W_H_B)
        return G

    def external_forces(self, wrenches: np.ndarray) -> list:
        """Pinocchio's ``fext`` from link wrenches in link coordinates (a welded base's is void)."""
        fext = [pin.Force.Zero() for _ in range(self.model.njoints)]
        for joint, J_M_L, f in zip(self.link_joints, self.link_placements, wrenches):
            if joint > 0:
                fext[joint] = fext[joint] + J_M_L.act(pin.Force(f))
        return fext

    def link_poses(self, sample: Sample) -> np.ndarray:
        pin.framesForwardKinematics(self.model, self.data, self.configuration(sample))
        return np.stack([self.data.oMf[f].homogeneous for f in self.link_frames])

    def reference(self, sample: Sample, rep: str) -> dict[str, np.ndarray]:
        """Every quantity of :func:`evaluate` (without identities) computed by Pinocchio."""
        pm, pd = self.model, self.data
        W_H_B = sample.base_pose
        G = self.velocity_map(rep, W_H_B)
        q = self.configuration(sample)
        v = self.velocity(sample.velocity, sample.qd)
        a = self.velocity(sample.acceleration, sample.qdd)
        # The accelerations at zero nu_dot in rep (not zero body acceleration in mixed).
        a_zero = self.velocity(acceleration_from(rep, W_H_B, sample.velocity, np.zeros(6)), np.zeros(self.n))
        fext = self.external_forces(sample.wrenches)
        tau = self.velocity(np.zeros(6), sample.tau)

        out: dict[str, np.ndarray] = {}
        M = self.matrix(pin.crba(pm, pd, q), pm.nv)
        M = np.triu(M) + np.triu(M, 1).T
        out["mass_matrix"] = G.T @ M @ G
        out["rnea"] = G.T @ pin.rnea(pm, pd, q, v, a, fext)
        out["bias_forces"] = G.T @ pin.rnea(pm, pd, q, v, a_zero)
        out["gravity_forces"] = G.T @ pin.computeGeneralizedGravity(pm, pd, q)
        a_pin = pin.aba(pm, pd, q, v, tau, fext)
        joints = a_pin[self.idx_v]
        if self.floating:
            a_base = np.linalg.solve(self.J_X_B, a_pin[:6])
            out["aba"] = np.concatenate([acceleration_in(rep, W_H_B, sample.velocity, a_base), joints])
        else:
            out["aba"] = joints
        out["kinetic_energy"] = np.array(pin.computeKineticEnergy(pm, pd, q, v))
        out["potential_energy"] = np.array(pin.computePotentialEnergy(pm, pd, q))
        out["centroidal_momentum"] = pin.computeCentroidalMomentum(pm, pd, q, v).vector.copy()
        out["centroidal_momentum_matrix"] = self.matrix(pin.ccrba(pm, pd, q, v), 6) @ G
        out["com_jacobian"] = self.matrix(pin.jacobianCenterOfMass(pm, pd, q), 3) @ G
        pin.centerOfMass(pm, pd, q, v, a_zero)
        out["com_position"], out["com_velocity"], out["com_bias_acceleration"] = pd.com[0].copy(), pd.vcom[0].copy(), pd.acom[0].copy()
        welded = pm.inertias[0]
        if welded.mass > 0:
            # Pinocchio leaves the welded root body (universe) out of the COM and the potential
            # energy; ours counts every link: add the still root (mass m0 at c0).
            m0, c0, moving = welded.mass, welded.lever, pd.mass[0]
            if moving == 0:  # nothing moves: Pinocchio's COM quantities and momentum are NaN
                out |= {"com_position": c0.copy(), "com_velocity": np.zeros(3), "com_bias_acceleration": np.zeros(3)}
                out["centroidal_momentum"] = np.zeros(6)
            ratio = moving / (moving + m0)
            com = ratio * out["com_position"] + (1 - ratio) * c0
            for key in ("com_velocity", "com_bias_acceleration", "com_jacobian"):
                out[key] = ratio * out[key]
            shift = pin.skew(out["com_position"] - com)
            out["centroidal_momentum"][3:] += shift @ out["centroidal_momentum"][:3]
            out["centroidal_momentum_matrix"][3:] += shift @ out["centroidal_momentum_matrix"][:3]
            out["potential_energy"] = out["potential_energy"] - m0 * pm.gravity.linear @ c0
            out["com_position"] = com

        pin.forwardKinematics(pm, pd, q, v, a_zero)
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, q)
        frame = PIN_FRAME[rep]

        def jacobian(f: int) -> np.ndarray:
            if pm.nv == 0:  # Pinocchio's getFrameJacobian crashes on a model without joints
                return np.zeros((6, self.nv))
            return self.matrix(pin.getFrameJacobian(pm, pd, f, frame), 6) @ G

        def bias(f: int) -> np.ndarray:
            if rep == "mixed":
                return pin.getFrameClassicalAcceleration(pm, pd, f, frame).vector.copy()
            return pin.getFrameAcceleration(pm, pd, f, frame).vector.copy()

        out["link_poses"] = np.stack([pd.oMf[f].homogeneous for f in self.link_frames])
        out["link_jacobians"] = np.stack([jacobian(f) for f in self.link_frames])
        out["link_bias_accelerations"] = np.stack([bias(f) for f in self.link_frames])
        out["link_velocities"] = np.stack([pin.getFrameVelocity(pm, pd, f, frame).vector for f in self.link_frames])
        checked = self.frame_ids[:FRAMES_CHECKED]
        if checked:
            out["frame_poses"] = np.stack([pd.oMf[f].homogeneous for f in self.frame_ids])
            out["frame_jacobians"] = np.stack([jacobian(f) for f in checked])
            out["frame_bias_accelerations"] = np.stack([bias(f) for f in checked])
        return out


# ---------------------------------------------------------------------------------------------
# The session cache.


def _link_inertial(model: js.Model, i: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Link ``i``'s mass [kg], centre of mass ``(3,)`` [m] and inertia ``(3, 3)`` [kg m^2] in its
    link frame, read on the host (indexing the model's arrays would compile one small program per
    model shape)."""
    return float(np.asarray(model.link_mass)[i]), np.asarray(model.link_com)[i], np.asarray(model.link_inertia)[i]


def our_body_inertia(model: js.Model, i: int) -> pin.Inertia:
    """Link ``i``'s spatial inertia in its link frame, as a Pinocchio inertia (consistent ones only)."""
    return pin.Inertia(*_link_inertial(model, i))


def spatial_inertia(model: js.Model, i: int, J_M_L: pin.SE3) -> np.ndarray:
    """Link ``i``'s spatial inertia ``(6, 6)`` ([linear; angular]) in the frame of its Pinocchio joint."""
    m, c, I = _link_inertial(model, i)
    C = pin.skew(c)
    L_I = np.block([[m * np.eye(3), -m * C], [m * C, I - m * C @ C]])
    L_X_J = np.linalg.inv(J_M_L.action)
    return L_X_J.T @ L_I @ L_X_J


def differing_bodies(model: js.Model, twin: PinocchioTwin) -> list[int]:
    """Our links whose spatial inertia differs from Pinocchio's lumped body (1e-9, relative)."""
    out = []
    for i, (joint, J_M_L) in enumerate(zip(twin.link_joints, twin.link_placements)):
        ours, theirs = spatial_inertia(model, i, J_M_L), twin.model.inertias[joint].matrix()
        if np.abs(ours - theirs).max() > 1e-9 * max(1.0, np.abs(theirs).max()):
            out.append(i)
    return out


def named(name: str, caught: list[js.ModelLoadWarning]) -> bool:
    """Whether one of the warnings names ``name`` in quotes."""
    return any(re.search(rf"'{re.escape(name)}'", w.reason) for w in caught)


def converted(model: js.Model, state: js.State, inputs: dict[str, jax.Array], *, rep: str) -> dict[str, jax.Array]:
    """The ``CONVERTED`` quantities of :func:`evaluate` in ``rep``."""
    kw = {"velocity_representation": rep}
    base_wrench, torques, base_acceleration, joint_accelerations = inverse_and_forward(model, state, inputs, rep)
    return {
        "mass_matrix": D.mass_matrix(model, state, **kw),
        "rnea": generalized(model, base_wrench, torques),
        "aba": generalized(model, base_acceleration, joint_accelerations),
        "link_jacobians": D.link_jacobians(model, state, **kw),
        "link_bias_accelerations": D.link_bias_accelerations(model, state, **kw),
    }


def evaluate_all(model: js.Model, states: dict, inputs: dict, *, frames: tuple[str, ...], extended: bool) -> dict:
    """:func:`evaluate` in ``FULL`` and :func:`converted` in the other representations (one
    compilation shares the common work), keyed by representation."""
    return {
        rep: evaluate(model, states[rep], inputs[rep], rep=rep, frames=frames, extended=extended)
        if rep == FULL
        else converted(model, states[rep], inputs[rep], rep=rep)
        for rep in REPRESENTATIONS
    }


@dataclasses.dataclass
class Results:
    """Our values and Pinocchio's for the samples of one case: ``ours[k][rep][quantity]``."""

    case: Case
    model: js.Model
    twin: PinocchioTwin
    samples: list[Sample]
    states: list[dict[str, js.State]]
    inputs: list[dict[str, dict[str, jax.Array]]]
    ours: list[dict[str, dict[str, np.ndarray]]]
    reference: list[dict[str, dict[str, np.ndarray]]]
    function: Any

    @property
    def extended(self) -> bool:
        """Whether the extended quantities of :func:`evaluate` were computed."""
        return "bias_forces" in self.ours[0][FULL]

    def require_extended(self) -> None:
        if not self.extended:
            pytest.skip(f"{self.case}: only the core quantities are compared (compile time)")

    def evaluate(self, states: dict[str, js.State], inputs: dict[str, dict[str, jax.Array]]) -> dict[str, dict[str, np.ndarray]]:
        """The compiled function at other states and inputs (keyed by representation)."""
        return jax.tree.map(np.asarray, self.function(self.model, states, inputs))

    def evaluate_sample(self, sample: Sample) -> dict[str, dict[str, np.ndarray]]:
        """Our outputs at another sample of this case."""
        link_poses = self.twin.link_poses(sample)
        states = {rep: state_of(self.model, sample, rep) for rep in REPRESENTATIONS}
        return self.evaluate(states, {rep: inputs_of(sample, rep, link_poses) for rep in REPRESENTATIONS})

    def check(self, rep: str, quantity: str) -> None:
        """Ours against Pinocchio's ``quantity`` in ``rep`` for every sample."""
        assert rep == FULL or quantity in CONVERTED, f"{quantity} is computed in the {FULL} representation only"
        for k, (ours, ref) in enumerate(zip(self.ours, self.reference)):
            assert_close(ours[rep][quantity], ref[rep][quantity], f"{quantity} [{rep}]", where=f"{self.case} sample {k}")


class Lab:
    """Loads each case once, compiles :func:`evaluate_all` once per case and caches the results."""

    def __init__(self) -> None:
        self._models: dict[Case, js.Model] = {}
        self._twins: dict[Case, PinocchioTwin] = {}
        self._functions: dict[Case, Any] = {}
        self._results: dict[Case, Results] = {}

    def model(self, case: Case) -> js.Model:
        if case not in self._models:
            self._models[case] = js.load_model(case.path, floating_base=case.floating)
        return self._models[case]

    def twin(self, case: Case) -> PinocchioTwin:
        if case not in self._twins:
            self._twins[case] = PinocchioTwin.of_file(self.model(case), case.path)
        return self._twins[case]

    def function(self, case: Case) -> Any:
        """The jitted :func:`evaluate_all` of a case, taking ``(model, states, inputs)`` keyed by representation."""
        if case not in self._functions:
            frames = self.twin(case).frame_names[:FRAMES_CHECKED]
            function = functools.partial(evaluate_all, frames=frames, extended=case.asset != ICUB)
            self._functions[case] = jax.jit(function)
        return self._functions[case]

    def results(self, case: Case) -> Results:
        if case not in self._results:
            model, twin = self.model(case), self.twin(case)
            samples = random_samples(model, seed=zlib.crc32(str(case).encode()), count=SAMPLES_PER_CASE)
            states = [{rep: state_of(model, s, rep) for rep in REPRESENTATIONS} for s in samples]
            link_poses = [twin.link_poses(s) for s in samples]
            inputs = [{rep: inputs_of(s, rep, H) for rep in REPRESENTATIONS} for s, H in zip(samples, link_poses)]
            function = self.function(case)
            ours = [jax.tree.map(np.asarray, function(model, st, inp)) for st, inp in zip(states, inputs)]
            reference = [{rep: twin.reference(s, rep) for rep in REPRESENTATIONS} for s in samples]
            self._results[case] = Results(case, model, twin, samples, states, inputs, ours, reference, function)
        return self._results[case]


@pytest.fixture(scope="session")
def lab() -> Lab:
    return Lab()


def random_mixed_state(model: js.Model, rng: np.random.Generator):
    """A random state in the mixed representation (a random base pose and velocity on a floating
    base, joints in +-1 rad) and its values ``(position, quaternion, q, nu)`` for a reference."""
    quaternion = rng.normal(size=4)
    quaternion /= np.linalg.norm(quaternion)
    position, q = rng.normal(size=3), rng.uniform(-1.0, 1.0, model.dofs)
    nu = rng.normal(size=model.generalized_velocity_size)
    state = js.State.build(
        model,
        base_position=position if model.floating_base else None,
        base_quaternion=quaternion if model.floating_base else None,
        base_velocity=nu[:6] if model.floating_base else None,
        joint_positions=q,
        joint_velocities=nu[-model.dofs :],
        velocity_representation="mixed",
    )
    return state, (position, quaternion, q, nu)
