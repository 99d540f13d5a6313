"""SDFormat pose frame semantics: relative_to, attached_to, expressed_in, nesting, legacy versions.

Every expected transform below is computed by hand from the poses written in the model
(rotations are multiples of 90 degrees so the matrices can be read off directly).
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like.parsers.errors import ModelLoadError
from jaxsim_like.parsers.sdf import parse_sdf

HALF_PI = "1.5707963267948966"
I3 = np.eye(3)
RZ90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
RY90 = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])


def H(xyz=(0.0, 0.0, 0.0), rotation=I3) -> np.ndarray:
    transform = np.eye(4)
    transform[:3, :3] = rotation
    transform[:3, 3] = xyz
    return transform


def assert_pose(actual, expected) -> None:
    np.testing.assert_allclose(actual, expected, atol=1e-12)


def frame(model, name):
    return next(item for item in model.frames if item.name == name)


def test_relative_to_chain_through_frames_attached_to_frames():
    model = parse_sdf(
        f"""<sdf version="1.9"><model name="chain">
          <link name="base"><pose>0 0 1 0 0 0</pose></link>
          <frame name="F1" attached_to="base"><pose>1 0 0 0 0 {HALF_PI}</pose></frame>
          <frame name="F2" attached_to="F1"><pose>1 0 0 0 0 0</pose></frame>
          <frame name="F3" attached_to="F2"><pose relative_to="__model__">0 0 5 0 0 0</pose></frame>
          <link name="tip"><pose relative_to="F2">0 0 1 0 0 0</pose></link>
          <joint name="weld" type="fixed"><parent>base</parent><child>tip</child></joint>
        </model></sdf>"""
    )
    assert model.root == "base"
    assert_pose(model.M_H_root, H((0, 0, 1)))
    # base_H_F2 = base_H_F1 F1_H_F2: x of F1 is y of base.
    assert [(item.name, item.link) for item in model.frames] == [("F1", "base"), ("F2", "base"), ("F3", "base")]
    assert_pose(frame(model, "F1").L_H_F, H((1, 0, 0), RZ90))
    assert_pose(frame(model, "F2").L_H_F, H((1, 1, 0), RZ90))
    assert_pose(frame(model, "F3").L_H_F, H((0, 0, 4)))
    weld = model.joint("weld")
    assert_pose(weld.P_H_C, H((1, 1, 1), RZ90))
    np.testing.assert_allclose(weld.axis_point, [0, 0, 0], atol=1e-12)


JOINT_ON_FRAME = f"""<sdf version="1.7"><model name="m">
  <link name="base"/>
  <frame name="hinge" attached_to="base"><pose>1 0 0 0 0 {HALF_PI}</pose></frame>
  <frame name="tilted"><pose>0 0 0 0 {HALF_PI} 0</pose></frame>
  <link name="arm"><pose>2 0 0 0 0 0</pose></link>
  <joint name="j" type="revolute">
    <pose relative_to="hinge"/>
    <parent>base</parent><child>arm</child>
    <axis><xyz{{expressed}}>1 0 0</xyz></axis>
  </joint>
  <frame name="at_joint" attached_to="j"/>
</model></sdf>"""


@pytest.mark.parametrize(
    "expressed, axis",
    [
        ("", (0, 1, 0)),  # joint frame: x of the hinge frame is y of the arm
        (' expressed_in="__model__"', (1, 0, 0)),
        (' expressed_in="tilted"', (0, 0, -1)),
        (' expressed_in="arm"', (1, 0, 0)),
        (' expressed_in="hinge"', (0, 1, 0)),
    ],
)
def test_joint_posed_relative_to_a_frame_and_axis_expressed_in(expressed, axis):
    model = parse_sdf(JOINT_ON_FRAME.format(expressed=expressed))
    joint = model.joint("j")
    assert (joint.parent, joint.child) == ("base", "arm")
    assert_pose(joint.P_H_C, H((2, 0, 0)))
    np.testing.assert_allclose(joint.axis, axis, atol=1e-12)
    np.testing.assert_allclose(joint.axis_point, [-1, 0, 0], atol=1e-12)
    # A frame attached to a joint is attached to its child link, at the joint frame.
    at_joint = frame(model, "at_joint")
    assert at_joint.link == "arm"
    assert_pose(at_joint.L_H_F, H((-1, 0, 0), RZ90))


LEGACY_AXIS = f"""<sdf version="{{version}}"><model name="m">
  <link name="base"/>
  <link name="arm"><pose>0 0 0 0 0 {HALF_PI}</pose></link>
  <joint name="j" type="revolute">
    <pose>0 0 0 0 {HALF_PI} 0</pose>
    <parent>base</parent><child>arm</child>
    <axis><xyz>1 0 0</xyz>{{flag}}</axis>
  </joint>
