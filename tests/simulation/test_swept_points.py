"""Swept collidable points on the terrain: a sphere is its centre of its radius, a capsule the two
ends of its segment; they touch at ``p - r n``, so shapes rest at ``max_penetration`` and a
sphere rolls.

Every run is 0.6 s of the implicit step at 1 ms through the shared rollout (one compilation per
model; the sphere's runs on flat ground and on the slope share one).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

DT = 0.001
STEPS = 600
MAX_PENETRATION = 0.001
RADIUS, HALF_LENGTH = 0.05, 0.15  # the capsule's; the sphere asset has radius 0.1 m, 1 kg, 2/5 m r^2
SLOPE = 0.2  # [rad]


def solid(name: str, geometry: str, mass: float, inertia: tuple[float, float, float]) -> js.Model:
    """A free one-link model of ``mass`` [kg] and principal ``inertia`` [kg m^2] about its centre."""
    ixx, iyy, izz = inertia
    return js.load_model(
        f"""<robot name="{name}"><link name="link"><inertial><mass value="{mass}"/>
        <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry>{geometry}</geometry></collision></link></robot>"""
    )


@pytest.fixture(scope="module")
def capsule() -> js.Model:
    """2 kg, radius 5 cm, segment 0.3 m along its z axis."""
    side, axial = 2.0 * (3 * RADIUS**2 + (2 * HALF_LENGTH) ** 2) / 12, 2.0 * RADIUS**2 / 2
    return solid("capsule", f'<capsule radius="{RADIUS}" length="{2 * HALF_LENGTH}"/>', 2.0, (side, side, axial))


@pytest.fixture(scope="module")
def cylinder() -> js.Model:
    """1.5 kg, radius 8 cm, 0.2 m long: two rims of 8 points of radius 0."""
    side, axial = 1.5 * (3 * 0.08**2 + 0.2**2) / 12, 1.5 * 0.08**2 / 2
    return solid("cylinder", '<cylinder radius="0.08" length="0.2"/>', 1.5, (side, side, axial))


def lowest_height(model: js.Model, quaternion) -> float:
    """How far the lowest material point lies below the base origin at orientation ``quaternion`` (wxyz)."""
    w, x, y, z = quaternion
    R = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])
    return float(-np.min(np.asarray(model.collidable_points) @ R.T[:, 2] - np.asarray(model.point_radius)))


def test_mjcf_capsules_and_spheres_are_swept_points():
    """MuJoCo's ``fromto`` capsule is the two ends of its segment, of its radius; a sphere its centre."""
    pytest.importorskip("mujoco")
    model = js.load_model(
        """<mujoco><worldbody><body name="b"><freejoint/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/><geom type="sphere" pos="0 0.3 0" size="0.07"/>
        </body></worldbody></mujoco>"""
    )
    np.testing.assert_allclose(np.asarray(model.collidable_points), [[0, 0, 0], [0.4, 0, 0], [0, 0.3, 0]], atol=1e-12)
    np.testing.assert_allclose(np.asarray(model.point_radius), [0.05, 0.05, 0.07])


LYING = (np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0)  # the capsule's axis along world y
UPRIGHT = (1.0, 0.0, 0.0, 0.0)


def test_spheres_and_capsules_are_few_swept_points(sphere, capsule, cylinder, box):
    assert (len(sphere.point_link), len(capsule.point_link), len(cylinder.point_link), len(box.point_link)) == (1, 2, 16, 8)
    np.testing.assert_allclose(np.asarray(sphere.point_radius), [0.1])
    np.testing.assert_allclose(np.asarray(capsule.collidable_points), [[0, 0, HALF_LENGTH], [0, 0, -HALF_LENGTH]])
    np.testing.assert_allclose(np.asarray(capsule.point_radius), [RADIUS, RADIUS])
    assert not np.asarray(box.point_radius).any() and not np.asarray(cylinder.point_radius).any()


@pytest.mark.parametrize(
    "name, orientation, touching",
    # A standing cylinder rests on the plane on its cap ring's square (``contact_slots.square_points``).
    [("sphere", UPRIGHT, 1), ("capsule", LYING, 2), ("capsule", UPRIGHT, 1), ("box", UPRIGHT, 4), ("cylinder", UPRIGHT, 4)],
    ids=["sphere", "capsule lying", "capsule standing", "box", "cylinder"],
)
def test_shapes_rest_at_max_penetration(request, sim, figures, name, orientation, touching):
    """Dropped from touching the ground with the default contact parameters: after 0.6 s the
    deepest point is ``max_penetration`` deep (10 %) and the normal forces carry the weight (0.5 %)."""
    model = request.getfixturevalue(name)
    params = js.SimulationParams.build(model, dt=DT, max_penetration=MAX_PENETRATION)
    state = js.State.build(model, base_position=[0.0, 0.0, lowest_height(model, orientation)], base_quaternion=orientation)
    final, _, outputs = sim(model, state, params, steps=STEPS)
    depth = float(np.asarray(outputs.penetration[-1]).max())
    weight = float(model.total_mass) * 9.81
    support = float(np.asarray(outputs.contact_forces[-1, :, 2]).sum())
    label = request.node.callspec.id
    figures(f"swept points, {label} at rest: depth / max_penetration", depth / MAX_PENETRATION)
    figures(f"swept points, {label} at rest: sum f_n / (m g) - 1", support / weight - 1)
    assert int(np.asarray(outputs.in_contact[-1]).sum()) == touching
    assert abs(depth / MAX_PENETRATION - 1) < 0.1
    assert abs(support / weight - 1) < 0.005
    assert np.isfinite(np.asarray(final.base_position)).all()


