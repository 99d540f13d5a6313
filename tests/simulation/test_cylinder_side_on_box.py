"""A cylinder's side on a box's face, level or tilted up to 30 degrees (issue 29): the box-cylinder
narrow phase's side slots (:func:`~jaxsim_like.simulation.collision.cylinder.rims_on_box`) against
the brute-force overlap of the two shapes (:func:`test_ellipsoid_pairs.reference_of`, their support
functions) and MuJoCo's ``mj_collision`` at random poses, the cylinder lying over the face and up to
half its radius past the face's edges, and at the 125-body pile's poses where a cube's edge lay on
a can's rim (the slots reported 0.33 mm where the two overlapped 2.40 mm); their gradients finite
at degenerate poses; a can lying on a cube with its ends flush with the cube's faces as deep at
its ends as along its side (the ends' slots reported no depth); and a can sliding off a box's edge
leaving it continuously (an end's slot switched off at 1 mm). A cylinder lying on a box at rest:
:mod:`test_cylinder_rims`. Float64.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_ellipsoid_pairs import pose, reach, reference_of, rotation

from jaxsim_like.simulation.collision import KINDS

SIDE_SLOTS = 3  # the box-cylinder kind's slots of the cylinder's side and ends; the box's on its cap follow
CAN, CUBE = np.array([0.03, 0.03, 0.0]), np.array([0.03, 0.03, 0.03])  # the 125-body pile's (radius, half length), half extents
PILE_PAIR = (  # the pile's box 60 and cylinder 35 at rest (seed 0): the box's edge along the can's side, over its rim
    pose(rotation([0.958268468, 0.285841299, 0.002644301, 0.003050083]), [-0.23085318, -0.041558512, 0.099739877]), CUBE,
    pose(rotation([0.088026735, 0.060148109, -0.863165074, 0.493537794]), [-0.192502056, -0.005465069, 0.053058566]), CAN)


def tilted_on_faces(count: int, seed: int) -> list[tuple]:
    """``count`` pairs ``(H_box, half, H_cylinder, size)``: a cylinder tilted 0 to 30 degrees from a
    random box's top face, its lowest point 0.2 to 3 mm below the face's plane, its centre over
    the face or up to half its radius past its edges; then the 125-body pile's pair."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(count):
        half, radius, length = rng.uniform(0.03, 0.08, 3), rng.uniform(0.02, 0.05), rng.uniform(0.02, 0.08)
        tilt, turn = np.radians(rng.uniform(0.0, 30.0)), rng.uniform(0.0, 2 * np.pi)
        axis = np.array([np.cos(tilt) * np.cos(turn), np.cos(tilt) * np.sin(turn), np.sin(tilt)])
        x = np.cross(axis, [0.0, 0.0, 1.0])
        x /= np.linalg.norm(x)
        R_box = Rotation.random(random_state=rng).as_matrix()
        height = half[2] - rng.uniform(0.0002, 0.003) + length * np.sin(tilt) + radius * np.cos(tilt)
        centre = np.append(rng.uniform(-1.0, 1.0, 2) * (half[:2] + 0.5 * radius), height)
        H_box = pose(R_box, rng.normal(size=3) * 0.1)
        pairs.append((H_box, half, pose(R_box @ np.stack([x, np.cross(axis, x), axis], axis=1), H_box[:3, 3] + R_box @ centre),
                      np.array([radius, length, 0.0])))
    return pairs + [PILE_PAIR]


def mujoco_overlap(H_box, half, H_cylinder, size) -> float:
    """The deepest overlap [m] of the two that MuJoCo's ``mj_collision`` reports (minus its least distance)."""
    def body(H, geom):
        quaternion = np.roll(Rotation.from_matrix(H[:3, :3]).as_quat(), 1)
        return f'<body pos="{" ".join(map(str, H[:3, 3]))}" quat="{" ".join(map(str, quaternion))}"><freejoint/>{geom}</body>'

    box = '<geom type="box" size="{} {} {}"/>'.format(*half)
    cylinder = '<geom type="cylinder" size="{} {}"/>'.format(*size[:2])
    model = mujoco.MjModel.from_xml_string(f"<mujoco><worldbody>{body(H_box, box)}{body(H_cylinder, cylinder)}</worldbody></mujoco>")
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_collision(model, data)
    return -min(contact.dist for contact in data.contact[: data.ncon])


@pytest.fixture(scope="module")
def kernel():
    """The box-cylinder kind's narrow phase, batched over pairs (a: the box, b: the cylinder)."""
    return jax.jit(jax.vmap(KINDS["box-cylinder"].kernel))


def test_a_tilted_cylinder_s_side_on_a_box_is_as_deep_as_the_two_overlap(kernel, figures):
    """Where the cylinder's deepest point along the least overlap's direction lies on an end's rim
    (the direction leans along its axis), the deepest side slot is that overlap (1e-9 m) along that
    direction, and no less than MuJoCo's (2 µm; at the pile's pair MuJoCo reports 2.35 mm, along
    the cube's face's normal). Where its side lies level on the face or across the box's
    edge, the slot of the segment's point nearest to the box is faded by the end's slot beside it
    (:func:`~jaxsim_like.simulation.collision.box.end_fades`): within 10 %. None is deeper than the overlap."""
    pairs = tilted_on_faces(24, seed=0)
    slots = kernel(*(jnp.asarray(np.stack([pair[k] for pair in pairs])) for k in range(4)))
    depth = np.where(np.asarray(slots.valid[:, :SIDE_SLOTS]), np.asarray(slots.depth[:, :SIDE_SLOTS]), -np.inf)
    ends, worst = 0, 0.0
    for i, (H_box, half, H_cylinder, size) in enumerate(pairs):
        overlap, normal = reference_of(lambda n: reach(H_box, half, n, "box") + reach(H_cylinder, size, -n, "cylinder"))
        deepest = int(np.argmax(depth[i]))
        assert depth[i, deepest] <= overlap + 1e-9, i
        if overlap <= 0:
            continue
        if abs(normal @ H_cylinder[:3, 2]) > 1e-3:
            ends += 1
            worst = max(worst, abs(depth[i, deepest] - overlap))
            assert depth[i, deepest] == pytest.approx(overlap, abs=1e-9), i
            np.testing.assert_allclose(-np.asarray(slots.normal[i, deepest]), normal, atol=1e-5)
            assert depth[i, deepest] >= mujoco_overlap(H_box, half, H_cylinder, size) - 2e-6, i
        else:
            assert depth[i, deepest] >= 0.9 * overlap, i
    assert ends >= 12
    figures("cylinder side on a box: worst error of the deepest end slot against the brute-force overlap", worst, "m")



