"""SDFormat models and worlds: joints, limits, inertials, geometries, includes, worlds, errors."""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from jaxsim_like.parsers.errors import ModelLoadError
from jaxsim_like.parsers.sdf import parse_sdf, parse_sdf_world

HALF_PI = "1.5707963267948966"
RZ90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
MALFORMED = Path(__file__).resolve().parents[1] / "assets" / "malformed"


def H(xyz=(0.0, 0.0, 0.0), rotation=None) -> np.ndarray:
    transform = np.eye(4)
    transform[:3, :3] = np.eye(3) if rotation is None else rotation
    transform[:3, 3] = xyz
    return transform


def assert_pose(actual, expected) -> None:
    np.testing.assert_allclose(actual, expected, atol=1e-12)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).strip() + "\n", encoding="utf-8")
    return path


def test_single_link_model_is_its_own_root_and_uses_sdf_inertial_defaults():
    model = parse_sdf('<sdf version="1.11"><model name="box"><pose>0 0 2 0 0 0</pose><link name="body"/></model></sdf>')
    assert model.name == "box"
    assert model.root == "body" and model.joints == []
    assert_pose(model.W_H_M, H((0, 0, 2)))
    assert not model.fixed_to_world and not model.static
    inertial = model.link("body").inertial
    assert inertial.mass == 1.0
    np.testing.assert_array_equal(inertial.inertia, np.eye(3))


def test_missing_version_is_read_as_1_11():
    assert parse_sdf('<sdf><model name="m"><link name="l"/></model></sdf>').root == "l"


@pytest.mark.parametrize("version", ["1.3", "1.12", "2.0", "one"])
def test_unsupported_versions_are_rejected(version):
    with pytest.raises(ModelLoadError, match="version") as caught:
        parse_sdf(f'<sdf version="{version}"><model name="m"><link name="l"/></model></sdf>')
    assert caught.value.line == 1


def test_inertial_pose_and_tensor():
    model = parse_sdf(
        """<sdf version="1.11"><model name="m"><link name="l">
          <inertial>
            <pose>0.1 0.2 0.3 0 0 0</pose>
            <mass>2.5</mass>
            <inertia><ixx>0.4</ixx><ixy>0.01</ixy><ixz>0.02</ixz><iyy>0.5</iyy><iyz>0.03</iyz><izz>0.6</izz></inertia>
          </inertial>
        </link></model></sdf>"""
    )
    inertial = model.link("l").inertial
    assert inertial.mass == 2.5
    assert_pose(inertial.L_H_I, H((0.1, 0.2, 0.3)))
    np.testing.assert_allclose(inertial.inertia, [[0.4, 0.01, 0.02], [0.01, 0.5, 0.03], [0.02, 0.03, 0.6]])


def test_automatic_inertia_is_rejected():
    with pytest.raises(ModelLoadError, match="auto") as caught:
        parse_sdf('<sdf version="1.11"><model name="m"><link name="l">\n<inertial auto="true"/></link></model></sdf>')
    assert caught.value.line == 2


ARM = """<sdf version="1.9"><model name="arm">
  <link name="base"/>
  <link name="a"><pose>0 0 1 0 0 0</pose></link>
  <link name="b"><pose>0 0 2 0 0 0</pose></link>
  <link name="c"><pose>0 0 3 0 0 0</pose></link>
  <joint name="j1" type="revolute"><parent>base</parent><child>a</child>
    <axis><xyz>0 2 0</xyz><limit><lower>-1.5</lower><upper>2</upper><effort>30</effort><velocity>4</velocity></limit>
      <dynamics><damping>0.5</damping><friction>0.25</friction></dynamics></axis></joint>
  <joint name="j2" type="prismatic"><parent>a</parent><child>b</child>
    <axis><xyz>1 0 0</xyz><limit><effort>-1</effort></limit></axis></joint>
  <joint name="j3" type="continuous"><parent>b</parent><child>c</child>
    <axis><limit><lower>-1</lower><upper>1</upper><velocity>7</velocity></limit></axis></joint>
</model></sdf>"""


