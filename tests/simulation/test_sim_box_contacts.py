"""The free box on the plane: resting, pushed (sliding then sticking) and on tilted planes.

Every run is 6 s of semi-implicit Euler at 1 ms (one compilation for the module).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxsim_like as js

DT = 0.001
STEPS = 6000
MU = 0.5
MAX_PENETRATION = 0.005


@pytest.fixture(scope="module")
def plane_params(box):
    return js.SimulationParams.build(box, dt=DT, friction=MU, max_penetration=MAX_PENETRATION)


@pytest.fixture(scope="module")
def resting(box, sim, plane_params):
    """The final state and last outputs of the box dropped flat from 5 mm above its rest height."""
    state = js.State.build(box, base_position=[0.0, 0.0, 0.05])
    final, states, outputs = sim(box, state, plane_params, steps=STEPS)
    last = jax.tree.map(lambda field: np.asarray(field[-1]), outputs)
    return final, last, np.asarray(states.base_velocity)


def test_box_rests_with_the_predicted_penetration(box, resting, plane_params, figures):
    """Sum of normal forces = m g (0.1 %); each bottom corner sinks by ``d = (m g / K)^(1 / (1 + p))``
    and pushes with its share ``K d^(1 + p) / 4`` of the box's law; the top corners are out of contact."""
    final, last, velocities = resting
    weight = float(box.total_mass) * np.linalg.norm(np.asarray(plane_params.gravity))
    normal_sum = last.contact_forces[:, 2].sum()
    figures("box at rest: sum f_n / (m g) - 1", normal_sum / weight - 1)
    assert abs(normal_sum / weight - 1) < 1e-3
    np.testing.assert_allclose(last.contact_forces[:, :2], 0.0, atol=1e-9)

    K, p = float(plane_params.contact.stiffness), float(plane_params.contact.p)
    expected_depth = (weight / K) ** (1 / (1 + p))
    bottom = np.asarray(box.collidable_points)[:, 2] < 0
    assert bottom.sum() == 4
    assert last.in_contact[bottom].all() and not last.in_contact[~bottom].any()
    depth_error = np.abs(last.penetration[bottom] / expected_depth - 1).max()
    figures("box at rest: penetration / predicted - 1", depth_error)
    assert depth_error < 1e-3
    assert expected_depth == pytest.approx(MAX_PENETRATION, rel=1e-9)  # what from_mass is built for
    np.testing.assert_allclose(last.contact_forces[bottom, 2], K * last.penetration[bottom] ** (1 + p) / 4, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(final.base_position), [0.0, 0.0, 0.05 - expected_depth], atol=1e-6)
    assert np.abs(velocities[-1000:]).max() < 1e-6


@pytest.fixture(scope="module")
def pushed(box, sim, resting, plane_params):
    """The rested box launched along x at 2 m/s: (positions, velocities, max penetration)."""
    final, _, _ = resting
    start = final.replace(base_velocity=final.base_velocity.at[0].set(2.0))
    _, states, outputs = sim(box, start, plane_params, steps=STEPS)
    position, velocity = np.asarray(states.base_position), np.asarray(states.base_velocity)
    return position, velocity, float(np.asarray(outputs.penetration).max())


def test_pushed_box_decelerates_at_mu_g(pushed, plane_params, figures):
    position, velocity, _ = pushed
    vx = velocity[:, 0]
    acceleration = np.gradient(vx, DT)
    sliding = vx > 0.2
    assert sliding.sum() > 200
    deceleration = -np.median(acceleration[sliding])
    ratio = deceleration / (MU * np.linalg.norm(np.asarray(plane_params.gravity)))
    figures("pushed box: deceleration / (mu g)", ratio)
    assert abs(ratio - 1) < 0.02
    np.testing.assert_allclose(position[:, 1], 0.0, atol=1e-9)  # straight line
    np.testing.assert_allclose(velocity[:, [1, 3, 5]], 0.0, atol=1e-9)  # no sideways, roll or yaw motion
    stop_distance = position[np.argmax(vx < 1e-3), 0]
    figures("pushed box: stop distance / (v0^2 / 2 mu g)", stop_distance / (4.0 / (2 * MU * 9.81)))