def test_the_end_s_slot_is_compiled_without_sines_or_cosines(kernel):
    """The box-cylinder kind's optimised program (float64, XLA CPU or GPU) has no sine or cosine:
    the turn about a box's edge is a unit (cos, sin) pair turned by Cayley rotations. Turned by
    its angle, every fusion that read the Newton steps' turn recomputed the chain's sines and
    cosines many times over: the exact end slot's cost in the piles' steps."""
    pairs = tilted_on_faces(24, seed=0)
    text = kernel.lower(*(jnp.asarray(np.stack([pair[k] for pair in pairs])) for k in range(4))).compile().as_text()
    assert " sine(" not in text and " cosine(" not in text

def test_the_slots_of_a_cylinder_lying_on_a_box_have_finite_gradients(kernel):
    """Level and flush with the box's faces, along its edge, standing on its cap and tilted: the
    gradients of the slots' depths and positions with respect to the cylinder's pose are finite."""
    lying = Rotation.from_euler("x", 90, degrees=True).as_matrix()
    tilted = Rotation.from_euler("x", 86, degrees=True).as_matrix()
    poses = [(lying, [0.0, 0.0, 0.059]), (lying, [0.03, 0.0, 0.059]), (lying, [0.0, 0.03, 0.059]), (np.eye(3), [0.0, 0.0, 0.059]),
             (np.eye(3), [0.03, 0.03, 0.059]), (tilted, [0.0, 0.0, 0.059 + 0.03 * np.sin(np.radians(4))])]
    box = jnp.asarray(np.eye(4))

    def slots(R, p):
        return KINDS["box-cylinder"].kernel(box, jnp.asarray(CUBE), jnp.concatenate([jnp.concatenate([R, p[:, None]], axis=1),
                                                                                      jnp.asarray([[0.0, 0.0, 0.0, 1.0]])]), jnp.asarray(CAN))

    def total(R, p):
        found = slots(R, p)
        return jnp.sum(jnp.where(found.valid, found.depth, 0.0)) + jnp.sum(jnp.where(found.valid[:, None], found.position, 0.0))

    gradient = jax.jit(jax.grad(total, argnums=(0, 1)))
    for R, p in poses:
        assert all(np.all(np.isfinite(np.asarray(g))) for g in gradient(jnp.asarray(R), jnp.asarray(p)))
    found = slots(jnp.asarray(lying), jnp.asarray([0.0, 0.0, 0.059]))
    np.testing.assert_allclose(np.asarray(found.depth[:2]), 0.001, atol=1e-12)  # flush ends: each as deep as the side
    assert np.all(np.asarray(found.valid[:2]))


@pytest.mark.parametrize("tilt, yaw", [(0.0, 0.0), (4.0, 0.0), (15.0, 0.3)])
def test_a_cylinder_sliding_off_a_box_s_edge_leaves_it_continuously(kernel, tilt, yaw):
    """A can 1 mm into a wide box's top face, tilted ``tilt`` degrees, slid in steps of 0.2 mm
    along its axis's heading (turned ``yaw`` from the box's x axis) until it is off the box's edge:
    no side slot's depth changes by more than twice the step (the way-out fade's slope; an end's
    slot switched off at 1 mm as the end reached the edge, or jumped from 0 to 1 mm)."""
    box, tilted = np.array([0.1, 0.1, 0.03]), np.radians(tilt)
    axis = np.array([np.cos(tilted) * np.cos(yaw), np.cos(tilted) * np.sin(yaw), np.sin(tilted)])
    x = np.cross(axis, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    R = np.stack([x, np.cross(axis, x), axis], axis=1)
    height = box[2] - 0.001 + CAN[1] * np.sin(tilted) + CAN[0] * np.cos(tilted)
    shifts = np.linspace(0.03, 0.16, 651)
    cans = np.stack([pose(R, [s * np.cos(yaw), s * np.sin(yaw), height]) for s in shifts])
    count = len(shifts)
    slots = kernel(jnp.asarray(np.broadcast_to(np.eye(4), (count, 4, 4))), jnp.asarray(np.broadcast_to(box, (count, 3))),
                   jnp.asarray(cans), jnp.asarray(np.broadcast_to(CAN, (count, 3))))
    depth = np.where(np.asarray(slots.valid[:, :SIDE_SLOTS]), np.maximum(np.asarray(slots.depth[:, :SIDE_SLOTS]), 0.0), 0.0)
    assert np.max(depth[0]) == pytest.approx(0.001, abs=1e-9) and np.max(depth[-1]) == 0.0
    assert np.max(np.abs(np.diff(depth, axis=0))) <= 2 * (shifts[1] - shifts[0]) + 1e-9
