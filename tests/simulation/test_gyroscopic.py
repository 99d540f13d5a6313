"""The gyroscopic moment in the implicit step: a free body tumbling without gravity keeps its
kinetic energy and angular momentum, and a spin about the intermediate axis still flips (the
tennis racket) when Euler's equations say so; the articulated-body solve with non-symmetric added
link inertias equals the dense solve.

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
from jaxsim_like.dynamics import bias_forces, jacobians, kinematics, spatial
from jaxsim_like.dynamics.aba import articulated_body_factorised, articulated_body_responses
from jaxsim_like.dynamics.crba import mass_matrix

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


def test_articulated_body_solve_with_non_symmetric_added_inertias_equals_the_dense_solve():
    """The accelerations of the articulated-body pass with non-symmetric added link inertias,
    armature, torques, link wrenches, gravity and velocities, and the responses of its factor,
    equal the dense solves with ``M + sum_L J_L^T H_L J_L + diag(0, armature)`` (the quadruped,
    floating base, a random state), to 1e-10 relative."""
    model = js.load_model(js.models.path("quadruped"))
    rng = np.random.default_rng(0)
    quaternion = rng.normal(size=4)
    state = js.State.build(  # the base at the world origin: G's axes and origin are the world's
        model, joint_positions=rng.uniform(-1, 1, model.dofs), joint_velocities=rng.normal(size=model.dofs),
        base_position=np.zeros(3), base_quaternion=quaternion / np.linalg.norm(quaternion),
        base_velocity=rng.normal(size=6), velocity_representation="inertial",
    )
    B, C = rng.normal(size=(2, model.number_of_links, 6, 6))
    added = 0.01 * (np.einsum("lij,lkj->lik", B, B) + C)
    armature = rng.uniform(0.01, 0.1, model.dofs)
    torques, wrenches = rng.normal(size=model.dofs), rng.normal(size=(model.number_of_links, 6))
    gravity = jnp.array([0.0, 0.0, -9.81])

    @jax.jit
    def solves(state):
        kin = kinematics.kinematics(model, state)
        G_a_B, qdd, factor = articulated_body_factorised(model, kin, torques, wrenches, gravity, added_inertia=added, armature=armature)
        responses = articulated_body_responses(model, factor, torques[None], wrenches[None])
        J = jacobians.link_jacobians(model, state)
        M = mass_matrix(model, state) + jnp.einsum("lia,lij,ljb->ab", J, added, J)
        return (G_a_B, qdd), responses, M, bias_forces(model, state, gravity=gravity), J

    (G_a_B, qdd), (base, joints), M, h, J = solves(state)
    M = np.asarray(M) + np.diag(np.r_[np.zeros(6), armature])
    generalised = np.r_[np.zeros(6), torques] + np.einsum("lia,li->a", np.asarray(J), wrenches)
    for ours, rhs in ((np.r_[G_a_B, qdd], generalised - np.asarray(h)), (np.r_[base[0], joints[0]], generalised)):
        expected = np.linalg.solve(M, rhs)
        np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