def test_pushed_box_sticks_after_a_bounded_rebound(pushed, figures):
    """After stopping, the tangential springs give back their deformation (about ``mu d`` at a
    depth ``d``): the rebound stays below ``1.5 mu max_penetration``; from 0.3 s after the stop,
    the box creeps less than 1 mm in 5 s."""
    position, velocity, max_penetration = pushed
    x, vx = position[:, 0], velocity[:, 0]
    stop = int(np.argmax(vx < 1e-3))  # the first time it no longer moves forward
    assert 0 < stop
    rest = stop + int(0.3 / DT)
    end = rest + int(5.0 / DT)
    assert end <= len(x), "the run is too short to watch 5 s of rest"
    rebound = x[stop:].max() - x[stop:].min()
    creep = np.abs(x[rest:end] - x[rest]).max()
    figures("pushed box: rebound after stopping", rebound, "m")
    figures("pushed box: rebound bound 1.5 mu max_penetration", 1.5 * MU * MAX_PENETRATION, "m")
    figures("pushed box: deepest point while sliding", max_penetration, "m")
    figures("pushed box: creep over 5 s at rest", creep, "m")
    assert rebound < 1.5 * MU * MAX_PENETRATION
    assert creep < 1e-3
    assert np.abs(vx[end - 1000 : end]).max() < 1e-6


def tilted(angle_degrees: float, box, sim, plane_params):
    """The box laid flat on a plane tilted about y, released at rest: (displacement downhill, velocity downhill)."""
    theta = np.deg2rad(angle_degrees)
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    params = plane_params.replace(terrain=js.Terrain.plane(normal=normal))
    rest_height = 0.05 - MAX_PENETRATION
    state = js.State.build(
        box, base_position=normal * rest_height, base_quaternion=[np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0]
    )
    _, states, outputs = sim(box, state, params, steps=STEPS)
    downhill = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    position, velocity = np.asarray(states.base_position), np.asarray(states.base_velocity)
    assert np.isfinite(position).all()
    return (position - position[0]) @ downhill, velocity[:, :3] @ downhill


def test_box_stays_on_a_plane_below_the_friction_angle(box, sim, plane_params, figures):
    """20 degrees, tan = 0.36 < mu = 0.5: after the tangential springs load (less than
    ``1.5 mu max_penetration``), the box does not move."""
    displacement, speed = tilted(20.0, box, sim, plane_params)
    creep = np.abs(displacement[1000:] - displacement[1000]).max()
    figures("20 deg plane: elastic displacement", np.abs(displacement).max(), "m")
    figures("20 deg plane: creep over 5 s", creep, "m")
    assert np.abs(displacement).max() < 1.5 * MU * MAX_PENETRATION
    assert creep < 1e-6
    assert np.abs(speed[1000:]).max() < 1e-5


def test_box_slides_above_the_friction_angle(box, sim, plane_params, figures):
    """30 degrees, tan = 0.58 > mu: it slides down at ``g (sin - mu cos)``."""
    theta = np.deg2rad(30.0)
    displacement, speed = tilted(30.0, box, sim, plane_params)
    expected = np.linalg.norm(np.asarray(plane_params.gravity)) * (np.sin(theta) - MU * np.cos(theta))
    window = slice(1000, STEPS)
    acceleration = np.polyfit(DT * np.arange(STEPS)[window], speed[window], 1)[0]
    ratio = acceleration / expected
    figures("30 deg plane: acceleration / g (sin - mu cos)", ratio)
    assert abs(ratio - 1) < 0.02
    assert displacement[-1] > 5.0
