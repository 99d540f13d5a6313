"""Identities of the dynamics, on every test asset (fixed and floating) in the mixed
representation (``FULL``; the other representations' conversions are checked against Pinocchio):
M symmetric positive definite, ABA and RNEA inverse of each other, CRBA columns equal to RNEA
differences, Jacobians and ``J_dot nu`` equal to finite differences, and the rate of kinetic plus
potential energy equal to the power of the torques and external wrenches."""

from __future__ import annotations

import jax
import numpy as np

import jaxsim_like as js
from jaxsim_like.dynamics import jacobians, kinematics
from jaxsim_like.dynamics.aba import articulated_body_factorised, articulated_body_responses
from jaxsim_like.dynamics.crba import mass_matrix

from .conftest import (
    FULL,
    advance_pose,
    assert_close,
    pose,
    quaternion_wxyz,
    velocity_of_pose_derivative,
)

STEP = 1e-4
FD_TOLERANCE = 1e-8


def advanced(model: js.Model, state: js.State, dt: float, base_acceleration=None, joint_accelerations=None) -> js.State:
    """The state after ``dt`` seconds to first order: the pose moved along the state's velocity
    (constant in its representation), the velocity moved by ``dt`` times the given accelerations."""
    rep = state.velocity_representation
    velocity = np.asarray(state.base_velocity)
    H = advance_pose(rep, pose(np.asarray(state.base_position), np.asarray(state.base_quaternion)), velocity, dt)
    qd = np.asarray(state.joint_velocities)
    return js.State.build(
        model,
        base_position=H[:3, 3],
        base_quaternion=quaternion_wxyz(H[:3, :3]),
        base_velocity=velocity if base_acceleration is None else velocity + dt * base_acceleration,
        joint_positions=np.asarray(state.joint_positions) + dt * qd,
        joint_velocities=qd if joint_accelerations is None else qd + dt * joint_accelerations,
        velocity_representation=rep,
    )


def generalized_velocity(model: js.Model, state: js.State) -> np.ndarray:
    return np.asarray(state.generalized_velocity(model))


