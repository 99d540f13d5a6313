"""Joint effects on the pendulum: effort limits, position limits, viscous damping, Coulomb friction.

Every run is 5 s of semi-implicit Euler at 1 ms (the compilation is shared with the period test).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

DT = 0.001
STEPS = 5000
I_PIVOT = 1.00016


def run(pendulum, sim, *, model=None, params=None, torques=None, q0=0.0):
    model = pendulum if model is None else model
    params = js.SimulationParams.build(model, dt=DT) if params is None else params
    state = js.State.build(model, joint_positions=[q0])
    _, states, outputs = sim(model, state, params, steps=STEPS, torques=torques)
    q, qd = np.asarray(states.joint_positions[:, 0]), np.asarray(states.joint_velocities[:, 0])
    assert np.isfinite(q).all()
    return q, qd, np.asarray(outputs.joint_torques[:, 0])


def test_effort_limit_clips_the_command(pendulum, sim):
    assert float(pendulum.effort_limit[0]) == 100.0
    torques = np.zeros((STEPS, 1))
    torques[:4, 0] = [1000.0, -1000.0, 50.0, -50.0]
    _, qd, applied = run(pendulum, sim, torques=torques)
    np.testing.assert_array_equal(applied[:4], [100.0, -100.0, 50.0, -50.0])
    # At q = 0 gravity has no moment about the pivot: the first step accelerates at 100 / I.
    assert qd[0] == pytest.approx(DT * 100.0 / I_PIVOT, rel=1e-9)


def limited(pendulum, bound: float):
    return pendulum.replace(position_limit_lower=np.array([-bound]), position_limit_upper=np.array([bound]))


def test_position_limits_hold_a_driven_joint(pendulum, sim, figures):
    """Driven by 20 N m (twice the largest gravity moment) for 5 s against limits of +-0.5 rad,
    the joint stays within a few degrees of them; without the limit spring it swings over."""
    model = limited(pendulum, 0.5)
    params = js.SimulationParams.build(model, dt=DT)
    stiffness = float(params.limit_stiffness[0])
    for sign in (1.0, -1.0):
        q, _, _ = run(pendulum, sim, model=model, params=params, torques=[sign * 20.0])
        overshoot = np.abs(q).max() - 0.5
        figures(f"position limit: overshoot driven {'up' if sign > 0 else 'down'}", np.rad2deg(overshoot), "deg")
        assert overshoot < np.deg2rad(3.0)
        # At rest on the limit: the spring balances the drive and gravity.
        expected = 0.5 + (20.0 - 9.81 * np.sin(0.5)) / stiffness
        assert sign * q[-1] == pytest.approx(expected, abs=1e-4)
    free = params.replace(limit_stiffness=0 * params.limit_stiffness, limit_damping=0 * params.limit_damping)
    q, _, _ = run(pendulum, sim, model=model, params=free, torques=[20.0])
    assert q.max() > 3.0


def test_position_limits_push_back(pendulum, sim):
    """Released 0.2 rad past its upper limit, the joint is pushed back inside within 0.1 s."""
    q, _, _ = run(pendulum, sim, model=limited(pendulum, 0.5), q0=0.7)
    assert q[int(0.1 / DT)] < 0.5
    assert q.max() <= 0.7


def peaks(signal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the local maxima."""
    k = np.nonzero((signal[1:-1] > signal[:-2]) & (signal[1:-1] >= signal[2:]))[0] + 1
    return k, signal[k]


def test_damping_dissipates_at_the_viscous_rate(pendulum, sim, figures):
    """With ``b = 0.2`` N m s, small swings decay as ``exp(-b t / (2 I))``; without damping they keep their amplitude."""
    b = 0.2
    q, _, _ = run(pendulum, sim, q0=0.05)
    k, amplitude = peaks(q)
    assert len(k) >= 2
    np.testing.assert_allclose(amplitude, 0.05, rtol=1e-3)

    q, qd, applied = run(pendulum, sim, model=pendulum.replace(joint_damping=np.array([b])), q0=0.05)
    np.testing.assert_allclose(applied, -b * qd, rtol=1e-12, atol=1e-15)  # implicit: at the end of the step
    k, amplitude = peaks(q)
    assert len(k) >= 2
    rate = -np.polyfit(DT * (k + 1), np.log(amplitude), 1)[0]
    figures("damping: decay rate / (b / 2 I)", rate / (b / (2 * I_PIVOT)))
    assert rate == pytest.approx(b / (2 * I_PIVOT), rel=0.02)


def test_coulomb_friction_holds_a_joint(pendulum, sim, figures):
    """Without gravity and with 2 N m of friction, 1 N m barely moves the joint (the smoothed
    friction lets it creep at ``friction_velocity atanh(1 / 2)``); 3 N m accelerates it at ``(3 - 2) / I``."""
    model = pendulum.replace(joint_friction=np.array([2.0]))
    params = js.SimulationParams.build(model, dt=DT)
    params = params.replace(gravity=jnp.zeros(3))
    q, qd, _ = run(pendulum, sim, model=model, params=params, torques=[1.0])
    figures("Coulomb friction: creep under half the friction torque, 5 s", abs(q[-1]), "rad")
    figures("Coulomb friction: friction_velocity", float(params.friction_velocity[0]), "rad/s")
    assert abs(q[-1]) < 0.05
    assert qd[-1] == pytest.approx(float(params.friction_velocity[0]) * np.arctanh(0.5), rel=1e-3)
    q_free, _, _ = run(pendulum, sim, params=params, torques=[1.0])
    assert q_free[int(1.0 / DT)] > 0.4  # without friction: 0.5 t^2 / I

    q, qd, _ = run(pendulum, sim, model=model, params=params, torques=[3.0])
    at = int(3.0 / DT)
    ratio = qd[at] / ((3.0 - 2.0) / I_PIVOT * DT * (at + 1))
    figures("Coulomb friction: sliding acceleration / ((3 - 2) / I)", ratio)
    assert ratio == pytest.approx(1.0, rel=0.01)
