"""validate_description on hand-built descriptions: every rule, and the location it reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jaxsim_like.parsers import (
    FrameDescription,
    Inertial,
    JointDescription,
    JointLimits,
    LinkDescription,
    Mimic,
    ModelDescription,
    ModelLoadError,
    ModelLoadWarning,
    SourceLocation,
    validate_description,
)


def where(line: int, element: str = "<x>") -> SourceLocation:
    return SourceLocation(file="model.sdf", line=line, element=element)


def body(name: str, mass: float = 1.0, inertia=(0.1, 0.1, 0.1), line: int = 1) -> LinkDescription:
    return LinkDescription(name=name, inertial=Inertial(mass=mass, inertia=np.diag(inertia)), location=where(line))


def hinge(name: str, parent: str, child: str, kind: str = "revolute", line: int = 10, **fields) -> JointDescription:
    fields.setdefault("axis", np.array([0.0, 0.0, 1.0]))
    return JointDescription(name=name, type=kind, parent=parent, child=child, location=where(line), **fields)


def chain(links=None, joints=None, **fields) -> ModelDescription:
    links = links if links is not None else [body("base", line=1), body("arm", line=2), body("hand", line=3)]
    joints = (
        joints
        if joints is not None
        else [hinge("shoulder", "base", "arm", line=11), hinge("wrist", "arm", "hand", line=12)]
    )
    return ModelDescription(name="m", links=links, joints=joints, **fields)


def fails(description: ModelDescription, match: str) -> ModelLoadError:
    with pytest.raises(ModelLoadError, match=match) as error:
        validate_description(description)
    assert error.value.file == "model.sdf"
    return error.value


def test_valid_chain_passes():
    validate_description(chain())
    validate_description(chain(root="base"))


def test_duplicate_names():
    assert fails(chain(links=[body("base"), body("arm"), body("arm", line=7)]), "duplicate link name 'arm'").line == 7
    joints = [hinge("j", "base", "arm"), hinge("j", "arm", "hand", line=13)]
    assert fails(chain(joints=joints), "duplicate joint name 'j'").line == 13
    frames = [FrameDescription("tool", "hand", location=where(20)), FrameDescription("tool", "arm", location=where(21))]
    assert fails(chain(frames=frames), "frame name 'tool'").line == 21
    assert fails(chain(frames=[FrameDescription("arm", "hand", location=where(22))]), "frame name 'arm'").line == 22


def test_missing_parent_and_child_links():
    error = fails(
        chain(joints=[hinge("shoulder", "torso", "arm", line=11), hinge("w", "arm", "hand")]), "parent link 'torso'"
    )
    assert (error.line, error.element) == (11, "<x>")
    fails(chain(joints=[hinge("shoulder", "base", "arm"), hinge("w", "arm", "finger")]), "child link 'finger'")


def test_frame_on_unknown_link():
    fails(chain(frames=[FrameDescription("tool", "gripper", location=where(5))]), "unknown link 'gripper'")


def test_two_parents_cycle_self_loop_and_roots():
    two = [hinge("a", "base", "hand"), hinge("b", "arm", "hand", line=14), hinge("c", "base", "arm")]
    assert fails(chain(joints=two), "'hand' has two parents").line == 14
    loop = [hinge("a", "base", "arm"), hinge("b", "arm", "hand"), hinge("c", "hand", "base", line=15)]
    fails(chain(joints=loop), "kinematic loop")
    fails(chain(joints=[hinge("a", "base", "arm"), hinge("s", "hand", "hand")]), "to itself")
    error = fails(chain(joints=[hinge("a", "base", "arm")]), "several root links")
    assert error.line == 3
    fails(chain(root="arm"), "root 'arm' differs")


def test_no_links():
    with pytest.raises(ModelLoadError, match="no links"):
        validate_description(ModelDescription(name="m", links=[], joints=[], source="empty.urdf"))


def test_location_without_file_uses_the_model_source():
    links = [body("base"), LinkDescription("arm", Inertial(mass=-1.0), location=SourceLocation(line=4))]
    description = ModelDescription("m", links, [hinge("a", "base", "arm")], source="robot.urdf")
    with pytest.raises(ModelLoadError) as error:
        validate_description(description)
    assert (error.value.file, error.value.line) == ("robot.urdf", 4)


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_floating_and_planar_joints_inside_the_tree(kind: str):
    joints = [hinge("shoulder", "base", "arm"), hinge("free", "arm", "hand", kind=kind, line=16)]
    error = fails(chain(joints=joints), f"{kind} joint 'free'")
    assert error.line == 16


def test_unknown_joint_type():
    fails(
        chain(joints=[hinge("a", "base", "arm"), hinge("b", "arm", "hand", kind="helical")]), "unknown joint type 'helical'"
    )


def test_masses():
    assert fails(chain(links=[body("base"), body("arm", mass=-2.0, line=5), body("hand")]), "negative mass").line == 5
    fails(chain(links=[body("base"), body("arm", mass=math.nan), body("hand")]), "non-finite mass")


def test_massless_links_that_are_allowed():
    massless_leaf = [body("base"), body("arm"), body("hand", mass=0.0, inertia=(0, 0, 0), line=9)]
    validate_description(chain(links=massless_leaf))  # regularised when the model is built
    virtual = [body("base"), body("arm", mass=0.0, inertia=(0, 0, 0)), body("hand")]
    validate_description(chain(links=virtual))
    fixed = [hinge("shoulder", "base", "arm"), hinge("wrist", "arm", "hand", kind="fixed")]
    validate_description(chain(links=[body("base"), body("arm"), LinkDescription("hand")], joints=fixed))
    only_frames = [LinkDescription("base"), LinkDescription("tip")]
    weld = [hinge("tip", "base", "tip", kind="fixed")]
    validate_description(ModelDescription("m", only_frames, weld, fixed_to_world=True))
    validate_description(ModelDescription("m", only_frames, weld, static=True))


def test_massless_free_base():
    only_frames = [LinkDescription("base", location=where(2)), LinkDescription("tip")]
    fails(ModelDescription("m", only_frames, [hinge("tip", "base", "tip", kind="fixed")]), "moved by the free base")


def test_inertia_checks():
    asymmetric = np.array([[0.1, 0.01, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]])
    arm = LinkDescription("arm", Inertial(mass=1.0, inertia=asymmetric), location=where(2))
    fails(chain(links=[body("base"), arm, body("hand")]), "not symmetric")
    nan = LinkDescription("arm", Inertial(mass=1.0, inertia=np.full((3, 3), np.nan)), location=where(2))
    fails(chain(links=[body("base"), nan, body("hand")]), "not a finite 3x3")


def test_physical_consistency_is_left_to_the_lumped_bodies():
    for inertia in ((0.1, 0.0, 0.1), (0.1, 0.1, 0.3), (0.0, 0.0, 0.0)):
        validate_description(chain(links=[body("base"), body("arm", inertia=inertia), body("hand")]))
    negative = LinkDescription("arm", Inertial(mass=0.0, inertia=-np.eye(3)), location=where(2))
    validate_description(chain(links=[body("base"), negative, body("hand")]))


def test_poses_must_be_finite_rigid_transforms():
    bad = np.eye(4)
    bad[0, 3] = np.nan
    fails(chain(joints=[hinge("shoulder", "base", "arm", P_H_C=bad), hinge("w", "arm", "hand")]), "joint origin")
    scaled = np.diag([2.0, 1.0, 1.0, 1.0])
    fails(chain(joints=[hinge("shoulder", "base", "arm", P_H_C=scaled), hinge("w", "arm", "hand")]), "not a rigid")
    mirrored = np.diag([-1.0, 1.0, 1.0, 1.0])
    fails(chain(M_H_root=mirrored), "root pose")
    arm = LinkDescription("arm", Inertial(mass=1.0, L_H_I=bad, inertia=np.eye(3)), location=where(2))
    fails(chain(links=[body("base"), arm, body("hand")]), "inertial origin")
    fails(chain(frames=[FrameDescription("tool", "hand", L_H_F=bad, location=where(3))]), "frame pose")


def test_axes():
    fails(
        chain(joints=[hinge("shoulder", "base", "arm", axis=np.array([0.0, 0.0, 2.0])), hinge("w", "arm", "hand")]),
        "not a unit",
    )
    fails(
        chain(joints=[hinge("shoulder", "base", "arm", axis=np.array([0.0, np.inf, 0.0])), hinge("w", "arm", "hand")]),
        "finite",
    )
    fixed = [hinge("shoulder", "base", "arm", kind="fixed", axis=np.zeros(3)), hinge("w", "arm", "hand")]
    validate_description(chain(joints=fixed))


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"limits": JointLimits(lower=1.0, upper=0.0)}, "exceeds upper"),
        ({"limits": JointLimits(lower=math.nan)}, "NaN"),
        ({"limits": JointLimits(lower=math.inf, upper=math.inf)}, "infinite limits"),
        ({"limits": JointLimits(effort=-1.0)}, "negative effort"),
        ({"limits": JointLimits(velocity=-1.0)}, "negative velocity"),
        ({"damping": -0.1}, "damping"),
        ({"friction": math.inf}, "friction"),
        ({"mimic": Mimic("wrist", multiplier=math.nan)}, "mimic multiplier"),
    ],
)
def test_joint_values(fields: dict, match: str):
    error = fails(
        chain(joints=[hinge("shoulder", "base", "arm", line=21, **fields), hinge("wrist", "arm", "hand")]), match
    )
    assert error.line == 21


@pytest.mark.parametrize("leader", ["nobody", "shoulder"])
def test_mimic_of_a_missing_joint_or_itself_warns_and_is_dropped(leader: str):
    joints = [hinge("shoulder", "base", "arm", line=21, mimic=Mimic(leader)), hinge("wrist", "arm", "hand")]
    description = chain(joints=joints)
    with pytest.warns(ModelLoadWarning, match=f"mimic refers to invalid joint '{leader}'") as record:
        validate_description(description)
    assert len(record) == 1 and (record[0].message.file, record[0].message.line) == ("model.sdf", 21)
    assert description.joint("shoulder").mimic is None


def test_valid_limits_mimic_and_infinite_bounds():
    joints = [
        hinge("shoulder", "base", "arm", limits=JointLimits(lower=-1.0, upper=-1.0, effort=0.0, velocity=0.0)),
        hinge("wrist", "arm", "hand", kind="continuous", mimic=Mimic("shoulder", -1.0, 0.5), damping=0.1),
    ]
    validate_description(chain(joints=joints))