def slope_terrain(angle) -> js.Terrain:
    """A plane through the origin rising along -x at ``angle`` [rad, traced or not] (downhill is +x)."""
    return js.Terrain.plane().replace(plane_normal=jnp.array([jnp.sin(angle), 0.0, jnp.cos(angle)]))


def on_slope(sphere: js.Model, angle, speed) -> js.State:
    """The sphere resting on the slope (``max_penetration`` deep), rolling downhill at ``speed`` [m/s]."""
    normal = jnp.array([jnp.sin(angle), 0.0, jnp.cos(angle)])
    downhill = jnp.array([jnp.cos(angle), 0.0, -jnp.sin(angle)])
    spin = jnp.cross(normal, downhill) * speed / 0.1
    return js.State.build(
        sphere,
        base_position=(0.1 - MAX_PENETRATION) * normal,
        base_velocity=jnp.concatenate([speed * downhill, spin]),
    )


def test_a_sphere_rolls_down_a_slope(sphere, sim, figures):
    """A solid sphere on a 0.2 rad slope with friction 0.5 rolls without slipping: it accelerates
    at (5/7) g sin(theta) (2 %) and its speed is omega r (1 %)."""
    params = js.SimulationParams.build(sphere, dt=DT, max_penetration=MAX_PENETRATION, terrain=slope_terrain(SLOPE))
    _, states, outputs = sim(sphere, on_slope(sphere, SLOPE, 0.0), params, steps=STEPS)
    downhill = np.array([np.cos(SLOPE), 0.0, -np.sin(SLOPE)])
    axis = np.cross([np.sin(SLOPE), 0.0, np.cos(SLOPE)], downhill)
    velocity = np.asarray(states.base_velocity)
    speed, spin = velocity[:, :3] @ downhill, velocity[:, 3:] @ axis
    time = DT * np.arange(1, STEPS + 1)
    late = time > 0.2
    acceleration = np.polyfit(time[late], speed[late], 1)[0]
    expected = 5 / 7 * 9.81 * np.sin(SLOPE)
    figures("swept sphere rolling: acceleration / (5/7 g sin theta) - 1", acceleration / expected - 1)
    figures("swept sphere rolling: v / (omega r) - 1 at 0.6 s", speed[-1] / (spin[-1] * 0.1) - 1)
    assert abs(acceleration / expected - 1) < 0.02
    assert abs(speed[-1] / (spin[-1] * 0.1) - 1) < 0.01
    assert np.asarray(outputs.in_contact).all()


ROLL_STEPS = 100


@pytest.fixture(scope="module")
def rolled(sphere):
    """``(speed, angle) -> (distance, d distance / d speed, d distance / d angle)``, compiled once:
    the distance [m] the sphere rolls downhill in 0.1 s from rolling at ``speed`` [m/s] on a slope
    of ``angle`` [rad], and its derivatives in forward mode (two JVPs, one program that also gives
    the values of the central differences; reverse mode through the rollout is checked in
    ``test_sim_gradients``)."""
    params = js.SimulationParams.build(sphere, dt=DT, max_penetration=MAX_PENETRATION, terrain=slope_terrain(SLOPE))

    def distance(speed, angle):
        world = params.replace(terrain=slope_terrain(angle))
        start = on_slope(sphere, angle, speed)
        final, _ = js.rollout(sphere, start, jnp.zeros((ROLL_STEPS, 0)), params=world)
        downhill = jnp.array([jnp.cos(angle), 0.0, -jnp.sin(angle)])
        return jnp.dot(final.base_position - start.base_position, downhill)

    def derivatives(speed, angle):
        value, d_speed = jax.jvp(lambda s: distance(s, angle), (speed,), (jnp.ones_like(speed),))
        return value, d_speed, jax.jvp(lambda a: distance(speed, a), (angle,), (jnp.ones_like(angle),))[1]

    return jax.jit(derivatives)


def test_gradients_through_a_rolling_sphere_match_central_differences(rolled, figures):
    """d(distance)/d(initial speed) and d(distance)/d(slope) agree with central differences (1e-5)."""
    speed, angle, h = 0.5, SLOPE, 1e-5
    d_speed, d_angle = (float(g) for g in rolled(speed, angle)[1:])

    def distance(speed, angle):
        return float(rolled(speed, angle)[0])

    fd_speed = (distance(speed + h, angle) - distance(speed - h, angle)) / (2 * h)
    fd_angle = (distance(speed, angle + h) - distance(speed, angle - h)) / (2 * h)
    figures("swept sphere rolling: d distance / d v0, AD / FD - 1", d_speed / fd_speed - 1)
    figures("swept sphere rolling: d distance / d slope, AD / FD - 1", d_angle / fd_angle - 1)
    assert d_speed == pytest.approx(ROLL_STEPS * DT, rel=0.05)  # the speed carries on
    assert d_speed == pytest.approx(fd_speed, rel=1e-5)
    assert d_angle == pytest.approx(fd_angle, rel=1e-5)
    assert d_angle > 0
