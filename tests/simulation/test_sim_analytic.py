"""Contact-free motions with closed forms: free fall, the small-angle pendulum, energy conservation."""

from __future__ import annotations

import jax
import numpy as np

import jaxsim_like as js
from jaxsim_like.dynamics import kinetic_energy, mechanical_energy, potential_energy

DT = 0.001


def fall(box, sim, integrator: str, steps: int):
    """The box thrown up and spinning from high above the ground: (states, p0, v0, gravity)."""
    p0, v0 = np.array([0.3, -0.2, 200.0]), np.array([1.0, -0.5, 2.0])
    state = js.State.build(box, base_position=p0, base_velocity=[*v0, 0.3, -0.2, 0.5])
    params = js.SimulationParams.build(box, dt=DT, integrator=integrator)
    _, states, outputs = sim(box, state, params, steps=steps)
    assert not np.asarray(outputs.in_contact).any()
    return states, p0, v0, np.asarray(params.gravity)


def test_free_fall_rk4_is_exact(box, sim, figures):
    """RK4 integrates a constant acceleration exactly: the COM (the box origin) follows the
    parabola ``p0 + v0 t + g t^2 / 2`` while the box tumbles."""
    steps = 1000
    states, p0, v0, g = fall(box, sim, "rk4", steps)
    t = DT * np.arange(1, steps + 1)[:, None]
    position_error = np.abs(np.asarray(states.base_position) - (p0 + v0 * t + 0.5 * g * t**2)).max()
    velocity_error = np.abs(np.asarray(states.base_velocity[:, :3]) - (v0 + g * t)).max()
    figures("free fall rk4: max position error", position_error, "m")
    figures("free fall rk4: max velocity error", velocity_error, "m/s")
    assert position_error < 1e-9
    assert velocity_error < 1e-9
    assert np.abs(np.asarray(states.base_velocity[:, 3:])).max() > 0.1  # it does spin


def test_free_fall_semi_implicit_euler_closed_form(box, sim, figures):
    """Semi-implicit Euler: ``v_k = v0 + g k dt`` and ``x_k = x0 + v0 k dt + g dt^2 k (k + 1) / 2``."""
    steps = 6000
    states, p0, v0, g = fall(box, sim, "semi_implicit_euler", steps)
    k = np.arange(1, steps + 1)[:, None]
    expected = p0 + v0 * k * DT + g * DT**2 * k * (k + 1) / 2
    position_error = np.abs(np.asarray(states.base_position) - expected).max()
    velocity_error = np.abs(np.asarray(states.base_velocity[:, :3]) - (v0 + g * k * DT)).max()
    figures("free fall semi-implicit Euler: max position error", position_error, "m")
    assert position_error < 1e-9
    assert velocity_error < 1e-9


def zero_crossings(signal: np.ndarray, dt: float) -> np.ndarray:
    """Times of the sign changes of ``signal`` (sampled at ``dt (k + 1)``), linearly interpolated."""
    k = np.nonzero(np.sign(signal[:-1]) * np.sign(signal[1:]) < 0)[0]
    return dt * (k + 1 + signal[k] / (signal[k] - signal[k + 1]))


def test_small_angle_pendulum_period(pendulum, sim, figures):
    """Period ``2 pi sqrt(I_pivot / (m g L))`` with I_pivot = 1.00016 kg m^2, m = 1 kg, L = 1 m."""
    params = js.SimulationParams.build(pendulum, dt=DT)
    state = js.State.build(pendulum, joint_positions=[0.02])
    _, states, outputs = sim(pendulum, state, params, steps=5000)
    assert not np.asarray(outputs.in_contact).any()
    crossings = zero_crossings(np.asarray(states.joint_positions[:, 0]), DT)
    assert len(crossings) >= 4
    period = 2.0 * np.mean(np.diff(crossings))
    expected = 2 * np.pi * np.sqrt(1.00016 / (1.0 * np.linalg.norm(np.asarray(params.gravity)) * 1.0))
    error = abs(period / expected - 1)
    figures("pendulum: period relative error", error)
    assert error < 0.005


def test_energy_is_conserved_without_dissipation(double_pendulum, sim, figures):
    """RK4, 1 ms, 10 s of a chaotic double pendulum without damping or friction: the mechanical
    energy drifts by less than 1e-6 of its initial value and of the largest kinetic energy."""
    model = double_pendulum.replace(
        joint_damping=np.zeros(double_pendulum.dofs), joint_friction=np.zeros(double_pendulum.dofs)
    )
    params = js.SimulationParams.build(
        model, dt=DT, integrator="rk4", contact_enabled_links=np.zeros(model.number_of_links, bool)
    )
    state = js.State.build(model, joint_positions=[1.2, -0.6], joint_velocities=[0.0, 1.0])
    _, states, _ = sim(model, state, params, steps=10_000)

    @jax.jit
    def energies(model, states, gravity):
        kinetic = jax.vmap(lambda s: kinetic_energy(model, s))(states)
        return kinetic, kinetic + jax.vmap(lambda s: potential_energy(model, s, gravity=gravity))(states)

    kinetic, energy = map(np.asarray, energies(model, states, params.gravity))
    e0 = float(mechanical_energy(model, state, gravity=params.gravity))
    drift = np.abs(energy - e0).max()
    figures("double pendulum rk4 10 s: energy drift / |E0|", drift / abs(e0))
    figures("double pendulum rk4 10 s: energy drift / max kinetic", drift / kinetic.max())
    assert np.isfinite(energy).all()
    assert kinetic.max() > 1.0  # it does move
    assert drift / abs(e0) < 1e-6
    assert drift / kinetic.max() < 1e-6