def split(model: js.Model, nu_dot: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    return (nu_dot[:6], nu_dot[6:]) if model.floating_base else (None, nu_dot)


def along_aba(results, k: int) -> dict[str, np.ndarray | None]:
    """The accelerations of ABA at sample ``k``, as the keywords of :func:`advanced`."""
    base, joints = split(results.model, results.ours[k][FULL]["aba"])
    return {"base_acceleration": base, "joint_accelerations": joints}


def time_derivative(results, k: int, **accelerations) -> dict[str, np.ndarray]:
    """The time derivative of every ``FULL`` output at sample ``k`` along the motion of
    :func:`advanced`, by the fourth-order central difference (error O(STEP^4))."""
    model = results.model
    outputs = []
    for dt in (-2 * STEP, -STEP, STEP, 2 * STEP):
        states = results.states[k] | {FULL: advanced(model, results.states[k][FULL], dt, **accelerations)}
        outputs.append(results.evaluate(states, results.inputs[k])[FULL])
    return jax.tree.map(lambda a, b, c, d: (a - 8 * b + 8 * c - d) / (12 * STEP), *outputs)


def test_mass_matrix_is_symmetric_positive_definite(lab, asset_case):
    for ours in lab.results(asset_case).ours:
        M = ours[FULL]["mass_matrix"]
        assert_close(M, M.T, f"mass_matrix symmetry [{FULL}]", tolerance=1e-14)
        if M.size:
            assert np.linalg.eigvalsh(M).min() > 0, f"{asset_case}: M is not positive definite"


def test_aba_and_rnea_invert_each_other(lab, asset_case):
    results = lab.results(asset_case)
    model = results.model
    for k, (sample, ours) in enumerate(zip(results.samples, results.ours)):
        inputs = results.inputs[k][FULL]
        where = f"{asset_case} sample {k}"
        unactuated = np.zeros(6) if model.floating_base else np.zeros(0)
        assert_close(ours[FULL]["rnea_of_aba"], np.concatenate([unactuated, sample.tau]), f"rnea(aba) [{FULL}]", where=where)
        base = np.asarray(inputs["base_acceleration"]) if model.floating_base else np.zeros(0)
        assert_close(ours[FULL]["aba_of_rnea"], np.concatenate([base, sample.qdd]), f"aba(rnea) [{FULL}]", where=where)


def test_crba_columns_equal_rnea_differences(lab, asset_case):
    results = lab.results(asset_case)
    if results.model.generalized_velocity_size == 0:
        assert all(ours[FULL]["mass_matrix"].shape == (0, 0) for ours in results.ours)
        return
    for k, ours in enumerate(results.ours):
        assert_close(ours[FULL]["rnea_differences"], ours[FULL]["mass_matrix"], f"crba columns [{FULL}]", where=f"{asset_case} sample {k}")


def test_jacobians_equal_finite_differences(lab, asset_case):
    """``J nu`` is the derivative of the link poses; ``J_dot nu`` that of ``J nu`` (constant ``nu``)."""
    results = lab.results(asset_case)
    model = results.model
    for k, ours in enumerate(results.ours):
        nu = generalized_velocity(model, results.states[k][FULL])
        rates = time_derivative(results, k)
        H, H_dot = ours[FULL]["link_poses"], rates["link_poses"]
        velocity_fd = np.stack([velocity_of_pose_derivative(FULL, H[i], H_dot[i]) for i in range(len(H))])
        where = f"{asset_case} sample {k}"
        assert_close(ours[FULL]["link_jacobians"] @ nu, velocity_fd, f"J nu vs finite differences [{FULL}]", tolerance=FD_TOLERANCE, where=where)
        assert_close(ours[FULL]["link_bias_accelerations"], rates["link_jacobians"] @ nu, f"J_dot nu vs finite differences [{FULL}]", tolerance=FD_TOLERANCE, where=where)
        assert_close(ours[FULL]["com_jacobian"] @ nu, rates["com_position"], f"J_com nu vs finite differences [{FULL}]", tolerance=FD_TOLERANCE, where=where)
        assert_close(ours[FULL]["com_bias_acceleration"], rates["com_jacobian"] @ nu, f"J_dot_com nu vs finite differences [{FULL}]", tolerance=FD_TOLERANCE, where=where)


def test_energy_rate_equals_power_of_applied_forces(lab, asset_case):
    """Along the motion given by ABA: d/dt (kinetic + potential) = tau . qd + sum_i f_i . v_i."""
    results = lab.results(asset_case)
    for k, (sample, ours) in enumerate(zip(results.samples, results.ours)):
        rates = time_derivative(results, k, **along_aba(results, k))
        rate = rates["kinetic_energy"] + rates["potential_energy"]
        wrenches = np.asarray(results.inputs[k][FULL]["link_wrenches"])
        power = sample.tau @ sample.qd + np.sum(wrenches * ours[FULL]["link_velocities"])
        assert_close(rate, power, f"energy rate vs power [{FULL}]", tolerance=FD_TOLERANCE, where=f"{asset_case} sample {k}")


def test_momentum_energy_and_velocities_are_consistent(lab, asset_case):
    """``v = J nu``, ``h_G = A_G nu``, ``c_dot = J_com nu``, ``K = nu^T M nu / 2``."""
    results = lab.results(asset_case)
    model = results.model
    for k, ours in enumerate(results.ours):
        nu = generalized_velocity(model, results.states[k][FULL])
        out, where = ours[FULL], f"{asset_case} sample {k}"
        assert_close(out["link_jacobians"] @ nu, out["link_velocities"], f"J nu = v [{FULL}]", where=where)
        assert_close(out["centroidal_momentum_matrix"] @ nu, out["centroidal_momentum"], f"A_G nu = h_G [{FULL}]", where=where)
        assert_close(out["com_jacobian"] @ nu, out["com_velocity"], f"J_com nu = c_dot [{FULL}]", where=where)
        assert_close(0.5 * nu @ out["mass_matrix"] @ nu, out["kinetic_energy"], f"nu^T M nu / 2 = K [{FULL}]", where=where)


def test_articulated_body_responses_equal_the_dense_solve():
    """The responses to joint torques alone on the factor of an articulated-body pass with added
    link inertias and armature equal ``(M + sum_L J_L^T H_L J_L + diag(0, armature))^-1 [0; tau]``
    (the quadruped, floating base, a random configuration), to 1e-10 relative."""
    model = js.load_model(js.models.path("quadruped"))
    rng = np.random.default_rng(0)
    quaternion = rng.normal(size=4)
    state = js.State.build(  # the base at the world origin: G's axes and origin are the world's
        model, joint_positions=rng.uniform(-1, 1, model.dofs), base_position=np.zeros(3),
        base_quaternion=quaternion / np.linalg.norm(quaternion), velocity_representation="inertial",
    )
    B = rng.normal(size=(model.number_of_links, 6, 6))
    added = np.einsum("lij,lkj->lik", B, B) * 0.01  # symmetric positive semi-definite link terms
    armature = rng.uniform(0.01, 0.1, model.dofs)
    torques = rng.normal(size=(3, model.dofs))

    @jax.jit
    def responses_and_matrix(state, added, armature, torques):
        kin = kinematics.kinematics(model, state)
        zeros = jax.numpy.zeros((model.number_of_links, 6))
        _, _, factor = articulated_body_factorised(
            model, kin, jax.numpy.zeros(model.dofs), zeros, jax.numpy.zeros(3), added_inertia=added, armature=armature
        )
        J = jacobians.link_jacobians(model, state)
        M = mass_matrix(model, state) + jax.numpy.einsum("lia,lij,ljb->ab", J, added, J)
        return articulated_body_responses(model, factor, torques), M

    (base, joints), M = responses_and_matrix(state, added, armature, torques)
    M = np.asarray(M) + np.diag(np.r_[np.zeros(6), armature])
    expected = np.linalg.solve(M, np.concatenate([np.zeros((3, 6)), torques], axis=1).T).T
    np.testing.assert_allclose(np.concatenate([base, joints], axis=1), expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
