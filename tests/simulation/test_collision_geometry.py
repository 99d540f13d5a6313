"""The narrow phases of the collision module against analytic geometry, one jitted kernel per pair
kind: depth, normal (from b towards a), position (midway between the surfaces), the edge cases
(a centre inside a box, parallel and crossing capsules, stacked boxes with aligned edges, boxes
turned 45 degrees, coincident centres) and finite gradients there."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import rotation

from jaxsim_like.dynamics.spatial import pose_to_transform
from jaxsim_like.simulation.collision import KINDS
from jaxsim_like.simulation.collision.cylinder import on_side, past_caps, round_reach
from jaxsim_like.simulation.collision.geometry import box_closest, first_least
from jaxsim_like.simulation.collision.points import KIND_CODES
from jaxsim_like.simulation.collision.slots import Slots

KERNELS = {name: jax.jit(kind.kernel) for name, kind in KINDS.items()}
BALL, ROD, CUBE = np.array([0.1, 0.0, 0.0]), np.array([0.05, 0.2, 0.0]), np.array([0.1, 0.1, 0.1])
UP = np.array([0.0, 0.0, 1.0])


def H(position=(0.0, 0.0, 0.0), R=np.eye(3)) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = R, position
    return pose


def contacts(kind: str, *args) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, normals and depths of the slots of one pair that hold a penetrating contact."""
    slots = KERNELS[kind](*args)
    assert all(np.isfinite(np.asarray(x)).all() for x in slots[:3])
    assert slots.depth.shape == (KINDS[kind].slots,)
    keep = np.asarray(slots.valid) & (np.asarray(slots.depth) > 0)
    return np.asarray(slots.position)[keep], np.asarray(slots.normal)[keep], np.asarray(slots.depth)[keep]


def rows(points) -> list[tuple[float, ...]]:
    """Points as sorted rounded tuples, to compare sets of contacts."""
    return sorted(tuple(np.round(p, 9) + 0.0) for p in np.atleast_2d(points))


