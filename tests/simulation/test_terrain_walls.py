"""A terrain box standing on the floor (a bin's wall): its bottom face lies on the ground, no face
a body can reach, so a body's corner inside the wall just above the floor leaves by the wall's
side, never down through its bottom into the floor; one in the floor at the wall's foot is the
floor's (``terrain._buried_faces``, ``terrain.box_penetration``). A box that floats (a shelf)
keeps its bottom face."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import solid
from scipy.spatial.transform import Rotation

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY
from jaxsim_like.simulation import penetration
from jaxsim_like.simulation.world import WorldModel, world_rollout

WALL, THICK, HIGH = 0.5, 0.1, 0.5  # [m]: the wall's face across x, its half thickness and half height
MAX_PENETRATION, DT, TILT = 0.001, 0.005, np.radians(35.0)


def _wall(bottom: float = 0.0, floor: float = 0.0) -> js.Terrain:
    """The floor at height ``floor`` [m] and a wall box from ``bottom`` [m] up, its face at x = WALL."""
    H = np.eye(4)
    H[0, 3], H[2, 3] = WALL + THICK, bottom + HIGH
    return js.Terrain.plane(height=floor).with_boxes(H[None], [[THICK, 1.0, HIGH]])


def _at(terrain: js.Terrain, points) -> tuple[np.ndarray, np.ndarray]:
    return tuple(map(np.asarray, penetration(terrain, jnp.asarray(points, dtype=jnp.float64))))


def test_a_point_inside_a_wall_just_above_the_floor_leaves_by_the_wall_side():
    """1 mm inside a wall standing on the floor, 0.2 to 0.9 mm above the floor (nearer its bottom
    face than its side): pushed along the side's normal -x, not the bottom's -z, as deep as it is
    in the wall (its height above the floor)."""
    heights = np.array([0.0002, 0.0005, 0.0009])
    depth, normal = _at(_wall(), [[WALL + 0.001, 0.0, h] for h in heights])
    np.testing.assert_allclose(depth, heights, rtol=1e-9)
    np.testing.assert_allclose(normal, [[-1.0, 0.0, 0.0]] * 3, atol=1e-12)


def test_a_shelf_keeps_its_bottom_face_and_a_sunk_wall_its_sides():
    """A box floating 1 cm above the floor (a shelf) pushes a point 0.5 mm inside its bottom face
    down; a wall reaching 0.5 m below the floor pushes a point 1 mm inside it 0.5 mm above the
    floor out by its side, as a wall standing on the floor does."""
    depth, normal = _at(_wall(floor=-0.01), [[WALL + 0.001, 0.0, 0.0005]])
    np.testing.assert_allclose(depth, [0.0005], rtol=1e-9)
    np.testing.assert_allclose(normal, [[0.0, 0.0, -1.0]], atol=1e-12)
    depth, normal = _at(_wall(bottom=-0.5), [[WALL + 0.001, 0.0, 0.0005]])
    np.testing.assert_allclose(depth, [0.001], rtol=1e-12)
    np.testing.assert_allclose(normal, [[-1.0, 0.0, 0.0]], atol=1e-12)


def test_a_point_sinking_at_the_foot_of_a_wall_passes_from_the_wall_to_the_floor_continuously():
    """Down a vertical line 1 mm inside a wall standing on the floor, from 3 mm above the floor to
    3 mm below it, samples 1 um apart: the wall's side (-x) above the floor, 1 mm deep down to
    1 mm above the floor and then as deep as the point is above it, the floor's (+z) below it; the
    depth changes by no more than the line's step between samples (no contact switches off at
    depth) and no contact points down."""
    d, step = 0.001, 1e-6
    heights = np.arange(3 * d, -3 * d - step / 2, -step)
    depth, normal = _at(_wall(), np.stack([np.full_like(heights, WALL + d), np.zeros_like(heights), heights], axis=1))
    above, below = heights > 0, heights < 0
    np.testing.assert_allclose(depth[above], np.minimum(heights[above], d), rtol=1e-9)
    np.testing.assert_allclose(normal[above], [[-1.0, 0.0, 0.0]] * int(np.sum(above)), atol=1e-12)
    np.testing.assert_allclose(depth[below], -heights[below], rtol=1e-9)
    np.testing.assert_allclose(normal[below], [[0.0, 0.0, 1.0]] * int(np.sum(below)), atol=1e-12)
    assert np.max(np.abs(np.diff(depth))) < 1.01 * step


# Bodies of 1 kg lying on the floor, their lowest point 0.9 mm into it and 0.5 mm into the wall, whose
# corners (points, not swept balls: a ball or a capsule meets the wall as on main) come to its foot:
# geometry, centre height [m], half length across the wall [m], rotation (xyz Euler angles [deg]),
# isotropic inertia [kg m^2]. The cube is turned by 1 degree, its bottom edge at the wall 0.85 mm
# above the floor and 1.4 mm inside the wall.
BODIES = {
    "cube": ('<box size="0.1 0.1 0.1"/>', 0.05 * (np.cos(np.radians(1.0)) + np.sin(np.radians(1.0))), 0.05, (0.0, -1.0, 0.0), 1 / 600),
    "cylinder": ('<cylinder radius="0.05" length="0.1"/>', 0.05, 0.05, (0.0, 90.0, 0.0), 0.001),  # its cap on the wall
}


@pytest.fixture(scope="module")
def pressed():
    """The bodies of ``BODIES`` side by side on the floor against a wall standing on it, pressed
    into it by gravity tilted 35 degrees towards it (more than friction 0.5 holds on the floor),
    rolled out 1.5 s: the final states and the outputs of every step."""
    models = [jax.tree.map(lambda x: x.astype(jnp.float64) if jnp.issubdtype(x.dtype, jnp.floating) else x,
                           solid(name, geometry, 1.0, inertia)) for name, (geometry, _, _, _, inertia) in BODIES.items()]
    gravity = STANDARD_GRAVITY * np.array([np.sin(TILT), 0.0, -np.cos(TILT)])
    world = WorldModel.build(models, dt=DT, terrain=_wall(), gravity=gravity, friction=0.5,
                             max_penetration=MAX_PENETRATION, collisions=False)
    states = []
    for i, (model, (_, height, half, angles, _)) in enumerate(zip(models, BODIES.values())):
        quaternion = Rotation.from_euler("xyz", angles, degrees=True).as_quat()[[3, 0, 1, 2]]
        states.append(js.State.build(model, base_position=jnp.array([WALL - half + 0.0005, 0.3 * i, height - 0.0009]),
                                     base_quaternion=jnp.asarray(quaternion)))
    state, outputs = jax.jit(lambda s: world_rollout(world, s, None, 300))(world.initial_state(states))
    return state, outputs, gravity


def test_bodies_pressed_into_a_wall_standing_on_the_floor_are_never_pushed_down_and_rest(pressed):
    """No touching terrain contact of any body points down at any step (on ``main`` the cube's
    corner 0.9 mm above the floor in the wall took the wall's bottom face, 0.85 mm deep); at 1.5 s
    every body rests, its terrain forces balance its weight, its contacts push it out of the wall
    (-x), up from the floor (+z) or both, and it sinks by at most 1.5 ``max_penetration`` (its law
    is sized for its weight, and its contacts carry ``cos + sin`` of the tilt times that across
    the floor and the wall)."""
    state, outputs, gravity = pressed
    for name, model_state, output in zip(BODIES, state.states, outputs.models):
        depth, normal = np.asarray(output.penetration), np.asarray(output.contact_normals)
        touching = depth > 0
        assert np.all(normal[touching][:, 2] >= -1e-12), name
        assert np.max(np.abs(np.asarray(model_state.base_velocity))) < 1e-6, name
        np.testing.assert_allclose(np.asarray(output.contact_forces[-1]).sum(axis=0), -gravity, atol=1e-6 * STANDARD_GRAVITY, err_msg=name)
        last = normal[-1][touching[-1]]
        assert np.all(last[:, 0] <= 1e-12) and np.all(np.abs(last[:, 1]) < 1e-9), name
        assert np.any(last[:, 0] < -0.5), name  # in the wall
        assert depth[-1].max() < 1.5 * MAX_PENETRATION, name
