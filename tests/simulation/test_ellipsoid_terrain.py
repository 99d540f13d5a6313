"""Exact ellipsoids on the terrain (issue 29): one collidable point, moved at every step to the
ellipsoid's deepest point along the terrain's normal (:mod:`jaxsim_like.simulation.ellipsoids`).

Checked against the analytic depth ``h - |M^T n|`` at tilted poses (on a plane, on a slope and on
a terrain box), at rest on the ground and on a terrain box (``max_penetration`` within 10 %, the
weight within 0.5 %), and the depth's gradient against central differences at degenerate poses
(equal radii, axis-aligned). Every run is 0.6 s of the implicit step at 1 ms, float64.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import kinematics
from jaxsim_like.dynamics.tree import quaternion_rotation
from jaxsim_like.simulation import ellipsoids, terrain
from jaxsim_like.simulation.model_step import _ellipsoids_facing_terrain

DT, STEPS, MAX_PENETRATION = 0.001, 600, 0.001
RADII = (0.1, 0.06, 0.04)
SLIGHTLY_TILTED = np.array([np.cos(0.02), np.sin(0.02), 0.0, 0.0])  # 0.04 rad about x
TILTED = np.array([np.cos(0.3), np.sin(0.3) / np.sqrt(2), np.sin(0.3) / np.sqrt(2), 0.0])


def egg(radii=RADII, mass: float = 1.0) -> js.Model:
    """A free ellipsoid of ``radii`` [m] and ``mass`` [kg] (MJCF: MuJoCo computes its inertia)."""
    a, b, c = radii
    return js.load_model(f"""<mujoco><worldbody><body name="egg"><freejoint/>
        <geom type="ellipsoid" size="{a} {b} {c}" mass="{mass}"/></body></worldbody></mujoco>""")


@pytest.fixture(scope="module")
def model() -> js.Model:
    return egg()


def test_an_ellipsoid_is_one_point_and_a_shape(model):
    assert model.shape_kind == ("ellipsoid",)
    np.testing.assert_allclose(np.asarray(model.shape_size), [RADII])
    np.testing.assert_allclose(np.asarray(model.collidable_points), [[0.0, 0.0, -RADII[2]]])
    sampled = js.load_model(
        """<mujoco><worldbody><body name="egg"><freejoint/><geom type="ellipsoid" size="0.1 0.06 0.04" mass="1"/>
        </body></worldbody></mujoco>""", contact_sampling=js.ContactSampling(sphere_samples=12))
    assert sampled.shape_kind == () and len(sampled.point_link) == 12 and sampled.point_ellipsoid is None


def deepest_point(model: js.Model, ground: js.Terrain, position, quaternion) -> jax.Array:
    """The ellipsoid's one point ``(3,)`` [m] at a pose, as the step places it."""
    state = js.State.build(model, base_position=position, base_quaternion=quaternion)
    W_H_L = kinematics.forward_kinematics(model, state)
    return _ellipsoids_facing_terrain(model, ground, W_H_L, jnp.zeros(3, W_H_L.dtype), jnp.zeros((1, 3), W_H_L.dtype))[0]


def deepest_depth(model: js.Model, ground: js.Terrain, position, quaternion) -> jax.Array:
    """The depth [m] of the ellipsoid's one point at a pose, as the step computes it."""
    return terrain.penetration(ground, deepest_point(model, ground, position, quaternion)[None])[0][0]


@pytest.mark.parametrize("angle", [0.0, 0.2])
def test_the_depth_is_analytic_at_tilted_poses(model, angle):
    """``depth = |M^T n| - n . c`` on a plane of normal ``n`` through the origin, ``M = R diag(radii)``."""
    normal = np.array([np.sin(angle), 0.0, np.cos(angle)])
    ground = js.Terrain.plane().replace(plane_normal=jnp.asarray(normal))
    for quaternion in (np.array([1.0, 0.0, 0.0, 0.0]), TILTED, np.array([0.5, 0.5, -0.5, 0.5])):
        centre = np.array([0.03, -0.02, 0.05])
        M = quaternion_rotation(quaternion) @ np.diag(RADII)
        expected = np.linalg.norm(M.T @ normal) - normal @ centre
        assert float(deepest_depth(model, ground, centre, quaternion)) == pytest.approx(expected, abs=1e-12)


def test_the_point_on_a_height_function_converges(model):
    """On a wavy height terrain, the point found is the support point of ``-n(p)``, ``n(p)`` the
    surface's normal under it, to 1e-6 m (the fixed passes converge), and the deepest of dense
    samples of the ellipsoid's surface to 1e-5 m of depth."""
    ground = js.Terrain.heightmap(lambda x, y: 0.02 * jnp.sin(4.0 * x) * jnp.cos(3.0 * y))
    centre = np.array([0.1, 0.05, 0.05])
    point = deepest_point(model, ground, centre, TILTED)
    normal = terrain.penetration(ground, point[None])[1][0]
    M = quaternion_rotation(TILTED) @ np.diag(RADII)
    fixed = ellipsoids.support(jnp.asarray(centre), jnp.asarray(M), -normal)
    assert float(jnp.linalg.norm(fixed - point)) < 1e-6
    u = np.random.default_rng(0).normal(size=(200000, 3))
    surface = centre + (u / np.linalg.norm(u, axis=1, keepdims=True)) @ M.T
    sampled = float(jnp.max(terrain.penetration(ground, jnp.asarray(surface))[0]))
    found = float(terrain.penetration(ground, point[None])[0][0])
    assert found == pytest.approx(sampled, abs=1e-5) and found >= sampled - 1e-9


