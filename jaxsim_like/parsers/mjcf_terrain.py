"""The world body's geoms of an MJCF file as a terrain (:class:`TerrainDescription`).

Its first floor (a plane facing up, see :func:`.mjcf_contacts.floor_geoms`) is the ground; its
boxes and its other planes (walls, floors at other heights) that bodies touch are static boxes,
a plane as the box :data:`WALL_HALF_EXTENTS` behind it (MuJoCo's planes are half-spaces, whatever
their size). The world body's other shapes (spheres, capsules, cylinders, ellipsoids, meshes,
height fields) are not represented (:mod:`.mjcf_omissions` warns). No terrain where the file
disables contacts.
"""

from __future__ import annotations

import numpy as np

from .description import TerrainDescription
from .mjcf_contacts import floor_geoms, geom_label, touches_bodies
from .sdf_values import quaternion_to_rotation

_PLANE, _BOX = 0, 6  # mjtGeom
WALL_HALF_EXTENTS = (100.0, 100.0, 1.0)
"""[m]: a plane other than the ground is the static box of these half extents (along its own x, y
and normal z) whose face is the plane."""


def static_boxes(m) -> list[int]:
    """The world body's boxes and planes, but the ground, that bodies touch: the terrain's boxes."""
    floors = floor_geoms(m)
    ground = floors[0] if floors else None
    return [g for g in range(m.ngeom) if m.geom_bodyid[g] == 0 and g != ground and int(m.geom_type[g]) in (_PLANE, _BOX) and touches_bodies(m, g)]


def world_terrain(reader) -> TerrainDescription | None:
    """The terrain of ``reader``'s model (``mjcf._Reader``): None without a floor or static boxes."""
    m = reader.m
    floors, boxes = floor_geoms(m), static_boxes(m)
    if not floors and not boxes:
        return None
    transforms, half_extents = [], []
    for g in boxes:
        W_H_G = mujoco_pose(m.geom_pos[g], m.geom_quat[g])
        if int(m.geom_type[g]) == _PLANE:
            W_H_G[:3, 3] -= WALL_HALF_EXTENTS[2] * W_H_G[:3, 2]
            half_extents.append(np.array(WALL_HALF_EXTENTS))
        else:
            half_extents.append(np.asarray(m.geom_size[g], dtype=float))
        transforms.append(W_H_G)
    return TerrainDescription(
        ground_normal=np.array([0.0, 0.0, 1.0]) if floors else None,
        ground_point=np.asarray(m.geom_pos[floors[0]], dtype=float) if floors else None,
        box_transforms=np.stack(transforms) if transforms else np.zeros((0, 4, 4)),
        box_half_extents=np.stack(half_extents) if half_extents else np.zeros((0, 3)),
        box_names=tuple(geom_label(reader, g) for g in boxes),
    )


def mujoco_pose(position, quaternion_wxyz) -> np.ndarray:
    """``P_H_C (4, 4)`` from MuJoCo's position ``(3,)`` and ``(w, x, y, z)`` quaternion of a frame in its parent's."""
    H = np.eye(4)
    w, x, y, z = (float(v) for v in quaternion_wxyz)
    H[:3, :3] = quaternion_to_rotation(x, y, z, w)
    H[:3, 3] = np.asarray(position, dtype=float)
    return H