def test_limits_dynamics_and_defaults():
    model = parse_sdf(ARM)
    j1, j2, j3 = (model.joint(name) for name in ("j1", "j2", "j3"))
    np.testing.assert_allclose(j1.axis, [0, 1, 0])
    assert (j1.limits.lower, j1.limits.upper, j1.limits.effort, j1.limits.velocity) == (-1.5, 2.0, 30.0, 4.0)
    assert (j1.damping, j1.friction) == (0.5, 0.25)
    # SDF defaults: -1e16 / 1e16 position limits and -1 effort / velocity mean unlimited.
    assert (j2.limits.lower, j2.limits.upper, j2.limits.effort, j2.limits.velocity) == (
        -math.inf,
        math.inf,
        math.inf,
        math.inf,
    )
    np.testing.assert_allclose(j2.axis, [1, 0, 0])
    # A continuous joint has no position limits; the default axis is z.
    assert (j3.limits.lower, j3.limits.upper, j3.limits.velocity) == (-math.inf, math.inf, 7.0)
    np.testing.assert_allclose(j3.axis, [0, 0, 1])
    assert_pose(j3.P_H_C, H((0, 0, 1)))


def test_mimic_joint_of_1_11():
    model = parse_sdf(
        ARM.replace('version="1.9"', 'version="1.11"').replace(
            "<axis><xyz>1 0 0</xyz>",
            '<axis><xyz>1 0 0</xyz><mimic joint="j1" axis="axis"><multiplier>2</multiplier>'
            "<offset>0.5</offset><reference>0.1</reference></mimic>",
        )
    )
    mimic = model.joint("j2").mimic
    assert mimic.joint == "j1" and mimic.multiplier == 2.0
    assert mimic.offset == pytest.approx(0.5 - 2.0 * 0.1)


def test_same_model_as_equivalent_urdf():
    urdf = pytest.importorskip("jaxsim_like.parsers.urdf")
    sdf_model = parse_sdf(
        f"""<sdf version="1.7"><model name="robot">
          <link name="base">
            <inertial><mass>2</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
          </link>
          <joint name="shoulder" type="revolute">
            <pose relative_to="base">0.1 0.2 0.3 0 0 {HALF_PI}</pose>
            <parent>base</parent><child>upper</child>
            <axis>
              <xyz>0 1 0</xyz>
              <limit><lower>-1</lower><upper>1</upper><effort>10</effort><velocity>2</velocity></limit>
            </axis>
          </joint>
          <link name="upper">
            <pose relative_to="shoulder"/>
            <inertial>
              <pose>0 0 0.2 0 0 0</pose><mass>1</mass>
              <inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.01</izz></inertia>
            </inertial>
          </link>
        </model></sdf>"""
    )
    urdf_model = urdf.parse_urdf(
        f"""<robot name="robot">
          <link name="base">
            <inertial><mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
          </link>
          <joint name="shoulder" type="revolute">
            <origin xyz="0.1 0.2 0.3" rpy="0 0 {HALF_PI}"/>
            <parent link="base"/><child link="upper"/>
            <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/>
          </joint>
          <link name="upper">
            <inertial>
              <origin xyz="0 0 0.2"/><mass value="1"/>
              <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/>
            </inertial>
          </link>
        </robot>"""
    )
    assert sdf_model.root == urdf_model.root == "base"
    for expected in urdf_model.joints:
        joint = sdf_model.joint(expected.name)
        assert (joint.type, joint.parent, joint.child) == (expected.type, expected.parent, expected.child)
        assert_pose(joint.P_H_C, expected.P_H_C)
        np.testing.assert_allclose(joint.axis, expected.axis, atol=1e-12)
        np.testing.assert_allclose(joint.axis_point, expected.axis_point, atol=1e-12)
        assert joint.limits == expected.limits
    for expected in urdf_model.links:
        inertial = sdf_model.link(expected.name).inertial
        assert inertial.mass == expected.inertial.mass
        assert_pose(inertial.L_H_I, expected.inertial.L_H_I)
        np.testing.assert_allclose(inertial.inertia, expected.inertial.inertia)


