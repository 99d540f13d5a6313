"""A screw joint in the step: a nut on a vertical lead screw (its centre of mass on the axis)
is a one-degree system with inertia ``I_zz + m h^2`` and gravity torque ``-m g h``. Falling
freely, its angle follows ``q = a t^2 / 2``, ``a = -m g h / (I_zz + m h^2)`` (RK4 to rounding;
the semi-implicit Euler step exactly as its recurrence, ``q_n = a dt^2 n (n + 1) / 2``). With
the joint's damping ``d``, the implicit Euler step takes ``q_dot_n = v (1 - (1 + dt / T)^-n)``
towards the terminal ``v = -m g h / d``, ``T = (I_zz + m h^2) / d`` (its exact recurrence, the
damping taken at the end of the step)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

MASS, I_ZZ, PITCH, DAMPING = 0.5, 2e-4, 0.004, 0.002  # kg, kg m^2, m per revolution, N m s/rad
NUT = f"""<sdf version="1.10"><model name="nut">
  <link name="frame"/>
  <joint name="anchor" type="fixed"><parent>world</parent><child>frame</child></joint>
  <link name="nut"><pose>0 0 1 0 0 0</pose>
    <inertial><mass>{MASS}</mass><inertia><ixx>3e-4</ixx><iyy>3e-4</iyy><izz>{I_ZZ}</izz></inertia></inertial></link>
  <joint name="thread" type="screw"><parent>frame</parent><child>nut</child>
    <screw_thread_pitch>{PITCH}</screw_thread_pitch>
    <axis><xyz>0 0 1</xyz><dynamics><damping>{{damping}}</damping></dynamics></axis></joint>
</model></sdf>"""
G = js.dynamics.kinematics.STANDARD_GRAVITY
H = PITCH / (2 * np.pi)
STEPS, DT = 500, 0.001


@jax.jit
def _run(model: js.Model, params: js.SimulationParams) -> tuple[jax.Array, jax.Array]:
    _, (states, _) = js.rollout(model, js.State.build(model), jnp.zeros((STEPS, 1)), params=params)
    return states.joint_positions[:, 0], states.joint_velocities[:, 0]


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_a_nut_falls_along_its_screw_with_the_screw_inertia(integrator):
    model = js.load_model(NUT.format(damping=0.0))
    q, _ = _run(model, js.SimulationParams.build(model, dt=DT, integrator=integrator))
    n = np.arange(1, STEPS + 1)
    a = -MASS * G * H / (I_ZZ + MASS * H**2)
    expected = a * DT**2 * (n * (n + 1) if integrator == "semi_implicit_euler" else n**2) / 2
    assert abs(expected[-1]) > 1.0
    assert np.abs(np.asarray(q) - expected).max() < 1e-9 * abs(expected[-1])


def test_a_damped_nut_approaches_its_terminal_speed():
    model = js.load_model(NUT.format(damping=DAMPING))
    _, qd = _run(model, js.SimulationParams.build(model, dt=DT))
    speed, time_constant = -MASS * G * H / DAMPING, (I_ZZ + MASS * H**2) / DAMPING
    assert float(qd[-1]) == pytest.approx(speed * (1 - (1 + DT / time_constant) ** -STEPS), rel=1e-9)
