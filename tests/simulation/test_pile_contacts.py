"""A box on a cylinder's side, as in the pile of issue 29: the contact at an end of the cylinder's
side is its rim point, held as the box rocks, and a box edge beyond the cap touches nothing; a
small box or can on a drum's cap has no side contact."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from collision_worlds import rotation

from jaxsim_like.simulation.collision import KINDS

jax.config.update("jax_enable_x64", True)

BOX_CYLINDER = jax.jit(KINDS["box-cylinder"].kernel)
CUBE, CAN = np.array([0.03, 0.03, 0.03]), np.array([0.03, 0.03, 0.0])  # half extents; radius, half length
SINK = 2e-4  # [m]


def _pose(position, R=np.eye(3)) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = R, position
    return pose


LYING = _pose((0.0, 0.0, 0.03), rotation("y", np.pi / 2))  # the can along x on the ground


@pytest.mark.parametrize("tilt", [-1e-3, 1e-3])
def test_a_box_over_a_cylinder_end_rests_on_its_rim_as_it_rocks(tilt):
    """The cube centred over the can's end (x = 0.03), sunk ``SINK`` into it and turned by ``tilt``
    about y: the rim's top point touches, as deep as the box reaches past it along the face's
    normal (before: the end contact whose normal leaned past the cap was dropped, here for either
    sign of the lean, and the box sank onto the sampled rim points)."""
    box = _pose((0.03, 0.0, 0.09 - SINK), rotation("y", tilt))
    slots = BOX_CYLINDER(box, CUBE, LYING, CAN)
    touching = np.asarray(slots.valid) & (np.asarray(slots.depth) > 0)
    rim = touching & (np.abs(np.asarray(slots.position)[:, 0] - 0.03) < 1e-6)
    assert rim.sum() == 1
    np.testing.assert_allclose(np.asarray(slots.depth)[rim], 0.03 - (0.03 - SINK) * np.cos(tilt), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(slots.normal)[rim], [[np.sin(tilt), 0.0, np.cos(tilt)]], atol=1e-12)


def test_a_box_edge_beyond_the_cap_touches_nothing():
    """The cube past the can's end, 1 mm beyond its cap and 5 mm below its top: the capsule of the
    can's segment would reach it, the cylinder does not."""
    box = _pose((0.061, 0.0, 0.085))
    slots = BOX_CYLINDER(box, CUBE, LYING, CAN)
    assert not np.any(np.asarray(slots.valid) & (np.asarray(slots.depth) > 0))


DRUM = np.array([0.3, 0.1, 0.0])  # radius, half length: a drum standing on its cap, its top at z = 0.2
STANDING = _pose((0.0, 0.0, 0.1))
CYLINDER_CYLINDER = jax.jit(KINDS["cylinder-cylinder"].kernel)


@pytest.mark.parametrize("tilt", [0.0, 0.3])
def test_a_small_box_or_can_on_a_drums_cap_has_no_side_contact(tilt):
    """A cube and a can 5 cm off the axis of a drum's top cap, sunk ``SINK`` into it (tilted or
    not): the drum's side (the capsule of its segment, which they lie inside) gives no contact;
    they rest on the cap through the points. Before, the side gave a contact 20 cm deep along x and
    kicked them off the drum."""
    cube = _pose((0.05, 0.0, 0.2 + 0.03 - SINK), rotation("z", tilt))
    slots = BOX_CYLINDER(cube, CUBE, STANDING, DRUM)
    assert not np.any(np.asarray(slots.valid) & (np.asarray(slots.depth) > 0))
    can = _pose((0.05, 0.0, 0.2 + 0.03 - SINK), rotation("x", tilt))
    slots = CYLINDER_CYLINDER(STANDING, DRUM, can, CAN)
    assert not np.any(np.asarray(slots.valid) & (np.asarray(slots.depth) > 0))