def test_first_least_is_argmin_with_its_ties_and_infinities():
    """``first_least`` (two plain reductions) picks what ``jnp.argmin`` picks, the first of tied
    least values, infinities included, under ``jit`` and ``vmap``."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 5, (300, 40)).astype(float)
    values[::7] = np.inf
    values[1::7, :20] = np.inf
    values[2::7, -1] = -np.inf
    picked = jax.jit(jax.vmap(first_least))(jnp.asarray(values))
    np.testing.assert_array_equal(np.asarray(picked), np.argmin(values, axis=1))


def test_spheres_touch_along_the_line_of_centres():
    direction = np.array([1.0, 2.0, 2.0]) / 3
    position, normal, depth = contacts("sphere-sphere", H(0.15 * direction), BALL, H(), BALL * 0.5)
    np.testing.assert_allclose(normal, [direction], atol=1e-12)
    np.testing.assert_allclose(depth, [0.1 + 0.05 - 0.15], atol=1e-12)
    np.testing.assert_allclose(position, [0.5 * ((0.15 - 0.1) + 0.05) * direction], atol=1e-12)


def test_a_sphere_on_a_capsule_touches_the_nearest_point_of_its_segment():
    R = rotation("y", np.pi / 2)  # the capsule along x
    position, normal, depth = contacts("sphere-capsule", H((0.15, 0.0, 0.14)), BALL, H(R=R), ROD)
    np.testing.assert_allclose(normal, [UP], atol=1e-12)
    np.testing.assert_allclose(depth, [0.01], atol=1e-12)
    np.testing.assert_allclose(position, [(0.15, 0.0, 0.045)], atol=1e-12)
    beyond = contacts("sphere-capsule", H((0.3, 0.0, 0.0)), BALL, H(R=R), ROD)  # past the segment's end
    np.testing.assert_allclose(beyond[1], [(1.0, 0.0, 0.0)], atol=1e-12)
    np.testing.assert_allclose(beyond[2], [0.05], atol=1e-12)


def test_parallel_capsules_side_by_side_touch_at_both_ends_of_their_overlap():
    R = rotation("y", np.pi / 2)
    position, normal, depth = contacts("capsule-capsule", H((0.1, 0.0, 0.098), R), ROD, H(R=R), ROD)
    np.testing.assert_allclose(normal, [UP, UP], atol=1e-12)
    np.testing.assert_allclose(depth, [0.002, 0.002], atol=1e-12)
    assert rows(position) == rows([(-0.1, 0.0, 0.049), (0.2, 0.0, 0.049)])


@pytest.mark.parametrize("yaw", [0.3, 1.1, 2.0])
def test_parallel_capsules_in_float32_touch_at_both_ends_of_their_overlap(yaw):
    """Turned about the vertical, two parallel capsules' axes agree to float32's rounding only: the
    slots stay at the two ends of the overlap (not one at a point scattered along it, on which the
    upper capsule would rock), as in float64."""
    R = rotation("z", yaw) @ rotation("y", np.pi / 2)
    args = (H((0.1, 0.2, 0.0) + 0.1 * R[:, 2] + (0.0, 0.0, 0.098), R), ROD, H((0.1, 0.2, 0.0), R), ROD)
    slots = KERNELS["capsule-capsule"](*(jnp.asarray(x, jnp.float32) for x in args))
    along = (np.asarray(slots.position) - (0.1, 0.2, 0.0)) @ R[:, 2]
    np.testing.assert_array_equal(np.asarray(slots.valid), [True, True])
    np.testing.assert_allclose(sorted(along), [-0.1, 0.2], atol=1e-5)
    np.testing.assert_allclose(np.asarray(slots.depth), [0.002, 0.002], atol=1e-6)


def test_crossing_capsules_touch_once():
    position, normal, depth = contacts(
        "capsule-capsule", H((0.05, 0.02, 0.099), rotation("y", np.pi / 2)), ROD, H(R=rotation("x", np.pi / 2)), ROD
    )
    np.testing.assert_allclose(normal, [UP], atol=1e-12)
    np.testing.assert_allclose(depth, [0.001], atol=1e-12)
    np.testing.assert_allclose(position, [(0.0, 0.02, 0.0495)], atol=1e-12)


def test_a_sphere_on_a_box_face_edge_and_inside():
    position, normal, depth = contacts("sphere-box", H((0.03, -0.02, 0.19)), BALL, H(), CUBE)
    np.testing.assert_allclose(normal, [UP], atol=1e-12)
    np.testing.assert_allclose(depth, [0.01], atol=1e-12)
    np.testing.assert_allclose(position, [(0.03, -0.02, 0.095)], atol=1e-12)
    corner = np.array([0.1, 0.1, 0.1])
    direction = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    _, normal, depth = contacts("sphere-box", H(corner + 0.08 * direction), BALL, H(), CUBE)
    np.testing.assert_allclose(normal, [direction], atol=1e-12)
    np.testing.assert_allclose(depth, [0.02], atol=1e-12)
    # The centre inside the box: pushed out through the nearest face, as deep as the radius plus
    # the centre's distance to that face.
    position, normal, depth = contacts("sphere-box", H((0.02, 0.07, -0.01)), BALL, H(), CUBE)
    np.testing.assert_allclose(normal, [(0.0, 1.0, 0.0)], atol=1e-12)
    np.testing.assert_allclose(depth, [0.1 + 0.03], atol=1e-12)
    np.testing.assert_allclose(position, [(0.02, 0.5 * (0.07 - 0.1 + 0.1), -0.01)], atol=1e-12)


def test_a_capsule_lying_on_and_across_a_box_rests_on_two_points():
    R = rotation("y", np.pi / 2)
    lying = contacts("capsule-box", H((0.0, 0.0, 0.248), R), ROD, H(), 2 * CUBE)  # shorter than the box
    np.testing.assert_allclose(lying[2], [0.002] * 2, atol=1e-12)
    assert rows(lying[0]) == rows([(-0.2, 0.0, 0.199), (0.2, 0.0, 0.199)])
    across = contacts("capsule-box", H((0.0, 0.05, 0.148), R), ROD, H(), np.array([0.05, 0.2, 0.1]))
    assert rows(across[0]) == rows([(-0.05, 0.05, 0.099), (0.05, 0.05, 0.099)])
    np.testing.assert_allclose(across[1], [UP] * 2, atol=1e-12)
    end = np.array([0.05, 0.0, 0.148])  # the lower end on the top face, 45 degrees up and away
    tilted = contacts("capsule-box", H(end + 0.2 * np.array([1, 0, 1]) / np.sqrt(2), rotation("y", np.pi / 4)), ROD, H(), CUBE)
    np.testing.assert_allclose(tilted[2], [0.002], atol=1e-12)
    np.testing.assert_allclose(tilted[0], [end - (0, 0, 0.049)], atol=1e-12)


def test_boxes_stacked_with_aligned_edges_touch_at_four_corners():
    position, normal, depth = contacts("box-box", H((0.0, 0.0, 0.199)), CUBE, H(), CUBE)
    np.testing.assert_allclose(normal, [UP] * 4, atol=1e-12)
    np.testing.assert_allclose(depth, [0.001] * 4, atol=1e-12)
    assert rows(position) == rows([(x, y, 0.0995) for x in (-0.1, 0.1) for y in (-0.1, 0.1)])
    # A small box on a large one, and a large one on a small one: the small box's corners.
    small = contacts("box-box", H((0.1, 0.1, 0.248)), 0.5 * CUBE, H(), 2 * CUBE)
    assert rows(small[0]) == rows([(0.1 + x, 0.1 + y, 0.199) for x in (-0.05, 0.05) for y in (-0.05, 0.05)])
    large = contacts("box-box", H((0.0, 0.0, 0.248)), 2 * CUBE, H((0.1, 0.0, 0.0)), 0.5 * CUBE)
    assert rows(large[0]) == rows([(0.1 + x, y, 0.049) for x in (-0.05, 0.05) for y in (-0.05, 0.05)])
    np.testing.assert_allclose(large[2], [0.002] * 4, atol=1e-12)


def test_a_box_turned_45_degrees_on_a_box():
    R = rotation("z", np.pi / 4)
    small = contacts("box-box", H((0.0, 0.0, 0.149), R), 0.5 * CUBE, H(), CUBE)
    r = 0.05 * np.sqrt(2)
    assert rows(small[0]) == rows([(r, 0, 0.0995), (-r, 0, 0.0995), (0, r, 0.0995), (0, -r, 0.0995)])
    same = contacts("box-box", H((0.0, 0.0, 0.199), R), CUBE, H(), CUBE)  # the octagon where the faces overlap
    t = 0.1 * (np.sqrt(2) - 1)
    octagon = [(sx * 0.1, sy * t, 0.0995) for sx in (-1, 1) for sy in (-1, 1)] + [(sy * t, sx * 0.1, 0.0995) for sx in (-1, 1) for sy in (-1, 1)]
    assert rows(same[0]) == rows(octagon)
    np.testing.assert_allclose(same[2], [0.001] * 8, atol=1e-12)


def test_crossed_edges_touch_at_one_point():
    top, bottom = rotation("x", np.pi / 4), rotation("y", np.pi / 4)  # edges along x over edges along y
    height = 2 * 0.1 * np.sqrt(2) - 0.003
    position, normal, depth = contacts("box-box", H((0.0, 0.0, height), top), CUBE, H(R=bottom), CUBE)
    np.testing.assert_allclose(normal, [UP], atol=1e-12)
    np.testing.assert_allclose(depth, [0.003], atol=1e-12)
    np.testing.assert_allclose(position, [(0.0, 0.0, 0.1 * np.sqrt(2) - 0.0015)], atol=1e-12)


CAN = np.array([0.1, 0.15, 0.0])


def test_a_sphere_against_a_cylinder_side_cap_and_rim():
    R, centre = rotation("x", 0.3), np.array([0.1, 0.2, -0.1])
    for local, normal, depth in [
        ((0.0, 0.19, 0.05), (0.0, 1.0, 0.0), 0.01),
        ((0.03, 0.0, 0.24), (0.0, 0.0, 1.0), 0.01),
        ((0.16, 0.0, 0.23), (0.6, 0.0, 0.8), 0.0),
    ]:
        position, n, d = KERNELS["sphere-cylinder"](H(R @ np.asarray(local) + centre), BALL, H(centre, R), CAN)[:3]
        np.testing.assert_allclose(n, [R @ np.asarray(normal)], atol=1e-12)
        np.testing.assert_allclose(d, [depth], atol=1e-12)
        surface = np.asarray(local) - (0.1 - depth) * np.asarray(normal)
        np.testing.assert_allclose(position, [R @ (surface - 0.5 * depth * np.asarray(normal)) + centre], atol=1e-12)


def test_cylinders_meet_boxes_capsules_and_cylinders_on_their_side():
    lying = rotation("y", np.pi / 2)  # the axis along x
    position, normal, depth = contacts("box-cylinder", H(), 2 * CUBE, H((0.0, 0.0, 0.298), lying), CAN)
    np.testing.assert_allclose(normal, [-UP, -UP], atol=1e-12)  # the box (a) pushed down
    assert rows(position) == rows([(-0.15, 0.0, 0.199), (0.15, 0.0, 0.199)])
    standing = contacts("box-cylinder", H(), 2 * CUBE, H((0.0, 0.0, 0.348)), CAN)
    assert len(standing[2]) == 0  # the cap: met by the rim points
    position, normal, depth = contacts("cylinder-cylinder", H((0.0, 0.0, 0.198), lying), CAN, H(R=lying), CAN)
    np.testing.assert_allclose(depth, [0.002, 0.002], atol=1e-12)
    assert rows(position) == rows([(-0.15, 0.0, 0.099), (0.15, 0.0, 0.099)])
    crossing = contacts("capsule-cylinder", H((0.0, 0.0, 0.148), lying), ROD, H(R=rotation("x", np.pi / 2)), CAN)
    np.testing.assert_allclose(crossing[2], [0.002], atol=1e-12)
    np.testing.assert_allclose(crossing[1], [UP], atol=1e-12)


def _largest_change(kind: str, poses) -> float:
    """The largest change [m] of any slot's contact depth (zero where not a touching candidate)
    between consecutive ``poses`` ``(H_a, size_a, H_b, size_b)`` of a pair of ``kind``."""
    depths = []
    for pose in poses:
        slots = KERNELS[kind](*pose)
        depths.append(np.where(np.asarray(slots.valid), np.maximum(np.asarray(slots.depth), 0.0), 0.0))
    return float(np.abs(np.diff(np.stack(depths), axis=0)).max())


def test_a_capsule_over_a_box_edge_keeps_a_continuous_contact_as_the_edge_nears_its_end():
    """A capsule tilted 0.3 rad over a box's edge, 2 mm into it, slid along its axis in steps of
    0.1 mm until the edge is under its end: the nearest point's slot hands over to the end's
    without a jump (it switched off at full depth when it came to repeat the end's), and the
    edge is never without a contact."""
    tilt = 0.3
    axis, up = np.array([np.cos(tilt), 0.0, -np.sin(tilt)]), np.array([np.sin(tilt), 0.0, np.cos(tilt)])
    R = rotation("y", np.pi / 2 + tilt)
    np.testing.assert_allclose(R[:, 2], axis, atol=1e-15)
    over_edge = np.array([0.1, 0.0, 0.1]) + (ROD[0] - 0.002) * up
    poses = [(H(over_edge - s * axis, R), ROD, H(), CUBE) for s in np.linspace(0.0, ROD[1], 2001)]
    assert _largest_change("capsule-box", poses) < 0.05 * 1e-3
    deepest = [float(np.max(np.where(np.asarray(slots.valid), np.asarray(slots.depth), -1.0))) for slots in
               (KERNELS["capsule-box"](*pose) for pose in poses[::50])]
    assert min(deepest) > 0.001


def test_a_box_leaning_on_a_cylinders_rim_meets_it_continuously():
    """A cube 1 mm into the side of an upright can's top, raised in steps of 0.01 mm past its top
    cap: the side's contact and the rim's fade out as the box leaves (the side's switched off at
    its depth once the box was less deep past the cap than into the side; the rim's once its rim
    point left the box), with no jump."""
    can, cube = np.array([0.03, 0.03, 0.0]), np.array([0.03, 0.03, 0.03])
    poses = [(H((-0.059, 0.0, 0.06 + h)), cube, H(), can) for h in np.linspace(-0.004, 0.004, 801)]
    assert _largest_change("box-cylinder", poses) < 0.03 * 1e-3
    assert _largest_change("box-cylinder", poses[:2]) == 0.0 and len(contacts("box-cylinder", *poses[0])[2]) == 2



def test_a_box_edge_over_a_cylinders_rim_keeps_a_continuous_side_contact_across_the_caps_plane():
    """A cube turned 32 degrees with an edge over an upright can's top rim, a cap point 11 mm inside it (as a
    landing left one in the 125-body pile of ``benchmarks/pile.py``), raised along the can's
    axis in steps of 0.01 mm: the can's side contact along the cube's bottom face, whose position
    lies at the cap's plane, fades out as its position passes the plane (it was switched off
    there at its 4 mm depth, and came and went from one step to the next)."""
    can, cube = np.array([0.03, 0.03, 0.0]), np.array([0.03, 0.03, 0.03])
    turned, _ = np.linalg.qr(np.array([[0.8744, -0.1406, 0.4644], [0.0258, 0.9692, 0.2451], [-0.4846, -0.2023, 0.8511]]))
    turned = turned * np.sign(np.diag(turned))
    over_rim = np.array([0.00215, 0.00556, 0.05842])
    poses = [(H(over_rim + [0.0, 0.0, h], turned), cube, H(), can) for h in np.linspace(-1e-3, 1e-3, 201)]
    deepest = [float(np.max(np.where(np.asarray(s.valid), np.asarray(s.depth), 0.0))) for s in (KERNELS["box-cylinder"](*p) for p in poses)]
    assert max(deepest) > 0.004  # the side contact, at its depth while its position lies below the plane
    assert _largest_change("box-cylinder", poses) < 0.02 * 1e-3


def test_a_cylinders_side_in_a_box_is_as_deep_as_its_deepest_point_when_its_end_rim_lies_outside():
    """A lying can whose side lies 3.3 mm in a cube's face near one end, the cube ending before the
    can's end (as in the 125-body pile of ``benchmarks/pile.py``): the side contact of the
    segment's point nearest to the cube is as deep as the side's deepest point in the cube
    (sampled), not faded by the capsule's end ball (3.3 mm into the cube, where the can's rim,
    which stands for it, lies outside)."""
    can, cube = np.array([0.03, 0.03, 0.0]), np.array([0.03, 0.03, 0.03])
    turned, _ = np.linalg.qr(np.array([[0.5369, -0.8145, 0.2199], [-0.1229, 0.1824, 0.9755], [-0.8346, -0.5508, -0.0022]]))
    turned = turned * np.sign(np.diag(turned))
    centre = np.array([-0.03471, -0.05032, 0.00755])
    slots = KERNELS["box-cylinder"](H(centre, turned), cube, H(), can)
    reported = float(np.max(np.where(np.asarray(slots.valid), np.asarray(slots.depth), 0.0)))
    along, around = np.meshgrid(np.linspace(-can[1], can[1], 241), np.linspace(0.0, 2 * np.pi, 721))
    side = np.stack([can[0] * np.cos(around), can[0] * np.sin(around), along], axis=-1).reshape(-1, 3)
    outside = np.abs((side - centre) @ turned) - cube
    inside = -np.min(np.linalg.norm(np.maximum(outside, 0.0), axis=-1) + np.minimum(outside.max(axis=-1), 0.0))
    assert inside > 0.003
    np.testing.assert_allclose(reported, inside, rtol=0.02)

def _deepest_inside(H_a: np.ndarray, H_b: np.ndarray, can: np.ndarray) -> float:
    """The deepest [m] that a point of the can at ``H_a`` lies inside the same can at ``H_b`` (sampled)."""
    r, around, along = np.meshgrid(np.linspace(0.0, can[0], 31), np.linspace(0.0, 2 * np.pi, 73), np.linspace(-can[1], can[1], 61))
    points = np.stack([r * np.cos(around), r * np.sin(around), along], axis=-1).reshape(-1, 3) @ H_a[:3, :3].T + H_a[:3, 3]
    local = (points - H_b[:3, 3]) @ H_b[:3, :3]
    return float(np.max(np.minimum(can[0] - np.hypot(local[:, 0], local[:, 1]), can[1] - np.abs(local[:, 2]))))


def _overlap(H_a: np.ndarray, H_b: np.ndarray, can: np.ndarray) -> float:
    """How far [m] the cans at ``H_a`` and ``H_b`` overlap: the least overlap of their extents along
    50,000 directions (separating axes; the exact depth of two convex shapes as directions grow dense)."""
    directions = np.random.default_rng(0).normal(size=(50000, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)

    def reach(H_: np.ndarray, sign: float) -> np.ndarray:
        cosine = directions @ H_[:3, 2]
        return sign * (directions @ H_[:3, 3]) + can[0] * np.sqrt(np.maximum(1 - cosine**2, 0.0)) + can[1] * np.abs(cosine)

    return float(np.min(reach(H_b, 1.0) + reach(H_a, -1.0)))


def test_cylinders_of_one_radius_stacked_into_each_other_meet_at_their_caps():
    """Two cans of one radius, one on the other, their caps 2 mm into each other, and the pose of the
    8-body pile of ``benchmarks/pile.py`` (seed 10, at 0.15 s) where two cans that landed on one
    another lay 15 mm into each other (sampled): the pair reports their caps' contact along the
    axis, as deep as they overlap. Each rim point lies on the other can's side, no deeper than
    its distance to that side (about 0), and the sides' slots fade out: nothing pushed the cans
    apart, and the lower one's cap sank 34 mm into the other before a side contact shoved them
    apart sideways."""
    can = np.array([0.03, 0.03, 0.0])
    position, normal, depth = contacts("cylinder-cylinder", H((0.001, 0.0, 0.058)), can, H(), can)
    np.testing.assert_allclose(depth, [0.002], atol=1e-12)
    np.testing.assert_allclose(normal, [UP], atol=1e-12)
    np.testing.assert_allclose(position[0, 2], 0.029, atol=1e-12)
    lower, upper = (np.asarray(pose_to_transform(jnp.array(p), jnp.array(q) / np.linalg.norm(q))) for p, q in (
        ((0.05841, 0.054282, 0.028919), (0.979754, 0.002914, -0.00648, 0.200081)),
        ((0.057066, 0.054294, 0.074238), (0.987378, -0.001835, -0.021198, -0.156945))))
    overlap = max(_deepest_inside(lower, upper, can), _deepest_inside(upper, lower, can))
    assert overlap > 0.015
    position, normal, depth = contacts("cylinder-cylinder", lower, can, upper, can)
    np.testing.assert_allclose(depth.max(), overlap, rtol=0.03)
    assert abs(normal[np.argmax(depth)] @ upper[:3, 2]) > 0.99 and normal[np.argmax(depth)] @ UP < 0  # the lower can pushed down
    # Two cans 30 degrees apart, one's cap over the other's near its side (the 125-body pile, seed 3, at 0.25 s):
    # the caps' contact no deeper than they overlap along any direction (it was 8.6 mm, along the axis).
    tilted = [np.asarray(pose_to_transform(jnp.array(p), jnp.array(q))) for p, q in (
        ((-0.02432042, -0.00257428, 0.19865992), (0.74050784, 0.19875703, 0.63003657, -0.12327897)),
        ((-0.08873151, -0.02526699, 0.2335043), (0.71023811, 0.20790359, 0.58737253, 0.32761477)))]
    overlap = _overlap(tilted[0], tilted[1], can)
    depth = contacts("cylinder-cylinder", tilted[0], can, tilted[1], can)[2]
    assert overlap > 0.003 and depth.max() <= 1.05 * overlap


@pytest.mark.parametrize("tilt", [(1.0, 2.0, 0.5), (0.3, -1.0, 2.0), (-2.0, 0.4, 1.0)])
def test_coaxial_cans_stacked_in_float32_meet_at_their_caps_as_in_float64(tilt):
    """Two cans of one radius, coaxial, one 0.2 mm into the other, turned as a whole: in float32
    their centres' offset across the axis is rounding only, pointing anywhere (along the axis too),
    and the caps' contact took the other can's reach along it (its half length, not its radius) as
    how far the smaller rim lies inside: 50 mm too shallow, no contact. As in float64 now."""
    R = rotation("z", tilt[2]) @ rotation("y", tilt[1]) @ rotation("x", tilt[0])
    can = np.array([0.1, 0.15, 0.0])
    args = (H((0.3, -0.2, 0.5) + 0.2998 * R[:, 2], R), can, H((0.3, -0.2, 0.5), R), can)
    for dtype in (jnp.float64, jnp.float32):
        slots = KERNELS["cylinder-cylinder"](*(jnp.asarray(x, dtype) for x in args))
        keep = np.asarray(slots.valid) & (np.asarray(slots.depth) > 0)
        np.testing.assert_allclose(np.asarray(slots.depth)[keep], [2e-4], atol=1e-6)
        np.testing.assert_allclose(np.asarray(slots.normal)[keep], [R[:, 2]], atol=1e-5)


def test_a_point_on_a_box_face_from_outside_takes_the_face_normal():
    """A point a rounding error outside the bottom face: that face's outward normal, not a default."""
    half = np.array([0.03, 0.03, 0.03])
    _, normal, distance = box_closest(jnp.array([0.01, -0.005, -0.03 - 1e-14]), half)
    np.testing.assert_allclose(normal, -UP, atol=1e-12)
    assert abs(float(distance)) < 1e-12


