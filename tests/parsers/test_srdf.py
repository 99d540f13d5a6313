"""SRDF parsing: groups (chains, subgroups), states, end effectors, collisions, spheres, errors."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like.parsers.description import JointDescription, LinkDescription, ModelDescription
from jaxsim_like.parsers.errors import ModelLoadError
from jaxsim_like.parsers.srdf import SRDF, Group, parse_srdf

# base_link -+- head_joint -> head
#            +- shoulder -> upper_arm - elbow -> forearm - wrist -> hand -+- finger_right_joint -> finger_right
#                                                                        +- finger_left_joint -> finger_left
#                                                                        +- tool_joint (fixed) -> tool
# The joints are listed out of tree order on purpose.
_JOINTS = [
    ("wrist", "revolute", "forearm", "hand"),
    ("head_joint", "revolute", "base_link", "head"),
    ("finger_right_joint", "prismatic", "hand", "finger_right"),
    ("elbow", "revolute", "upper_arm", "forearm"),
    ("shoulder", "continuous", "base_link", "upper_arm"),
    ("finger_left_joint", "prismatic", "hand", "finger_left"),
    ("tool_joint", "fixed", "hand", "tool"),
]
_LINKS = ["base_link", "head", "upper_arm", "forearm", "hand", "finger_right", "finger_left", "tool"]

_INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
URDF = (
    '<robot name="arm">\n'
    + "".join(f'  <link name="{name}">{_INERTIAL}</link>\n' for name in _LINKS)
    + "".join(
        f'  <joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        + ('<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else "")
        + "</joint>\n"
        for name, kind, parent, child in _JOINTS
    )
    + "</robot>\n"
)

SRDF_TEXT = """<?xml version="1.0"?>
<robot name="arm">
  <virtual_joint name="world_joint" type="Floating" parent_frame="world" child_link="base_link"/>
  <group name="arm">
    <chain base_link="base_link" tip_link="hand"/>
  </group>
  <group name="gripper">
    <link name=" finger_left "/>
    <joint name="finger_right_joint"/>
  </group>
  <group name="whole_body">
    <joint name="world_joint"/>
    <group name="arm_with_gripper"/>
    <joint name="head_joint"/>
  </group>
  <group name="arm_with_gripper">
    <group name="gripper"/>
    <group name="arm"/>
  </group>
  <group name="cross">
    <chain base_link="head" tip_link="forearm"/>
  </group>
  <group name="point">
    <chain base_link="hand" tip_link="hand"/>
  </group>
  <group name="base">
    <link name="base_link"/>
  </group>
  <group_state name="home" group="arm">
    <joint name="shoulder" value="0.1"/>
    <joint name="elbow" value="-0.5"/>
    <joint name="wrist" value="0"/>
  </group_state>
  <group_state name="start" group="whole_body">
    <joint name="world_joint" value="0 0 1  0 0 0 1"/>
    <joint name="head_joint" value="2e-1"/>
  </group_state>
  <end_effector name="hand_eef" parent_link="hand" group="gripper" parent_group="arm"/>
  <end_effector name="tool_eef" parent_link="tool" group="gripper"/>
  <passive_joint name="head_joint"/>
  <disable_collisions link1="base_link" link2="upper_arm" reason="Adjacent"/>
  <disable_collisions link1="hand" link2="head"/>
  <disable_default_collisions link="head"/>
  <enable_collisions link1="head" link2="forearm" reason="Camera sees the forearm"/>
  <enable_collisions link1="hand" link2="head" reason="overridden by the disabled pair"/>
  <link_sphere_approximation link="forearm">
    <sphere center="0 0 0.1" radius="0.05"/>
    <sphere center="0 0 0" radius="0"/>
    <sphere center="0 0 0.2" radius="0.04"/>
  </link_sphere_approximation>
  <link_sphere_approximation link="head">
    <sphere center="1 2 3" radius="0"/>
  </link_sphere_approximation>
  <link_sphere_approximation link="hand"/>
  <joint_property joint_name="world_joint" property_name="angular_distance_weight" value="0.5"/>
  <joint_property joint_name="world_joint" property_name="motion_model" value="holonomic"/>