def rest(model: js.Model, ground: js.Terrain, position, quaternion, sim):
    params = js.SimulationParams.build(model, dt=DT, max_penetration=MAX_PENETRATION, terrain=ground, static_boxes="points")
    state = js.State.build(model, base_position=position, base_quaternion=quaternion)
    final, _, outputs = sim(model, state, params, steps=STEPS)
    return final, outputs


@pytest.mark.parametrize("where", ["ground", "terrain box"])
def test_an_ellipsoid_rests_at_max_penetration_with_its_weight(model, sim, figures, where):
    box = np.eye(4)
    box[2, 3] = 0.15
    ground = js.Terrain.plane() if where == "ground" else js.Terrain.plane().with_boxes([box], [[0.3, 0.3, 0.15]])
    floor = 0.0 if where == "ground" else 0.3
    final, outputs = rest(model, ground, [0.0, 0.0, floor + RADII[2]], SLIGHTLY_TILTED, sim)
    depth = float(np.asarray(outputs.penetration[-1]).max())
    support = float(np.asarray(outputs.contact_forces[-1, :, 2]).sum())
    weight = float(model.total_mass) * 9.81
    figures(f"ellipsoid on the {where} at rest: depth / max_penetration", depth / MAX_PENETRATION)
    figures(f"ellipsoid on the {where} at rest: f_n / (m g) - 1", support / weight - 1)
    assert abs(depth / MAX_PENETRATION - 1) < 0.1
    assert abs(support / weight - 1) < 0.005
    # Rocked to rest on its flattest side: the lowest point under the centre, its smallest radius down.
    height = float(final.base_position[2]) - floor
    assert height == pytest.approx(RADII[2] - depth, abs=2e-4)


@pytest.mark.parametrize("radii, quaternion", [((0.05, 0.05, 0.05), TILTED), (RADII, np.array([1.0, 0.0, 0.0, 0.0]))],
                         ids=["sphere-like", "axis-aligned"])
def test_depth_gradients_match_central_differences(radii, quaternion):
    """The gradient of the depth on a slope with respect to the pose and the slope's normal."""
    model = egg(radii)

    def depth(x):
        normal = jnp.array([jnp.sin(x[6]), 0.0, jnp.cos(x[6])])
        ground = js.Terrain.plane().replace(plane_normal=normal)
        q = jnp.asarray(quaternion) + jnp.concatenate([jnp.zeros(1), x[3:6]])
        return deepest_depth(model, ground, x[:3], q / jnp.linalg.norm(q))

    x = jnp.array([0.01, 0.02, 0.03, 0.0, 0.0, 0.0, 0.1])
    analytic = np.asarray(jax.jit(jax.grad(depth))(x))
    h, run = 1e-6, jax.jit(depth)
    numeric = np.array([(run(x.at[i].add(h)) - run(x.at[i].add(-h))) / (2 * h) for i in range(len(x))])
    assert np.isfinite(analytic).all()
    np.testing.assert_allclose(analytic, numeric, atol=1e-7)


def test_trajectory_gradients_match_central_differences(model, figures):
    """Reverse-mode gradients of where a rocking ellipsoid is after 0.1 s (its centre's height and
    x) with respect to its initial spin about y and its initial height, against central
    differences: the moved point's motion over the body, differentiated through the step."""
    params = js.SimulationParams.build(model, dt=DT, max_penetration=MAX_PENETRATION)
    steps = 100

    def final(x):
        state = js.State.build(model, base_position=jnp.array([0.0, 0.0, RADII[2] - 0.0008 + x[1]]),
                               base_quaternion=jnp.asarray(SLIGHTLY_TILTED),
                               base_velocity=jnp.array([0.0, 0.0, 0.0, 0.0, x[0], 0.0]))
        end, _ = js.rollout(model, state, jnp.zeros((steps, 0)), params=params)
        return end.base_position[jnp.array([0, 2])]

    x = jnp.array([0.5, 0.0])
    analytic = np.asarray(jax.jit(jax.jacrev(final))(x))
    run = jax.jit(final)
    h = 1e-6
    numeric = np.stack([(run(x.at[i].add(h)) - run(x.at[i].add(-h))) / (2 * h) for i in range(2)], axis=1)
    figures("ellipsoid rocking on the ground: gradient vs central differences, largest difference",
            float(np.max(np.abs(analytic - numeric))))
    assert np.isfinite(analytic).all()
    np.testing.assert_allclose(analytic, numeric, rtol=1e-4, atol=1e-6)