def test_a_cylinder_side_contact_is_as_deep_as_the_side_reaches():
    """A capsule's ball on the axis reaches its radius along the normal; the cylinder's side only the
    radius times the normal's part across the axis (60 degrees from it: sin 60), the position moved
    by half the difference along the normal; a capsule (not a cylinder) keeps its slot. A side
    contact at least twice as deep as the other shape's way out past a cap is not the side's (that
    shape rests on the cap): no contact for the cylinder, kept for the capsule; between its depth
    and half of it, the cylinder's contact fades out continuously (``2 clear - depth``)."""
    radius, depth = 0.1, 0.09
    normal = np.array([np.sin(np.pi / 3), 0.0, np.cos(np.pi / 3)])
    slots = Slots(jnp.zeros((1, 3)), jnp.asarray(normal[None]), jnp.array([depth]), jnp.ones(1, bool))
    shortfall = radius * (1 - np.sin(np.pi / 3))
    for cylinder, less in ((True, shortfall), (False, 0.0)):
        side = on_side(slots, jnp.eye(4), jnp.array([radius, 0.15, 0.0]), jnp.asarray(cylinder), 1.0, jnp.asarray(0.3))
        np.testing.assert_allclose(side.depth, [depth - less], atol=1e-12)
        np.testing.assert_allclose(side.position, [0.5 * less * normal], atol=1e-12)
        assert bool(side.valid[0])
        on_cap = on_side(slots, jnp.eye(4), jnp.array([radius, 0.15, 0.0]), jnp.asarray(cylinder), 1.0, jnp.asarray(0.001))
        assert (bool(on_cap.valid[0]) and float(on_cap.depth[0]) > 0) is not cylinder
    side_depth = depth - shortfall
    for clear, expected in ((side_depth, side_depth), (0.75 * side_depth, 0.5 * side_depth), (0.5 * side_depth, 0.0)):
        faded = on_side(slots, jnp.eye(4), jnp.array([radius, 0.15, 0.0]), jnp.asarray(True), 1.0, jnp.asarray(clear))
        np.testing.assert_allclose(faded.depth, [expected], atol=1e-12)


