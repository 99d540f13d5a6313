"""SDF joints that close a loop (see :mod:`jaxsim_like.parsers.sdf_describe`): in document order,
a joint whose child link already hangs from the tree (or is the root of its parent's tree)
becomes a :class:`LoopClosure` holding its frame in its child and its parent link: ``ball`` a
connect, ``fixed`` a weld, ``revolute`` a hinge, ``prismatic`` a slider, ``screw`` a screw,
``universal`` a universal (the frames turned so that their ``z`` axis is the joint's axis, the
child's ``<axis2>`` for the universal's ``F1``), a universal whose axes are not perpendicular a
connect with a warning at the joint's line; a closing joint from the world and joints between
world-level models are refused at their line."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from jaxsim_like.parsers.errors import ModelLoadError, ModelLoadWarning
from jaxsim_like.parsers.sdf import parse_sdf

FOUR_BAR = (Path(__file__).resolve().parents[1] / "assets" / "sdf_loops" / "four_bar.sdf").read_text()
CASSIE = os.path.join(
    os.path.dirname(np.__file__), "..", "cmeel.prefix", "share", "example-robot-data", "robots", "cassie_description", "robots", "cassie.sdf"
)


def closing(joint_type: str, pose: str = "0 0 0.2 0 0 0") -> str:
    """The four-bar with its closing joint 'pin' of ``joint_type`` at ``pose`` in the rocker."""
    return FOUR_BAR.replace('<joint name="pin" type="revolute">\n      <pose>0 0 0.2 0 0 0</pose>', f'<joint name="pin" type="{joint_type}">\n      <pose>{pose}</pose>')


def quietly(source: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_sdf(source)


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_ball_joint_closing_the_four_bar_is_a_connect_at_its_origin():
    description = quietly(closing("ball"))
    assert [joint.name for joint in description.joints] == ["crank_joint", "coupler_joint", "rocker_joint"]
    (loop,) = description.loops
    assert (loop.name, loop.kind, loop.link1, loop.link2) == ("pin", "connect", "rocker", "coupler")
    np.testing.assert_allclose(loop.L1_H_F1[:3, 3], [0.0, 0.0, 0.2], atol=1e-15)
    np.testing.assert_allclose(loop.L2_H_F2[:3, 3], [0.2, 0.0, 0.2], atol=1e-15)
    assert (loop.time_constant, loop.damping_ratio) == (0.02, 1.0)
    assert loop.location.line == line_of(FOUR_BAR, '<joint name="pin"')


def test_a_fixed_joint_closing_a_loop_is_a_weld_of_its_pose():
    description = quietly(closing("fixed", "0 0 0.2 0.3 -0.2 0.5"))
    (loop,) = description.loops
    assert (loop.kind, loop.link1, loop.link2, loop.torque_scale) == ("weld", "rocker", "coupler", 1.0)
    W_H_rocker, W_H_coupler = np.eye(4), np.eye(4)
    W_H_rocker[:3, 3], W_H_coupler[:3, 3] = [0.3, 0.0, 1.0], [0.1, 0.0, 1.0]
    np.testing.assert_allclose(W_H_rocker @ loop.L1_H_F1, W_H_coupler @ loop.L2_H_F2, atol=1e-15)
    assert not np.allclose(loop.L1_H_F1[:3, :3], np.eye(3))


def posed_frames(loop) -> tuple[np.ndarray, np.ndarray]:
    """The closure's two frames in the world at rest (the four-bar's rocker and coupler)."""
    W_H_rocker, W_H_coupler = np.eye(4), np.eye(4)
    W_H_rocker[:3, 3], W_H_coupler[:3, 3] = [0.3, 0.0, 1.0], [0.1, 0.0, 1.0]
    return W_H_rocker @ loop.L1_H_F1, W_H_coupler @ loop.L2_H_F2


@pytest.mark.parametrize(("joint_type", "kind"), [("revolute", "hinge"), ("continuous", "hinge"), ("prismatic", "slider"), ("screw", "screw")])
def test_a_joint_with_an_axis_closing_a_loop_holds_its_frame_turned_onto_the_axis(joint_type, kind):
    text = closing(joint_type, "0 0 0.2 0.4 0 0").replace("<axis>", "<screw_thread_pitch>0.5</screw_thread_pitch><axis><limit><lower>-3</lower><upper>3</upper></limit>" if joint_type == "screw" else "<axis>")
    (loop,) = quietly(text).loops
    assert (loop.name, loop.kind, loop.link1, loop.link2) == ("pin", kind, "rocker", "coupler")
    W_H_F1, W_H_F2 = posed_frames(loop)
    np.testing.assert_allclose(W_H_F1, W_H_F2, atol=1e-15)
    np.testing.assert_allclose(W_H_F1[:3, 3], [0.3, 0.0, 1.2], atol=1e-15)
    np.testing.assert_allclose(W_H_F1[:3, 2], [0.0, np.cos(0.4), np.sin(0.4)], atol=1e-15)  # <axis> 0 1 0 rolled by 0.4 rad
    assert loop.pitch == (0.5 / (2 * np.pi) if joint_type == "screw" else 0.0)


def test_a_universal_joint_closing_a_loop_holds_its_two_axes_normal():
    text = closing("universal").replace("<axis><xyz>0 1 0</xyz></axis>\n    </joint>\n  </model>", "<axis><xyz>0 1 0</xyz></axis><axis2><xyz>1 0 0</xyz></axis2>\n    </joint>\n  </model>")
    (loop,) = quietly(text).loops
    assert loop.kind == "universal"
    W_H_F1, W_H_F2 = posed_frames(loop)
    np.testing.assert_allclose(W_H_F1[:3, 3], W_H_F2[:3, 3], atol=1e-15)
    np.testing.assert_allclose(W_H_F2[:3, 2], [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(W_H_F1[:3, 2], [1.0, 0.0, 0.0], atol=1e-15)


def test_a_universal_joint_with_axes_not_perpendicular_closing_a_loop_is_a_connect_and_warns_at_its_line():
    text = closing("universal").replace("<axis><xyz>0 1 0</xyz></axis>\n    </joint>\n  </model>", "<axis><xyz>0 1 0</xyz></axis><axis2><xyz>1 1 0</xyz></axis2>\n    </joint>\n  </model>")
    with pytest.warns(ModelLoadWarning, match="universal joint 'pin' closes a loop with <axis> and <axis2> not perpendicular: loaded as a connect") as caught:
        description = parse_sdf(text)
    line = line_of(text, '<joint name="pin"')
    assert f":{line}:" in str(caught[0].message)
    (loop,) = description.loops
    assert (loop.kind, loop.link1, loop.link2) == ("connect", "rocker", "coupler")


def test_a_joint_whose_child_is_the_root_of_its_tree_closes_the_cycle():
    text = """<sdf version="1.9"><model name="m"><link name="a"/><link name="b"><pose>1 0 0 0 0 0</pose></link><link name="c"/>
      <joint name="ab" type="revolute"><parent>a</parent><child>b</child></joint>
      <joint name="bc" type="revolute"><parent>b</parent><child>c</child></joint>
      <joint name="ca" type="ball"><parent>c</parent><child>a</child></joint></model></sdf>"""
    description = quietly(text)
    assert [joint.name for joint in description.joints] == ["ab", "bc"] and description.root == "a"
    (loop,) = description.loops
    assert (loop.name, loop.link1, loop.link2) == ("ca", "a", "c")


def test_a_joint_from_the_world_closing_a_loop_is_refused_at_its_line():
    text = FOUR_BAR.replace("<parent>coupler</parent>", "<parent>world</parent>")
    with pytest.raises(ModelLoadError, match="joint 'pin' closes a loop to the world .* not supported") as caught:
        quietly(text)
    assert caught.value.line == line_of(text, '<joint name="pin"')


def test_a_joint_closing_a_loop_across_two_models_is_refused_at_its_line():
    text = """<sdf version="1.9"><world name="w">
      <model name="one"><link name="a"/></model>
      <model name="two"><link name="b"/></model>
      <joint name="across" type="ball"><parent>one::a</parent><child>two::b</child></joint>
    </world></sdf>"""
    with pytest.raises(ModelLoadError, match="joints between world-level models are not supported") as caught:
        quietly(text)
    assert caught.value.line == line_of(text, '<joint name="across"')


@pytest.mark.skipif(not os.path.isfile(CASSIE), reason="example-robot-data is not installed")
def test_cassies_six_closing_joints_load_with_their_rows():
    with pytest.warns(ModelLoadWarning) as caught:
        description = parse_sdf(CASSIE)
    loops = {loop.name: (loop.kind, loop.link1, loop.link2) for loop in description.loops}
    for side in ("left", "right"):
        assert loops[f"{side}-shin-spring-joint"] == ("slider", f"{side}-knee-spring", f"{side}-shin")
        assert loops[f"{side}-achilles-spring-joint"] == ("hinge", f"{side}-heel-spring", f"{side}-achilles-rod")
        assert loops[f"{side}-plantar-foot-joint"] == ("connect", f"{side}-foot", f"{side}-plantar-rod")
    assert len(loops) == 6
    assert not [w for w in caught if "closes a loop" in str(w.message)]