def test_geometries(tmp_path):
    write(tmp_path / "meshes" / "part.stl", "solid part\nendsolid part")
    path = write(
        tmp_path / "shapes.sdf",
        """
        <sdf version="1.11"><model name="m"><link name="l">
          <collision name="box"><pose>1 0 0 0 0 0</pose><geometry><box><size>1 2 3</size></box></geometry></collision>
          <collision name="sphere"><geometry><sphere><radius>0.5</radius></sphere></geometry></collision>
          <collision name="cylinder">
            <geometry><cylinder><radius>0.1</radius><length>0.4</length></cylinder></geometry>
          </collision>
          <collision name="capsule">
            <geometry><capsule><radius>0.2</radius><length>0.6</length></capsule></geometry>
          </collision>
          <collision name="ellipsoid"><geometry><ellipsoid><radii>0.1 0.2 0.3</radii></ellipsoid></geometry></collision>
          <collision name="plane">
            <geometry><plane><normal>0 0 2</normal><size>10 20</size></plane></geometry>
          </collision>
          <collision name="mesh">
            <geometry><mesh><uri>meshes/part.stl</uri><scale>2 2 2</scale></mesh></geometry>
          </collision>
          <collision name="lost"><geometry><mesh><uri>model://nowhere/part.stl</uri></mesh></geometry></collision>
          <collision name="nothing"><geometry><empty/></geometry></collision>
          <collision name="cone"><geometry><cone><radius>0.2</radius><length>0.1</length></cone></geometry></collision>
        </link></model></sdf>
        """,
    )
    collisions = {item.name: item for item in parse_sdf(path).link("l").collisions}
    assert list(collisions) == ["box", "sphere", "cylinder", "capsule", "ellipsoid", "plane", "mesh", "lost", "cone"]
    assert collisions["box"].geometry.size == (1.0, 2.0, 3.0)
    assert_pose(collisions["box"].L_H_G, H((1, 0, 0)))
    assert collisions["box"].location.line == 2
    assert collisions["sphere"].geometry.radius == 0.5
    cylinder = collisions["cylinder"].geometry
    assert (cylinder.type, cylinder.radius, cylinder.length) == ("cylinder", 0.1, 0.4)
    capsule = collisions["capsule"].geometry
    assert (capsule.type, capsule.radius, capsule.length) == ("capsule", 0.2, 0.6)
    assert collisions["ellipsoid"].geometry.size == (0.1, 0.2, 0.3)
    plane = collisions["plane"].geometry
    assert plane.normal == (0.0, 0.0, 1.0) and plane.size == (10.0, 20.0)
    mesh = collisions["mesh"].geometry
    assert mesh.uri == "meshes/part.stl" and mesh.scale == (2.0, 2.0, 2.0)
    assert Path(mesh.path) == tmp_path / "meshes" / "part.stl"
    assert collisions["lost"].geometry.path is None
    cone = collisions["cone"].geometry  # a convex mesh: its apex and its base's rim, centred on its axis's middle
    assert (cone.type, cone.uri, cone.vertices.shape) == ("mesh", "cone", (33, 3))
    np.testing.assert_allclose(cone.vertices[0], [0.0, 0.0, 0.05])
    np.testing.assert_allclose(np.linalg.norm(cone.vertices[1:, :2], axis=1), 0.2)
    np.testing.assert_allclose(cone.vertices[1:, 2], -0.05)


def test_heightmap_collision_is_skipped_with_a_warning():
    with pytest.warns(UserWarning, match="heightmap"):
        model = parse_sdf(
            '<sdf version="1.9"><model name="m"><link name="l"><collision name="h"><geometry>'
            "<heightmap><uri>x.png</uri></heightmap></geometry></collision></link></model></sdf>"
        )
    assert model.link("l").collisions == []


def test_an_unknown_joint_type_lists_the_supported_ones():
    source = """<sdf version="1.9"><model name="m"><link name="a"/><link name="b"/>
      <joint name="knee" type="helical"><parent>a</parent><child>b</child></joint></model></sdf>"""
    with pytest.raises(ModelLoadError, match="unknown joint type 'helical' \\(revolute, .*screw, gearbox\\)") as caught:
        parse_sdf(source)
    assert caught.value.line == 2