def test_how_far_a_shape_is_from_clearing_a_cylinder_past_a_cap():
    """:func:`past_caps` of a cylinder of half length 0.1: a box 1 mm into its top cap must move
    1 mm; a shape spanning z from -0.18 to 0.22 must move 0.28 (up, its bottom past the top cap);
    :func:`round_reach` of a capsule and of a cylinder along and across their axis."""
    size = jnp.array([0.3, 0.1, 0.0])
    np.testing.assert_allclose(past_caps(jnp.eye(4), size, jnp.array([0.05, 0.0, 0.124]), jnp.asarray(0.025)), 0.001, atol=1e-12)
    np.testing.assert_allclose(past_caps(jnp.eye(4), size, jnp.array([0.5, 0.0, 0.02]), jnp.asarray(0.2)), 0.28, atol=1e-12)
    z, x = jnp.array([0.0, 0.0, 1.0]), jnp.array([1.0, 0.0, 0.0])
    rod = jnp.array([0.02, 0.05, 0.0])
    np.testing.assert_allclose([float(round_reach(jnp.eye(4), rod, jnp.asarray(c), d)) for c in (False, True) for d in (z, x)],
                               [0.07, 0.02, 0.05, 0.02], atol=1e-12)


@pytest.mark.parametrize(
    ("kind", "size", "point", "normal", "depth"),
    [
        ("sphere", BALL, (0.0, 0.06, 0.08), (0.0, 0.6, 0.8), 0.0),
        ("capsule", ROD, (0.0, 0.03, 0.1), (0.0, 1.0, 0.0), 0.02),
        ("box", CUBE, (0.09, 0.05, 0.0), (1.0, 0.0, 0.0), 0.01),
        ("box", CUBE, (0.13, 0.14, 0.0), (0.6, 0.8, 0.0), -0.05),
        ("cylinder", np.array([0.1, 0.15, 0.0]), (0.0, 0.05, 0.14), (0.0, 0.0, 1.0), 0.01),
        ("cylinder", np.array([0.1, 0.15, 0.0]), (0.0, 0.08, 0.0), (0.0, 1.0, 0.0), 0.02),
        ("cylinder", np.array([0.1, 0.15, 0.0]), (0.13, 0.0, -0.19), (0.6, 0.0, -0.8), -0.05),
    ],
)
def test_points_against_every_shape(kind, size, point, normal, depth):
    """A point, and a swept point of radius 1 cm there (1 cm deeper, the slot midway between the
    ball's surface and the shape's)."""
    R, centre = rotation("z", 0.3), np.array([0.2, -0.1, 0.4])
    for radius in (0.0, 0.01):
        slots = KERNELS["point-shape"](R @ np.asarray(point) + centre, radius, KIND_CODES[kind], H(centre, R), size)
        np.testing.assert_allclose(slots.normal, [R @ np.asarray(normal)], atol=1e-12)
        np.testing.assert_allclose(slots.depth, [depth + radius], atol=1e-12)
        middle = np.asarray(point) + 0.5 * (depth - radius) * np.asarray(normal)
        np.testing.assert_allclose(slots.position, [R @ middle + centre], atol=1e-12)


