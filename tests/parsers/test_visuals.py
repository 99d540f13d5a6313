"""<visual> elements: pose, shape, mesh URI and scale, colour (URDF materials, SDF diffuse), errors."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like.parsers import ModelLoadError, ModelLoadWarning, parse_sdf, parse_urdf, urdfstring_to_sdfstring
from jaxsim_like.parsers.urdf import pose_to_transform

URDF = """<robot name="painted">
  <material name="steel"><color rgba="0.5 0.5 0.6 1"/></material>
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    <visual name="shell"><origin xyz="0 0 0.1" rpy="0 0 0.5"/><geometry><box size="0.2 0.3 0.4"/></geometry>
      <material name="steel"/></visual>
    <visual><geometry><mesh filename="meshes/missing.stl" scale="0.001 0.001 0.001"/></geometry>
      <material name="paint"><color rgba="1 0 0 0.5"/></material></visual>
    <visual><geometry><cylinder radius="0.05" length="0.3"/></geometry><material name="undefined"/></visual>
    <collision><geometry><sphere radius="0.1"/></geometry></collision>
  </link>
</robot>"""


def test_urdf_visuals_keep_pose_shape_mesh_and_colour():
    link = parse_urdf(URDF).link("base")
    shell, mesh, cylinder = link.visuals
    assert shell.name == "shell" and shell.geometry.type == "box" and shell.geometry.size == (0.2, 0.3, 0.4)
    np.testing.assert_allclose(shell.L_H_G, pose_to_transform((0, 0, 0.1), (0, 0, 0.5)))
    assert shell.rgba == (0.5, 0.5, 0.6, 1.0)  # the robot-level material of that name
    assert mesh.geometry.type == "mesh" and mesh.geometry.uri == "meshes/missing.stl" and mesh.geometry.path is None
    assert mesh.geometry.scale == (0.001, 0.001, 0.001)
    assert mesh.rgba == (1.0, 0.0, 0.0, 0.5)  # its own colour
    assert cylinder.rgba is None and (cylinder.geometry.radius, cylinder.geometry.length) == (0.05, 0.3)
    assert shell.location.line == 5 and len(link.collisions) == 1


def test_urdf_colour_out_of_range_warns_and_is_clipped():
    text = URDF.replace('rgba="1 0 0 0.5"', 'rgba="255 0 0 1"')
    with pytest.warns(ModelLoadWarning, match="clipped"):
        assert parse_urdf(text).link("base").visuals[1].rgba == (1.0, 0.0, 0.0, 1.0)


def test_urdf_visual_without_geometry_is_a_located_error():
    text = URDF.replace('<visual name="shell">', '<visual name="shell"><material name="steel"/></visual><visual>', 1)
    with pytest.raises(ModelLoadError, match="missing required element <geometry>") as error:
        parse_urdf(text)
    assert error.value.line == 5


SDF = """<sdf version="1.9"><model name="m">
  <link name="base"><pose>1 0 0 0 0 0</pose>
    <visual name="look"><pose>0 0 0.2 0 0 0</pose><geometry><ellipsoid><radii>0.1 0.2 0.3</radii></ellipsoid></geometry>
      <material><diffuse>0.1 0.2 0.3</diffuse><ambient>1 1 1 1</ambient></material></visual>
    <visual name="cap"><geometry><capsule><radius>0.05</radius><length>0.2</length></capsule></geometry></visual>
    <visual name="nothing"><geometry><empty/></geometry></visual>
  </link>
</model></sdf>"""


def test_sdf_visuals_keep_pose_shape_and_diffuse():
    look, cap = parse_sdf(SDF).link("base").visuals
    assert look.geometry.type == "ellipsoid" and look.geometry.size == (0.1, 0.2, 0.3)
    np.testing.assert_allclose(look.L_H_G, pose_to_transform((0, 0, 0.2), (0, 0, 0)))
    assert look.rgba == pytest.approx((0.1, 0.2, 0.3, 1.0))
    assert cap.geometry.type == "capsule" and cap.rgba is None


def test_sdf_duplicate_visual_names_are_an_error():
    with pytest.raises(ModelLoadError, match="duplicate visual name 'look'"):
        parse_sdf(SDF.replace('name="cap"', 'name="look"'))


def test_urdf_to_sdf_keeps_the_visuals():
    visuals = parse_sdf(urdfstring_to_sdfstring(URDF)).link("base").visuals
    assert [v.geometry.type for v in visuals] == ["box", "mesh", "cylinder"]
    np.testing.assert_allclose(visuals[0].L_H_G, parse_urdf(URDF).link("base").visuals[0].L_H_G, atol=1e-12)
    assert visuals[0].rgba == pytest.approx((0.5, 0.5, 0.6, 1.0)) and visuals[2].rgba is None