</model></sdf>"""
MODEL_X_IN_ARM = (0, -1, 0)  # the arm is yawed by 90 degrees in the model
JOINT_X_IN_ARM = (0, 0, -1)  # the joint is pitched by 90 degrees in the arm


@pytest.mark.parametrize(
    "version, flag, axis",
    [
        ("1.6", "<use_parent_model_frame>true</use_parent_model_frame>", MODEL_X_IN_ARM),
        ("1.6", "<use_parent_model_frame>false</use_parent_model_frame>", JOINT_X_IN_ARM),
        ("1.6", "", JOINT_X_IN_ARM),
        ("1.5", "<use_parent_model_frame>1</use_parent_model_frame>", MODEL_X_IN_ARM),
        ("1.4", "", MODEL_X_IN_ARM),
        ("1.4", "<use_parent_model_frame>false</use_parent_model_frame>", JOINT_X_IN_ARM),
    ],
)
def test_use_parent_model_frame_before_1_7(version, flag, axis):
    joint = parse_sdf(LEGACY_AXIS.format(version=version, flag=flag)).joint("j")
    np.testing.assert_allclose(joint.axis, axis, atol=1e-12)


def test_expressed_in_model_matches_legacy_use_parent_model_frame():
    legacy = parse_sdf(LEGACY_AXIS.format(version="1.6", flag="<use_parent_model_frame>true</use_parent_model_frame>"))
    modern = parse_sdf(LEGACY_AXIS.format(version="1.7", flag="").replace("<xyz>", '<xyz expressed_in="__model__">'))
    np.testing.assert_allclose(modern.joint("j").axis, legacy.joint("j").axis, atol=1e-12)


def test_use_parent_model_frame_is_rejected_from_1_7():
    source = LEGACY_AXIS.format(version="1.7", flag="\n<use_parent_model_frame>true</use_parent_model_frame>")
    with pytest.raises(ModelLoadError, match="use_parent_model_frame") as caught:
        parse_sdf(source)
    assert caught.value.line == 8


NESTED = f"""<sdf version="1.8"><model name="robot">
  <link name="base"/>
  <model name="arm">
    <pose>0 0 1 0 0 0</pose>
    <link name="upper"><pose>1 0 0 0 0 0</pose></link>
    <model name="hand">
      <pose relative_to="upper">0 1 0 0 0 0</pose>
      <link name="finger"><pose>0 0 0 0 0 {HALF_PI}</pose></link>
      <frame name="tip"><pose relative_to="finger">1 0 0 0 0 0</pose></frame>
    </model>
    <joint name="wrist" type="revolute">
      <parent>upper</parent><child>hand::finger</child>
      <axis><xyz expressed_in="hand">1 0 0</xyz></axis>
    </joint>
  </model>
  <joint name="shoulder" type="fixed"><parent>base</parent><child>arm::upper</child></joint>
  <frame name="arm_origin" attached_to="arm"/>
  <frame name="hand_origin" attached_to="arm::hand::__model__"/>