</robot>
"""


def _model() -> ModelDescription:
    return ModelDescription(
        name="arm",
        links=[LinkDescription(name=name) for name in _LINKS],
        joints=[JointDescription(name=n, type=t, parent=p, child=c) for n, t, p, c in _JOINTS],
        root="base_link",
    )


@pytest.fixture
def model() -> ModelDescription:
    return _model()


@pytest.fixture
def srdf(model) -> SRDF:
    return parse_srdf(SRDF_TEXT, model)


def test_groups_as_written(srdf):
    assert srdf.name == "arm"
    assert [group.name for group in srdf.groups] == [
        "arm", "gripper", "whole_body", "arm_with_gripper", "cross", "point", "base"
    ]
    assert srdf.group("arm").chains == [("base_link", "hand")]
    gripper = srdf.group("gripper")
    assert gripper.links == ["finger_left"]
    assert gripper.joints == ["finger_right_joint"]
    assert srdf.group("whole_body").subgroups == ["arm_with_gripper"]
    assert srdf.group("arm_with_gripper").subgroups == ["gripper", "arm"]
    assert srdf.group("arm").location.line == 4
    with pytest.raises(KeyError):
        srdf.group("legs")


def test_chain_expands_to_the_joints_between_base_and_tip(srdf, model):
    assert srdf.group_joints("arm", model) == ["shoulder", "elbow", "wrist"]
    assert srdf.group_links("arm", model) == ["upper_arm", "forearm", "hand"]


def test_chain_through_a_common_ancestor(srdf, model):
    assert srdf.group_joints("cross", model) == ["head_joint", "shoulder", "elbow"]
    assert srdf.group_joints("point", model) == []


def test_links_bring_their_parent_joint(srdf, model):
    assert srdf.group_joints("gripper", model) == ["finger_right_joint", "finger_left_joint"]
    assert srdf.group_links("gripper", model) == ["finger_right", "finger_left"]
    assert srdf.group_joints("base", model) == ["world_joint"]
    assert srdf.group_links("base", model) == ["base_link"]


def test_subgroups_expand_recursively_in_tree_order(srdf, model):
    assert srdf.group_joints("arm_with_gripper", model) == [
        "shoulder", "elbow", "wrist", "finger_right_joint", "finger_left_joint"
    ]
    assert srdf.group_joints("whole_body", model) == [
        "world_joint", "head_joint", "shoulder", "elbow", "wrist", "finger_right_joint", "finger_left_joint"
    ]
    assert srdf.group_links("whole_body", model) == [
        "base_link", "head", "upper_arm", "forearm", "hand", "finger_right", "finger_left"
    ]


def test_group_states(srdf):
    home = srdf.group_state("arm", "home")
    assert home.joint_values == {"shoulder": [0.1], "elbow": [-0.5], "wrist": [0.0]}
    start = srdf.group_state("whole_body", "start")
    assert start.joint_values == {"world_joint": [0, 0, 1, 0, 0, 0, 1], "head_joint": [0.2]}
    with pytest.raises(KeyError):
        srdf.group_state("gripper", "home")


def test_end_effectors_virtual_and_passive_joints(srdf):
    hand, tool = srdf.end_effectors
    assert (hand.name, hand.parent_link, hand.component_group) == ("hand_eef", "hand", "gripper")
    assert hand.parent_group == "arm"
    assert (tool.name, tool.parent_link, tool.parent_group) == ("tool_eef", "tool", "")
    (virtual,) = srdf.virtual_joints
    assert (virtual.name, virtual.type, virtual.parent_frame, virtual.child_link) == (
        "world_joint", "floating", "world", "base_link"
    )
    assert srdf.passive_joints == ["head_joint"]
    assert srdf.joint_properties == {"world_joint": {"angular_distance_weight": "0.5", "motion_model": "holonomic"}}


def test_collision_pairs_are_symmetric(srdf):
    assert [(p.link1, p.link2, p.reason) for p in srdf.disabled_collision_pairs] == [
        ("base_link", "upper_arm", "Adjacent"), ("hand", "head", "")
    ]
    assert srdf.collision_disabled("base_link", "upper_arm")
    assert srdf.collision_disabled("upper_arm", "base_link")
    assert not srdf.collision_disabled("upper_arm", "forearm")
    assert not srdf.collision_disabled("forearm", "upper_arm")


def test_default_disabled_links_and_reenabled_pairs(srdf):
    assert srdf.no_default_collision_links == ["head"]
    assert srdf.collision_disabled("head", "upper_arm")
    assert srdf.collision_disabled("tool", "head")
    assert not srdf.collision_disabled("forearm", "head")
    assert not srdf.collision_disabled("head", "forearm")
    # A pair both enabled and disabled stays disabled.
    assert srdf.collision_disabled("head", "hand")


def test_sphere_approximations(srdf):
    forearm, head = srdf.link_sphere_approximations
    assert forearm.link == "forearm"
    assert [sphere.radius for sphere in forearm.spheres] == [0.05, 0.04]
    np.testing.assert_array_equal(forearm.spheres[1].center, [0.0, 0.0, 0.2])
    assert forearm.spheres[0].center.shape == (3,)
    # Only zero spheres: one zero sphere at the origin (no collision checking for the link).
    assert head.link == "head"
    assert len(head.spheres) == 1
    assert head.spheres[0].radius == 0.0
    np.testing.assert_array_equal(head.spheres[0].center, np.zeros(3))


def test_parse_without_a_model_skips_model_checks():
    srdf = parse_srdf(SRDF_TEXT.replace('link1="base_link"', 'link1="no_such_link"'))
    assert srdf.disabled_collision_pairs[0].link1 == "no_such_link"
    assert srdf.group_joints("arm", _model()) == ["shoulder", "elbow", "wrist"]


def test_parse_from_a_file_names_it(tmp_path, model):
    path = tmp_path / "arm.srdf"
    path.write_text(SRDF_TEXT)
    srdf = parse_srdf(path, model)
    assert srdf.source == str(path)
    assert srdf.group("gripper").location.file == str(path)
    bad = tmp_path / "bad.srdf"
    bad.write_text(SRDF_TEXT.replace('<link name=" finger_left "/>', '<link name="finger_middle"/>'))
    with pytest.raises(ModelLoadError) as error:
        parse_srdf(bad, model)
    assert error.value.file == str(bad)
    assert error.value.line == 8
    assert "finger_middle" in str(error.value) and str(bad) in str(error.value)


def test_robot_name_mismatch_warns(model):
    with pytest.warns(UserWarning, match="'other'"):
        parse_srdf(SRDF_TEXT.replace('<robot name="arm">', '<robot name="other">'), model)


_BEFORE = '<?xml version="1.0"?>\n<robot name="arm">\n  <virtual_joint name="vj" type="planar" parent_frame="odom" child_link="base_link"/>\n'
_GROUPS = '  <group name="arm"><chain base_link="base_link" tip_link="hand"/></group>\n  <group name="fingers"><link name="finger_left"/><link name="finger_right"/></group>\n'


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('<group name="g"><link name="nope"/></group>', "link 'nope' is not in model 'arm'"),
        ('<group name="g"><joint name="knee"/></group>', "joint 'knee' is not in model 'arm'"),
        ('<group name="g"><chain base_link="base_link" tip_link="toe"/></group>', "link 'toe'"),
        ('<group name="g"><chain base_link="base_link"/></group>', "missing attribute 'tip_link'"),
        ('<group name="g"><group name="legs"/></group>', "subgroup 'legs' of group 'g' is not defined"),
        ('<group name="arm"><joint name="elbow"/></group>', "group 'arm' is defined twice"),
        ('<group><joint name="elbow"/></group>', "missing attribute 'name'"),
        ('<virtual_joint name="v2" type="hinge" parent_frame="w" child_link="base_link"/>', "unknown virtual joint type 'hinge'"),
        ('<virtual_joint name="v2" type="fixed" parent_frame="w" child_link="ghost"/>', "link 'ghost'"),
        ('<virtual_joint name="elbow" type="fixed" parent_frame="w" child_link="base_link"/>', "name of a model joint"),
        ('<virtual_joint name="vj" type="fixed" parent_frame="w" child_link="base_link"/>', "virtual joint 'vj' is defined twice"),
        ('<group_state name="s" group="legs"><joint name="elbow" value="0"/></group_state>', "group 'legs' is not defined"),
        ('<group_state name="s" group="arm"><joint name="head_joint" value="0"/></group_state>', "joint 'head_joint' is not in group 'arm'"),
        ('<group_state name="s" group="arm"><joint name="elbow" value="0 1"/></group_state>', "revolute joint 'elbow' takes 1 values, got 2"),
        ('<group_state name="s" group="arm"><joint name="elbow" value="zero"/></group_state>', "not a list of numbers"),
        ('<group_state name="s" group="arm"><joint name="elbow"/></group_state>', "missing attribute 'value'"),
        ('<group_state name="s" group="arm"><joint name="ankle" value="0"/></group_state>', "joint 'ankle' is not in model"),
        ('<end_effector name="e" parent_link="hand" group="legs"/>', "group 'legs' is not defined"),
        ('<end_effector name="e" parent_link="palm" group="fingers"/>', "link 'palm'"),
        ('<end_effector name="e" parent_link="head" group="fingers" parent_group="arm"/>', "does not hold parent link 'head'"),
        ('<passive_joint name="knee"/>', "joint 'knee'"),
        ('<disable_collisions link1="hand" link2="palm" reason="x"/>', "link 'palm'"),
        ('<enable_collisions link1="ghost" link2="hand"/>', "link 'ghost'"),
        ('<disable_default_collisions link="ghost"/>', "link 'ghost'"),
        ('<link_sphere_approximation link="ghost"><sphere center="0 0 0" radius="1"/></link_sphere_approximation>', "link 'ghost'"),
        ('<link_sphere_approximation link="hand"><sphere center="0 0" radius="1"/></link_sphere_approximation>', "needs 3 numbers"),
        ('<link_sphere_approximation link="hand"><sphere center="0 0 0" radius="-1"/></link_sphere_approximation>', "non-negative"),
        ('<link_sphere_approximation link="hand"><sphere center="0 0 0"/></link_sphere_approximation>', "missing attribute 'radius'"),
        ('<joint_property joint_name="knee" property_name="p" value="1"/>', "joint 'knee'"),
        ('<joint_property joint_name="elbow" value="1"/>', "missing attribute 'property_name'"),
    ],
)
def test_errors_name_the_line_and_element(model, bad, message):
    text = _BEFORE + _GROUPS + "  " + bad + "\n</robot>\n"
    with pytest.raises(ModelLoadError, match=message) as error:
        parse_srdf(text, model)
    assert error.value.line == text[: text.index(bad)].count("\n") + 1
    assert error.value.element is not None


def test_planar_virtual_joint_state_takes_three_values(model):
    state = '<group_state name="s" group="base"><joint name="vj" value="1 2 0.5"/></group_state>\n'
    group = '<group name="base"><link name="base_link"/></group>\n'
    srdf = parse_srdf(_BEFORE + group + state + "</robot>", model)
    assert srdf.group_state("base", "s").joint_values == {"vj": [1.0, 2.0, 0.5]}
    with pytest.raises(ModelLoadError, match="planar joint 'vj' takes 3 values, got 1"):
        parse_srdf(_BEFORE + group + state.replace("1 2 0.5", "1") + "</robot>", model)


def test_fixed_joints_take_no_state_value(model):
    text = (
        _BEFORE
        + '<group name="g"><joint name="tool_joint"/></group>\n'
        + '<group_state name="s" group="g"><joint name="tool_joint" value="0"/></group_state>\n</robot>'
    )
    with pytest.raises(ModelLoadError, match="fixed joint 'tool_joint' takes 0 values"):
        parse_srdf(text, model)


def test_subgroup_cycles_are_errors_even_without_a_model():
    text = (
        '<robot name="arm">\n'
        '  <group name="x"><group name="a"/></group>\n'
        '  <group name="a"><group name="b"/></group>\n'
        '  <group name="b"><group name="c"/></group>\n'
        '  <group name="c"><group name="a"/></group>\n'
        "</robot>"
    )
    with pytest.raises(ModelLoadError, match="cycle: a -> b -> c -> a") as error:
        parse_srdf(text)
    assert error.value.line == 3


def test_group_joints_rejects_cycles_and_unknown_names_of_a_hand_built_srdf(model):
    srdf = SRDF(name="arm", groups=[Group(name="a", subgroups=["a"])])
    with pytest.raises(ModelLoadError, match="cycle: a -> a"):
        srdf.group_joints("a", model)
    srdf = SRDF(name="arm", groups=[Group(name="a", joints=["knee"])])
    with pytest.raises(ModelLoadError, match="knee"):
        srdf.group_joints("a", model)
    with pytest.raises(KeyError):
        srdf.group_joints("b", model)


def test_chain_between_disconnected_links_is_an_error(model):
    model.links.append(LinkDescription(name="box"))
    text = '<robot name="arm">\n<group name="g">\n<chain base_link="hand" tip_link="box"/></group></robot>'
    with pytest.raises(ModelLoadError, match="do not form a chain") as error:
        parse_srdf(text, model)
    assert error.value.line == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('<robot><group name="g"/></robot>', "missing attribute 'name'"),
        ('<model name="arm"/>', "<robot> root element"),
        ('<robot name="arm"><group name="g"></robot>', "malformed XML"),
    ],
)
def test_bad_documents(text, message):
    with pytest.raises(ModelLoadError, match=message):
        parse_srdf(text)


def test_with_a_model_parsed_from_urdf():
    urdf = pytest.importorskip("jaxsim_like.parsers.urdf")
    model = urdf.parse_urdf(URDF)
    srdf = parse_srdf(SRDF_TEXT, model)
    assert srdf.group_joints("whole_body", model) == [
        "world_joint", "head_joint", "shoulder", "elbow", "wrist", "finger_right_joint", "finger_left_joint"
    ]
    assert srdf.group_links("arm", model) == ["upper_arm", "forearm", "hand"]