def _depth_sum(kind):
    """A jitted weighted sum of the depths of valid slots and of all positions, as a function of the
    position of shape a (rotations and sizes are arguments: one compilation per kind)."""
    kernel = KINDS[kind].kernel

    def total(position, R_a, R_b, size_a, size_b):
        pose_a = jnp.eye(4).at[:3, :3].set(R_a).at[:3, 3].set(position)
        slots = kernel(pose_a, size_a, jnp.eye(4).at[:3, :3].set(R_b), size_b)
        weights = jnp.arange(1.0, slots.depth.shape[0] + 1)
        return jnp.sum(jnp.where(slots.valid, weights * slots.depth, 0.0)) + jnp.sum(weights[:, None] * slots.position)

    return jax.jit(total), jax.jit(jax.grad(total))


@pytest.mark.parametrize(
    ("kind", "size_a", "size_b", "R_a", "R_b", "at"),
    [
        ("sphere-sphere", BALL, BALL, np.eye(3), np.eye(3), (0.03, 0.02, 0.15)),
        ("sphere-capsule", BALL, ROD, np.eye(3), rotation("x", 0.4), (0.03, 0.02, 0.12)),
        ("sphere-box", BALL, CUBE, np.eye(3), rotation("z", 0.2), (0.13, 0.05, 0.12)),
        ("capsule-capsule", ROD, ROD, rotation("y", 1.2), rotation("x", 1.5), (0.03, 0.02, 0.09)),
        ("capsule-box", ROD, CUBE, rotation("y", 1.2), rotation("z", 0.3), (0.03, 0.02, 0.2)),
        ("box-box", CUBE, CUBE, rotation("z", 0.4), np.eye(3), (0.03, 0.02, 0.195)),
        ("cylinder-cylinder", CAN, CAN, rotation("x", 0.05), rotation("y", 0.03), (0.01, 0.005, 0.298)),  # the caps' contact
    ],
)
def test_gradients_match_finite_differences_and_are_finite_at_coincident_centres(kind, size_a, size_b, R_a, R_b, at):
    total, gradient = _depth_sum(kind)
    at = jnp.asarray(at)
    step = 1e-6
    numeric = [(total(at + step * e, R_a, R_b, size_a, size_b) - total(at - step * e, R_a, R_b, size_a, size_b)) / (2 * step) for e in np.eye(3)]
    np.testing.assert_allclose(gradient(at, R_a, R_b, size_a, size_b), numeric, rtol=1e-6, atol=1e-7)
    for R in (R_b, np.eye(3)):  # coincident centres, turned or aligned (parallel capsules)
        assert np.isfinite(np.asarray(gradient(jnp.zeros(3), R, R, size_a, size_b))).all()


