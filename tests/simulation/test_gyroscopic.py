"""The gyroscopic moment of a free body in the implicit step: a body tumbling without gravity
keeps its kinetic energy and angular momentum, and a spin about the intermediate axis still flips
(the tennis racket) when Euler's equations say so.

One program runs every flight: a box of three unequal moments, two spins (a fast generic tumble
and a slow spin about the intermediate axis), three steps (2, 5, 20 ms, traced), the same number
of steps each.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.dynamics import spatial

DTS = (0.002, 0.005, 0.02)
STEPS = 1000
# Body-frame angular velocities [rad/s]: a fast tumble about a generic axis, and a spin about the
# intermediate axis slightly perturbed (it flips every half period).
TUMBLE = (20.0, 40.0, -30.0)
RACKET = (0.01, 10.0, 0.01)


@pytest.fixture(scope="module")
def flights():
    """Per spin and step size: the body-frame angular velocities ``(STEPS, 3)`` and the world
    angular momenta about the COM ``(STEPS, 3)`` after each step, and the box's inertia."""
    model = scenes.box((0.3, 0.2, 0.05))
    inertia = np.asarray(model.link_inertia[0])

    @jax.jit
    @jax.vmap
    def flight(params, w_body):
        state = js.State.build(model, base_position=jnp.array([0.0, 0.0, 1000.0]),
                               base_velocity=jnp.concatenate([jnp.zeros(3), w_body]))

        def body(state, _):
            state, _ = js.step(model, state, params=params)
            R = spatial.quaternion_to_rotation(state.base_quaternion)
            return state, R.T @ state.base_velocity[3:]

        return jax.lax.scan(body, state, None, length=STEPS)[1]

    params = [js.SimulationParams.build(model, dt=dt, gravity=(0.0, 0.0, 0.0)) for dt in DTS for _ in range(2)]
    spins = jnp.tile(jnp.asarray([TUMBLE, RACKET]), (len(DTS), 1))
    w = np.asarray(flight(jax.tree.map(lambda *x: jnp.stack(x), *params), spins)).reshape(len(DTS), 2, STEPS, 3)
    return {"tumble": w[:, 0], "racket": w[:, 1]}, inertia


def _energy_and_momentum(w: np.ndarray, inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kinetic energy ``(T,)`` [J] and the angular momentum's magnitude ``(T,)`` [kg m^2/s] of
    body-frame angular velocities ``w (T, 3)``."""
    L = w @ inertia
    return 0.5 * np.einsum("ti,ti->t", w, L), np.linalg.norm(L, axis=1)


@pytest.mark.parametrize("spin", ["tumble", "racket"])
def test_free_tumbling_keeps_energy_and_angular_momentum(flights, spin):
    """Without gravity, a tumbling box's kinetic energy and |angular momentum| stay within 1e-2
    of their start at each of the 1000 steps at 2 and 5 ms, 0.1 at 20 ms (the tumble turns a
    radian per step): bounded, no drift (the explicit gyroscopic moment gained energy every
    step; at the step's end, implicit, the tumble lost it)."""
    w, inertia = flights
    w0 = np.asarray(TUMBLE if spin == "tumble" else RACKET)
    E0, L0 = _energy_and_momentum(w0[None], inertia)
    for dt, w_dt, tolerance in zip(DTS, w[spin], (1e-2, 1e-2, 0.1)):
        assert np.isfinite(w_dt).all(), f"dt {dt}: non-finite"
        E, L = _energy_and_momentum(w_dt, inertia)
        np.testing.assert_array_less(np.abs(E / E0 - 1.0), tolerance, err_msg=f"{spin}, dt {dt}: energy")
        np.testing.assert_array_less(np.abs(L / L0 - 1.0), tolerance, err_msg=f"{spin}, dt {dt}: |angular momentum|")


def test_intermediate_axis_flips_with_eulers_period(flights):
    """The spin about the intermediate axis reverses (the body turns over) at the times Euler's
    equations give (integrated to 1e-11), to 1 % at 2 and 5 ms and 3 % at 20 ms: the flips are
    physics, not damped away."""
    w, inertia = flights
    seconds = STEPS * max(DTS)
    reference = solve_ivp(lambda t, w: np.linalg.solve(inertia, -np.cross(w, inertia @ w)), (0.0, seconds), RACKET,
                          rtol=1e-11, atol=1e-11, dense_output=True)
    t_ref = np.linspace(0.0, seconds, 2_000_001)
    w_ref = reference.sol(t_ref)[1]
    flips_ref = t_ref[1:][np.diff(np.sign(w_ref)) != 0]
    for dt, w_dt, tolerance in zip(DTS, w["racket"], (0.01, 0.01, 0.03)):
        t = dt * np.arange(1, STEPS + 1)
        flips = t[1:][np.diff(np.sign(w_dt[:, 1])) != 0]
        expected = flips_ref[flips_ref < t[-1]]
        assert len(expected) >= 1 and len(flips) == len(expected), f"dt {dt}: flips at {flips}, Euler's {expected}"
        np.testing.assert_allclose(flips, expected, rtol=tolerance, err_msg=f"dt {dt}: flip times")