STATIC = """<sdf version="1.9"><model name="table"><static>true</static>
  <pose>0 0 1 0 0 0</pose>
  <link name="top"><pose>0 0 0.5 0 0 0</pose></link>
  <link name="leg"><pose>0.4 0 0 0 0 0</pose></link>
</model></sdf>"""


def test_static_model_is_welded_to_the_world():
    model = parse_sdf(STATIC)
    assert model.static and model.fixed_to_world
    assert model.root == "top"
    assert_pose(model.M_H_root, H((0, 0, 0.5)))
    assert [link.name for link in model.links] == ["top", "leg"]
    (weld,) = model.joints
    assert (weld.name, weld.type, weld.parent, weld.child) == ("__weld_leg__", "fixed", "top", "leg")
    assert_pose(weld.P_H_C, H((0.4, 0, -0.5)))


UNJOINED = """<sdf version="1.11"><world name="w"><model name="m"><pose>0 0 1 0 0 0</pose>
  <link name="a"><pose>0 0 0.5 0 0 0</pose></link>
  <link name="b"><pose>1 0 0 0 0 0</pose></link>
  <link name="c"><pose>1 0 -0.5 0 0 0</pose></link>
  <joint name="hinge" type="revolute"><parent>b</parent><child>c</child><axis><xyz>0 1 0</xyz></axis></joint>
</model></world></sdf>"""


def test_links_that_no_joint_joins_are_models_of_their_own():
    """SDF lets a model's links move freely where no joint joins them (Gazebo simulates each as a
    free body): a world loads one model per tree, the canonical link's named after the model; a
    model alone is that tree, with a warning naming the others; a static model stays one tree."""
    models = parse_sdf_world(UNJOINED).models
    assert [(m.name, m.root, [link.name for link in m.links], [j.name for j in m.joints]) for m in models] == [
        ("m", "a", ["a"], []), ("m::b", "b", ["b", "c"], ["hinge"])]
    for model, position in zip(models, ((0, 0, 1.5), (1, 0, 1))):
        assert_pose(model.W_H_M @ model.M_H_root, H(position))
        assert not model.fixed_to_world
    with pytest.warns(UserWarning, match=r"links of model 'm' are not all joined: the model is its canonical link's tree 'm'; load_world "
                                         r"loads the others too \('m::b'\), as free models"):
        alone = parse_sdf(UNJOINED)
    assert alone.name == "m" and [link.name for link in alone.links] == ["a"]
    static = parse_sdf_world(UNJOINED.replace("<pose>0 0 1 0 0 0</pose>", "<static>true</static><pose>0 0 1 0 0 0</pose>")).models
    assert [m.name for m in static] == ["m"] and len(static[0].links) == 3


def test_fixed_joint_to_world_welds_its_child_as_root():
    model = parse_sdf(
        """<sdf version="1.9"><model name="m"><pose>1 0 0 0 0 0</pose>
          <link name="base"><pose>0 0 0.2 0 0 0</pose></link>
          <link name="arm"><pose>0 0 0.7 0 0 0</pose></link>
          <joint name="anchor" type="fixed"><parent>world</parent><child>base</child></joint>
          <joint name="j" type="revolute"><parent>base</parent><child>arm</child></joint>
        </model></sdf>"""
    )
    assert model.fixed_to_world and not model.static
    assert model.root == "base"
    assert_pose(model.M_H_root, H((0, 0, 0.2)))
    assert [joint.name for joint in model.joints] == ["j"]


def test_revolute_joint_to_world_keeps_a_massless_world_root():
    model = parse_sdf(
        """<sdf version="1.9"><model name="pendulum"><pose>0 0 2 0 0 0</pose>
          <link name="bob"><pose>0 0 -1 0 0 0</pose></link>
          <joint name="pivot" type="revolute"><pose>0 0 1 0 0 0</pose><parent>world</parent><child>bob</child>
            <axis><xyz>1 0 0</xyz></axis></joint>
        </model></sdf>"""
    )
    assert model.root == "world" and model.fixed_to_world
    assert model.link("world").inertial is None
    assert_pose(model.M_H_root, H((0, 0, -2)))
    pivot = model.joint("pivot")
    assert (pivot.parent, pivot.child) == ("world", "bob")
    assert_pose(pivot.P_H_C, H((0, 0, 1)))  # the bob in the world frame
    np.testing.assert_allclose(pivot.axis_point, [0, 0, 1])