def test_a_box_box_contact_keeps_its_feature_when_the_slots_fill_in_another_order():
    """A small box resting on a large one, tipped about x and then tilted one way or the other
    about y: its corner at (-x, +y) sinks in or its corner at (+x, +y) does, which moves the
    corner at (+x, -y) to another slot. Each contact keeps its feature (its corner: the key of its
    tangential memory), the features of one pair are distinct, and the empty slots' features are
    theirs alone."""
    features, slot_of = [], []
    for tilt in (1e-3, -1e-3):
        R = rotation("x", 2e-3) @ rotation("y", tilt)
        slots = KERNELS["box-box"](H((0.0, 0.0, 0.15 - 1e-4), R), CUBE * 0.5, H(), CUBE)
        filled = np.asarray(slots.valid) & (np.asarray(slots.depth) > 0)
        feature = np.asarray(slots.feature)
        assert len(set(feature.tolist())) == len(feature)
        assert (feature[~np.asarray(slots.valid)] >= 33).all()
        features.append({int(f): np.asarray(slots.position)[k] for k, f in enumerate(feature) if filled[k]})
        slot_of.append({int(f): k for k, f in enumerate(feature) if filled[k]})
    assert len(features[0]) == len(features[1]) == 3 and set(features[0]) != set(features[1])
    shared = set(features[0]) & set(features[1])
    assert len(shared) == 2 and any(slot_of[0][f] != slot_of[1][f] for f in shared)
    for f in shared:
        np.testing.assert_allclose(features[0][f], features[1][f], atol=2e-4)