</model></sdf>"""


def test_nested_models_are_flattened_with_scoped_names():
    model = parse_sdf(NESTED)
    assert [link.name for link in model.links] == ["base", "arm::upper", "arm::hand::finger"]
    assert [joint.name for joint in model.joints] == ["arm::wrist", "shoulder"]
    assert model.root == "base"
    wrist = model.joint("arm::wrist")
    assert (wrist.parent, wrist.child) == ("arm::upper", "arm::hand::finger")
    assert_pose(wrist.P_H_C, H((0, 1, 0), RZ90))
    np.testing.assert_allclose(wrist.axis, (0, -1, 0), atol=1e-12)  # x of the hand model in the yawed finger
    assert_pose(model.joint("shoulder").P_H_C, H((1, 0, 1)))
    tip = frame(model, "arm::hand::tip")
    assert tip.link == "arm::hand::finger"  # attached to the hand model, so to its canonical link
    assert_pose(tip.L_H_F, H((1, 0, 0)))
    # A frame attached to a model is attached to the model's canonical link, posed at its frame.
    arm_origin = frame(model, "arm_origin")
    assert arm_origin.link == "arm::upper"
    assert_pose(arm_origin.L_H_F, H((-1, 0, 0)))
    hand_origin = frame(model, "hand_origin")
    assert hand_origin.link == "arm::hand::finger"
    assert_pose(hand_origin.L_H_F, H((0, 0, 0), RZ90.T))


def test_canonical_link_attribute_chooses_where_model_frames_attach():
    model = parse_sdf(
        """<sdf version="1.8"><model name="m" canonical_link="second">
          <link name="first"/>
          <link name="second"><pose>0 0 3 0 0 0</pose></link>
          <joint name="j" type="fixed"><parent>first</parent><child>second</child></joint>
          <frame name="origin"/>
        </model></sdf>"""
    )
    origin = frame(model, "origin")
    assert origin.link == "second"
    assert_pose(origin.L_H_F, H((0, 0, -3)))


def test_placement_frame_of_a_nested_model():
    model = parse_sdf(
        """<sdf version="1.8"><model name="m">
          <link name="base"/>
          <frame name="slot"><pose>0 0 2 0 0 0</pose></frame>
          <model name="tool" placement_frame="mount">
            <pose relative_to="slot"/>
            <link name="body"><pose>0 0 1 0 0 0</pose></link>
            <frame name="mount" attached_to="body"><pose relative_to="body">0 0 -0.5 0 0 0</pose></frame>
          </model>
          <joint name="fix" type="fixed"><parent>base</parent><child>tool::body</child></joint>
        </model></sdf>"""
    )
    # The mount (0.5 above the tool frame) goes to the slot: the tool frame is at z = 1.5.
    assert_pose(model.joint("fix").P_H_C, H((0, 0, 2.5)))


def test_placement_frame_of_the_model_sets_its_world_pose():
    model = parse_sdf(
        """<sdf version="1.8"><model name="m" placement_frame="bottom">
          <pose>1 2 0 0 0 0</pose>
          <link name="body"><pose>0 0 0.5 0 0 0</pose></link>
          <frame name="bottom" attached_to="body"><pose>0 0 -0.5 0 0 0</pose></frame>
        </model></sdf>"""
    )
    assert_pose(model.W_H_M, H((1, 2, 0)))
    assert_pose(model.M_H_root, H((0, 0, 0.5)))


def test_legacy_pose_frame_attribute():
    model = parse_sdf(
        """<sdf version="1.6"><model name="m">
          <link name="base"/>
          <frame name="F"><pose>0 0 1 0 0 0</pose></frame>
          <link name="top"><pose frame="F">1 0 0 0 0 0</pose></link>
          <joint name="j" type="fixed"><parent>base</parent><child>top</child></joint>
        </model></sdf>"""
    )
    assert_pose(model.joint("j").P_H_C, H((1, 0, 1)))


def test_links_and_joints_may_share_names_before_1_7_only():
    source = """<sdf version="{version}"><model name="m">
      <link name="base"/>
      <link name="arm"><pose>1 0 0 0 0 0</pose></link>
      <joint name="arm" type="revolute"><pose>0 0 1 0 0 0</pose><parent>base</parent><child>arm</child></joint>
      <frame name="F"><pose relative_to="arm"/></frame>
    </model></sdf>"""
    model = parse_sdf(source.format(version="1.6"))
    # F is attached to the canonical link 'base'; 'arm' names the link (x = 1), not the joint (z = 1).
    assert_pose(frame(model, "F").L_H_F, H((1, 0, 0)))
    with pytest.raises(ModelLoadError, match="duplicate name 'm::arm'") as caught:
        parse_sdf(source.format(version="1.7"))
    assert caught.value.line == 4


def test_quaternion_and_degree_poses():
    model = parse_sdf(
        """<sdf version="1.9"><model name="m">
          <link name="base"/>
          <link name="a"><pose rotation_format="quat_xyzw">1 0 0 0 0 0.7071067811865476 0.7071067811865476</pose></link>
          <link name="b"><pose degrees="true">0 1 0 0 0 90</pose></link>
          <joint name="ja" type="fixed"><parent>base</parent><child>a</child></joint>
          <joint name="jb" type="fixed"><parent>base</parent><child>b</child></joint>
        </model></sdf>"""
    )
    assert_pose(model.joint("ja").P_H_C, H((1, 0, 0), RZ90))
    assert_pose(model.joint("jb").P_H_C, H((0, 1, 0), RZ90))


def test_collision_and_inertial_relative_to_a_model_frame():
    model = parse_sdf(
        """<sdf version="1.11"><model name="m">
          <frame name="F"><pose>0 0 2 0 0 0</pose></frame>
          <link name="base">
            <pose>1 0 0 0 0 0</pose>
            <inertial><pose relative_to="F">0 0 0.5 0 0 0</pose><mass>2</mass></inertial>
            <collision name="c">
              <pose relative_to="F"/><geometry><sphere><radius>0.1</radius></sphere></geometry>
            </collision>
          </link>
        </model></sdf>"""
    )
    base = model.link("base")
    assert_pose(base.collisions[0].L_H_G, H((-1, 0, 2)))
    assert_pose(base.inertial.L_H_I, H((-1, 0, 2.5)))


@pytest.mark.parametrize(
    "body, message, line",
    [
        ('<link name="a"><pose relative_to="nowhere"/></link>', "unknown frame 'nowhere'", 3),
        ('<frame name="F" attached_to="ghost"/>', "unknown frame 'ghost'", 3),
        ('<link name="a"><pose relative_to="a"/></link>', "relative_to cycle: m::a -> m::a", 3),
        (
            '<frame name="F1"><pose relative_to="F2"/></frame>\n<frame name="F2"><pose relative_to="F1"/></frame>',
            "relative_to cycle",
            4,
        ),
        (
            '<frame name="F1" attached_to="F2"/>\n<frame name="F2" attached_to="F1"/>',
            "attached_to cycle: m::F1 -> m::F2 -> m::F1",
            4,
        ),
        ('<frame name="F" attached_to="F"/>', "attached_to cycle", 3),
        (
            '<model name="inner"><link name="x"><pose relative_to="base"/></link></model>',
            "unknown frame 'base' in model 'm::inner'",
            3,
        ),
        ('<frame name="F"><pose relative_to="world"/></frame>', "unknown frame 'world'", 3),
        (
            '<model name="inner" placement_frame="nope"><link name="x"/></model>',
            "unknown frame 'nope' in model 'm::inner'",
            3,
        ),
    ],
)
def test_bad_frame_references_raise_at_their_line(body, message, line):
    source = f'<sdf version="1.8">\n<model name="m"><link name="base"/>\n{body}\n</model></sdf>'
    with pytest.raises(ModelLoadError, match=message.replace("(", r"\(")) as caught:
        parse_sdf(source)
    assert caught.value.line == line


def test_frames_and_relative_to_are_separate_graphs():
    # F1 is attached to L2 while L2 is posed relative to F1: not a cycle (pose frame semantics, 6).
    model = parse_sdf(
        """<sdf version="1.7"><model name="not_a_cycle">
          <link name="L1"><pose>0 0 1 0 0 0</pose></link>
          <frame name="F1" attached_to="L2"><pose relative_to="L1">1 0 0 0 0 0</pose></frame>
          <link name="L2"><pose relative_to="F1">0 1 0 0 0 0</pose></link>
          <joint name="j" type="fixed"><parent>L1</parent><child>L2</child></joint>
        </model></sdf>"""
    )
    assert_pose(model.joint("j").P_H_C, H((1, 1, 0)))
    assert_pose(frame(model, "F1").L_H_F, H((0, -1, 0)))