def make_model_folder(root: Path, name: str, body: str, versions=("1.9",)) -> Path:
    folder = root / name
    entries = "".join(f'<sdf version="{version}">model-{version}.sdf</sdf>' for version in versions)
    write(folder / "model.config", f"<model><name>{name}</name>{entries}</model>")
    for version in versions:
        write(folder / f"model-{version}.sdf", f'<sdf version="{version}">{body}</sdf>')
    return folder


GRIPPER = """<model name="gripper">
  <link name="palm"/>
  <link name="finger"><pose>0 0 0.1 0 0 0</pose></link>
  <joint name="slide" type="prismatic"><parent>palm</parent><child>finger</child><axis><xyz>0 1 0</xyz></axis></joint>
  <frame name="mount" attached_to="palm"><pose>0 0 -0.05 0 0 0</pose></frame>
</model>"""


def test_include_with_model_uri_and_model_config(tmp_path, monkeypatch):
    models = tmp_path / "models"
    make_model_folder(models, "gripper", GRIPPER, versions=("1.6", "1.9"))
    write(models / "gripper" / "model-2.0.sdf", "<sdf version='2.0'/>")
    text = (models / "gripper" / "model.config").read_text()
    write(
        models / "gripper" / "model.config", text.replace("</model>", '<sdf version="2.0">model-2.0.sdf</sdf></model>')
    )
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(models))
    robot = write(
        tmp_path / "robot" / "robot.sdf",
        """
        <sdf version="1.9"><model name="robot">
          <link name="arm"/>
          <include>
            <uri>model://gripper</uri>
            <name>hand</name>
            <placement_frame>mount</placement_frame>
            <pose relative_to="arm">0 0 1 0 0 0</pose>
          </include>
          <joint name="wrist" type="fixed"><parent>arm</parent><child>hand::palm</child></joint>
        </model></sdf>
        """,
    )
    model = parse_sdf(robot)
    assert [link.name for link in model.links] == ["arm", "hand::palm", "hand::finger"]
    assert [joint.name for joint in model.joints] == ["hand::slide", "wrist"]
    # The mount, 5 cm below the palm, is placed 1 m above the arm.
    assert_pose(model.joint("wrist").P_H_C, H((0, 0, 1.05)))
    assert model.link("hand::palm").location.file == str(models / "gripper" / "model-1.9.sdf")
    mount = next(item for item in model.frames if item.name == "hand::mount")
    assert mount.link == "hand::palm"


def test_include_of_a_relative_file_and_merge(tmp_path):
    write(tmp_path / "parts" / "gripper.sdf", f'<sdf version="1.9">{GRIPPER}</sdf>')
    robot = write(
        tmp_path / "robot.sdf",
        """
        <sdf version="1.9"><model name="robot">
          <link name="arm"/>
          <include merge="true"><uri>parts/gripper.sdf</uri><pose>0 0 2 0 0 0</pose></include>
          <joint name="wrist" type="fixed"><parent>arm</parent><child>palm</child></joint>
        </model></sdf>
        """,
    )
    model = parse_sdf(robot)
    assert [link.name for link in model.links] == ["arm", "palm", "finger"]
    assert {frame.name for frame in model.frames} == {"_merged__gripper__model__", "mount"}
    assert_pose(model.joint("wrist").P_H_C, H((0, 0, 2)))


def test_include_cycle_is_an_error(tmp_path):
    path = write(
        tmp_path / "loop.sdf",
        '<sdf version="1.9"><model name="loop"><link name="l"/>\n<include><uri>loop.sdf</uri></include></model></sdf>',
    )
    with pytest.raises(ModelLoadError, match="include cycle") as caught:
        parse_sdf(path)
    assert caught.value.line == 2 and caught.value.file == str(path)


