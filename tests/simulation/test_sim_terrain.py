"""Terrains: a tilted plane, a height function (normal by autodiff) and static boxes, met by a
model's collidable points (``static_boxes="points"``; the boxes met as shapes:
``tests/simulation/test_step_boxes.py``)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import solid

import jaxsim_like as js
from jaxsim_like.simulation import penetration

AMPLITUDE, KX, KY, BASE_HEIGHT = 0.05, 2.0, 3.0, 0.2


def bumps(x, y):
    """A sine landscape ``0.2 + 0.05 sin(2 x) cos(3 y)`` (a jax.numpy function)."""
    return BASE_HEIGHT + AMPLITUDE * jnp.sin(KX * x) * jnp.cos(KY * y)


def bumps_normal(x, y):
    gradient = np.stack(
        [AMPLITUDE * KX * np.cos(KX * x) * np.cos(KY * y), -AMPLITUDE * KY * np.sin(KX * x) * np.sin(KY * y)], axis=-1
    )
    normal = np.concatenate([-gradient, np.ones_like(x)[..., None]], axis=-1)
    return normal / np.linalg.norm(normal, axis=-1, keepdims=True)


def test_tilted_plane_normal_and_depth():
    normal = np.array([1.0, 0.0, 1.0]) / np.sqrt(2)
    anchor = np.array([0.0, 0.0, 0.3])
    terrain = js.Terrain.plane(normal=[2.0, 0.0, 2.0], point=anchor)
    points = np.random.default_rng(0).normal(size=(20, 3))
    depth, normals = map(np.asarray, penetration(terrain, jnp.asarray(points)))
    np.testing.assert_allclose(normals, np.broadcast_to(normal, (20, 3)), atol=1e-15)
    np.testing.assert_allclose(depth, (anchor - points) @ normal, atol=1e-14)
    on_plane = anchor + np.array([1.0, 2.0, -1.0])  # (1, 2, -1) is orthogonal to the normal
    inside = on_plane - 0.01 * normal
    depth, _ = penetration(terrain, jnp.asarray([on_plane, inside]))
    np.testing.assert_allclose(np.asarray(depth), [0.0, 0.01], atol=1e-14)


def test_height_function_normal_from_autodiff():
    rng = np.random.default_rng(1)
    xy = rng.uniform(-2, 2, size=(50, 2))
    below = rng.uniform(0.0, 0.01, size=50)
    points = np.column_stack([xy, np.asarray(bumps(xy[:, 0], xy[:, 1])) - below])
    depth, normals = map(np.asarray, penetration(js.Terrain.heightmap(bumps), jnp.asarray(points)))
    expected = bumps_normal(xy[:, 0], xy[:, 1])
    np.testing.assert_allclose(normals, expected, atol=1e-14)
    assert np.abs(expected[:, :2]).max() > 0.1  # the slopes are not negligible
    np.testing.assert_allclose(depth, below * expected[:, 2], atol=1e-15)  # vertical depth along the normal
    above = points + np.array([0.0, 0.0, 0.02])
    assert (np.asarray(penetration(js.Terrain.heightmap(bumps), jnp.asarray(above))[0]) < 0).all()


def test_static_box_faces():
    yaw = 0.4
    R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    W_H_box = np.eye(4)
    W_H_box[:3, :3], W_H_box[:3, 3] = R, [1.0, 0.0, 0.3]
    terrain = js.Terrain.plane().with_boxes(W_H_box, [0.3, 0.2, 0.15])
    local = np.array([[0.0, 0.0, 0.14], [0.29, 0.0, 0.0], [0.0, -0.19, 0.05], [0.0, 0.0, 0.2], [0.0, 0.0, -0.31]])
    points = local @ R.T + W_H_box[:3, 3]
    depth, normals = map(np.asarray, penetration(terrain, jnp.asarray(points)))
    np.testing.assert_allclose(depth[:3], [0.01, 0.01, 0.01], atol=1e-14)
    np.testing.assert_allclose(normals[:3], [[0, 0, 1], R[:, 0], -R[:, 1]], atol=1e-14)
    assert depth[3] < 0  # above the top face
    np.testing.assert_allclose(depth[4], 0.01, atol=1e-14)  # under the box: the ground, 1 cm deep
    np.testing.assert_allclose(normals[4], [0, 0, 1], atol=1e-15)


BOX_CENTER, BOX_HALF = np.array([1.0, 0.0, 0.3]), np.array([0.3, 0.2, 0.15])
VALLEY = np.array([-np.pi / (2 * KX), 0.0])  # sin(2 x) = -1, cos(3 y) = 1: a local minimum


@pytest.fixture(scope="module")
def landscape():
    """The sine landscape with a static box (yawed 0.4 rad) standing on it around x = 1."""
    yaw = 0.4
    W_H_box = np.eye(4)
    W_H_box[:2, :2] = [[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]
    W_H_box[:3, 3] = BOX_CENTER
    return js.Terrain.heightmap(bumps).with_boxes(W_H_box, BOX_HALF)


def settle(sphere, sim, landscape, xy, height):
    """The sphere released at rest at ``(x, y, height)`` over the landscape: final position and last outputs."""
    params = js.SimulationParams.build(sphere, terrain=landscape, static_boxes="points")
    state = js.State.build(sphere, base_position=[*xy, height])
    final, states, outputs = sim(sphere, state, params, steps=3000)
    assert np.isfinite(np.asarray(states.base_position)).all()
    assert np.abs(np.asarray(states.base_velocity[-200:])).max() < 1e-4
    K, p = float(params.contact.stiffness), float(params.contact.p)
    single_point_depth = (float(sphere.total_mass) * np.linalg.norm(np.asarray(params.gravity)) / K) ** (1 / (1 + p))
    return np.asarray(final.base_position), outputs, single_point_depth


def test_sphere_rests_on_a_static_box(sphere, sim, landscape, figures):
    """Dropped straight onto the top face, the sphere rests on its bottom point, sunk by the
    single-point depth ``(m g / K)^(1 / (1 + p))`` below the top (a balanced but exact equilibrium)."""
    top = BOX_CENTER[2] + BOX_HALF[2]
    position, outputs, depth = settle(sphere, sim, landscape, BOX_CENTER[:2], top + 0.12)
    figures("sphere on a box: rest height error", position[2] - (top + 0.1 - depth), "m")
    np.testing.assert_allclose(position, [*BOX_CENTER[:2], top + 0.1 - depth], atol=1e-6)
    touching = np.asarray(outputs.in_contact[-1])
    assert touching.sum() == 1
    np.testing.assert_allclose(np.asarray(outputs.contact_normals[-1])[touching], [[0.0, 0.0, 1.0]], atol=1e-12)


def test_sphere_settles_in_a_valley_of_the_height_function(sphere, sim, landscape, figures):
    """Released over a valley of the landscape, the sphere (one swept point) comes to rest at its
    bottom, its contact force carrying its weight; the step's normal is the analytic one of the
    height function at the contact point."""
    bottom = BASE_HEIGHT - AMPLITUDE
    position, outputs, _ = settle(sphere, sim, landscape, VALLEY, bottom + 0.12)
    offset = np.linalg.norm(position[:2] - VALLEY)
    figures("sphere in a valley: horizontal distance to the valley bottom", offset, "m")
    assert offset < 1e-3
    clearance = position[2] - float(bumps(*position[:2]))
    figures("sphere in a valley: centre height above the terrain", clearance, "m")
    assert 0.098 < clearance < 0.1  # its radius, less about max_penetration
    assert np.asarray(outputs.penetration[-1]).max() < 0.0012
    weight = float(sphere.total_mass) * 9.81
    np.testing.assert_allclose(np.asarray(outputs.contact_forces[-1]).sum(axis=0), [0.0, 0.0, weight], atol=1e-3 * weight)
    points = np.asarray(outputs.contact_positions[-1])
    normals = np.asarray(outputs.contact_normals[-1])
    np.testing.assert_allclose(normals, bumps_normal(points[:, 0], points[:, 1]), atol=1e-12)


def test_a_point_in_two_surfaces_is_pushed_as_by_both():
    """A point in a corner of two perpendicular walls, ``d`` deep in each: one contact along the
    diagonal, ``2^(1/3) d`` deep, at which the default law (``K d^(3/2)``) pushes as the two walls
    would together; entering the second wall, its depth and normal are continuous."""
    walls = np.stack([np.eye(4), np.eye(4)])
    walls[0, 0, 3], walls[1, 1, 3] = 0.6, 0.6  # faces at x = 0.5 and y = 0.5
    terrain = js.Terrain.plane(height=-1.0).with_boxes(walls, [[0.1, 1.0, 1.0], [1.0, 0.1, 1.0]])
    d = 0.002
    depth, normals = map(np.asarray, penetration(terrain, jnp.asarray([[0.5 + d, 0.5 + d, 0.0]])))
    np.testing.assert_allclose(depth, [2 ** (1 / 3) * d], rtol=1e-12)
    np.testing.assert_allclose(normals, [[-np.sqrt(0.5), -np.sqrt(0.5), 0.0]], atol=1e-12)
    np.testing.assert_allclose(depth**1.5, np.sqrt(2) * d**1.5, rtol=1e-12)
    entering = np.array([[0.5 + d, 0.5 + e, 0.0] for e in (-1e-9, 1e-9)])  # just out of, just in the second wall
    depth, normals = map(np.asarray, penetration(terrain, jnp.asarray(entering)))
    np.testing.assert_allclose(depth, [d, d], atol=1e-12)
    np.testing.assert_allclose(normals, [[-1.0, 0.0, 0.0]] * 2, atol=1e-9)


def test_a_ball_pressed_into_a_corner_rests_there(sim, figures):
    """A ball (one swept point) under gravity towards a vertical corner of two static walls, along
    its bisector, comes to rest pressed into both, its contact force balancing its weight (the
    deepest wall alone would switch between the two from step to step: the ball rattled)."""
    ball = solid("ball", '<sphere radius="0.03"/>', 0.2, 0.4 * 0.2 * 0.03**2)
    walls = np.stack([np.eye(4), np.eye(4)])
    walls[0, 0, 3], walls[1, 1, 3] = 0.11, 0.11  # faces at x = 0.1 and y = 0.1
    terrain = js.Terrain.plane(height=-1.0).with_boxes(walls, [[0.01, 0.2, 0.2], [0.2, 0.01, 0.2]])
    gravity = np.array([4.0, 4.0, 0.0])
    params = js.SimulationParams.build(ball, dt=0.002, terrain=terrain, gravity=gravity, static_boxes="points")
    state = js.State.build(ball, base_position=[0.05, 0.06, 0.0])
    _, states, outputs = sim(ball, state, params, steps=1500)
    speed = np.linalg.norm(np.asarray(states.base_velocity[-250:, :3]), axis=-1).max()
    figures("ball in a corner: fastest from 2.5 to 3 s", speed, "m/s")
    assert speed < 1e-4
    position = np.asarray(states.base_position[-1])
    assert np.all(position[:2] > 0.1 - 0.03)  # in both walls
    np.testing.assert_allclose(np.asarray(outputs.contact_forces[-1]).sum(axis=0), -0.2 * gravity, rtol=5e-3, atol=1e-9)


def test_a_box_pushed_into_a_wall_on_the_floor_rests_on_both(sim, figures):
    """A 1 kg cube on the floor pushed along x into a static wall by one and by two times its
    weight: 6 of its corners touch (4 on the floor, 4 in the wall, 2 in both), all 6 carry it and
    it comes to rest, its contact forces balancing its weight and the push. (On the 4 deepest
    corners alone, as on a plane, the floor's far corners and the wall's top ones took those slots
    in turn: the cube rocked about its corner edge at 0.2-0.5 rad/s.)"""
    cube = solid("cube", '<box size="0.1 0.1 0.1"/>', 1.0, 1.0 * 0.1**2 / 6)
    wall = np.eye(4)
    wall[0, 3] = 0.6  # the wall's face at x = 0.5, reaching below the floor
    terrain = js.Terrain.plane().with_boxes(wall[None], [[0.1, 1.0, 1.0]])
    params = js.SimulationParams.build(cube, dt=0.005, terrain=terrain, static_boxes="points")
    state = js.State.build(cube, base_position=[0.451, 0.0, 0.049])
    weight = 9.81 * np.array([0.0, 0.0, 1.0])
    for times in (1.0, 2.0):
        push = np.array([[times * 9.81, 0.0, 0.0, 0.0, 0.0, 0.0]])
        _, states, outputs = sim(cube, state, params, steps=600, link_wrenches=push)
        speed = np.abs(np.asarray(states.base_velocity[-100:])).max()
        figures(f"box pushed into a wall by {times:g} weights: fastest from 2.5 to 3 s", speed, "m/s, rad/s")
        assert speed < 1e-6
        assert int(np.sum(np.asarray(outputs.in_contact[-1]))) == 6
        np.testing.assert_allclose(np.asarray(outputs.contact_forces[-1]).sum(axis=0), weight - push[0, :3], atol=1e-6 * 9.81)