WORLD = """
<sdf version="1.9">
  <world name="lab">
    <gravity>0 0 -9.81</gravity>
    <physics name="fast" type="dart">
      <max_step_size>0.004</max_step_size><real_time_factor>2</real_time_factor>
    </physics>
    <physics name="slow" type="ode" default="true">
      <max_step_size>0.002</max_step_size><real_time_factor>0.5</real_time_factor>
    </physics>
    <frame name="spawn"><pose>0 0 1 0 0 0</pose></frame>
    <model name="ground">
      <static>true</static>
      <link name="plane"><collision name="c"><geometry><plane/></geometry></collision></link>
    </model>
    <include>
      <uri>model://gripper</uri>
      <name>g1</name>
      <pose relative_to="spawn">1 0 0 0 0 {half_pi}</pose>
    </include>
    <include>
      <uri>model://gripper</uri>
      <name>g2</name>
      <static>true</static>
      <pose relative_to="g1">0 2 0 0 0 0</pose>
    </include>
  </world>
</sdf>
"""


def test_world_with_gravity_physics_and_posed_models(tmp_path, monkeypatch):
    make_model_folder(tmp_path / "models", "gripper", GRIPPER)
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "models"))
    world = parse_sdf_world(write(tmp_path / "lab.sdf", WORLD.format(half_pi=HALF_PI)))
    assert world.name == "lab"
    np.testing.assert_allclose(world.gravity, [0, 0, -9.81])
    assert (world.physics.step_size, world.physics.real_time_factor, world.physics.type) == (0.002, 0.5, "ode")
    ground, g1, g2 = world.models
    assert [model.name for model in world.models] == ["ground", "g1", "g2"]
    assert ground.static and ground.fixed_to_world
    assert_pose(g1.W_H_M, H((1, 0, 1), RZ90))
    assert not g1.static
    # g2 is 2 m along the y axis of g1, which is the -x axis of the world.
    assert_pose(g2.W_H_M, H((-1, 0, 1), RZ90))
    assert g2.static and g2.fixed_to_world
    assert [link.name for link in g2.links] == ["palm", "finger"]


def test_world_defaults_and_model_selection_by_name(tmp_path, monkeypatch):
    world = parse_sdf_world('<sdf version="1.9"><world name="w"><model name="m"><link name="l"/></model></world></sdf>')
    np.testing.assert_allclose(world.gravity, [0, 0, -9.8])
    assert (world.physics.step_size, world.physics.real_time_factor) == (0.001, 1.0)
    make_model_folder(tmp_path / "models", "gripper", GRIPPER)
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "models"))
    path = write(tmp_path / "lab.sdf", WORLD.format(half_pi=HALF_PI))
    g2 = parse_sdf(path, model_name="g2")
    assert g2.name == "g2"
    assert_pose(g2.W_H_M, H((-1, 0, 1), RZ90))
    assert parse_sdf(path).name == "ground"
    with pytest.raises(ModelLoadError, match="no model named 'g3' \\(found: ground, g1, g2\\)"):
        parse_sdf(path, model_name="g3")


def test_world_gravity_of_sdf_1_4_lives_in_physics():
    world = parse_sdf_world(
        '<sdf version="1.4"><world name="w"><physics type="ode"><gravity>0 0 -3</gravity></physics>'
        '<model name="m"><link name="l"/></model></world></sdf>'
    )
    np.testing.assert_allclose(world.gravity, [0, 0, -3])


def test_model_is_chosen_by_name_among_several():
    source = '<sdf version="1.6"><model name="a"><link name="x"/></model><model name="b"><link name="y"/></model></sdf>'
    assert parse_sdf(source).name == "a"
    assert parse_sdf(source, model_name="b").links[0].name == "y"


SDF_CORPUS = sorted(MALFORMED.glob("sdf_*.sdf"))


def test_malformed_sdf_corpus_covers_the_cases():
    assert len(SDF_CORPUS) >= 12


@pytest.mark.parametrize("path", SDF_CORPUS, ids=[path.name for path in SDF_CORPUS])
def test_malformed_sdf_file_raises_located_error(path):
    with pytest.raises(ModelLoadError) as caught:
        parse_sdf(path)
    assert caught.value.file == str(path)
    assert caught.value.line is not None
    expected = re.search(r"<!--\s*expect:\s*(.*?)\s*-->", path.read_text(encoding="utf-8"))
    assert expected is not None
    assert expected.group(1).lower() in str(caught.value).lower()
