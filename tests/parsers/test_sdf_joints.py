"""SDF ``screw``, ``revolute2`` and ``gearbox`` joints (see :mod:`jaxsim_like.parsers.sdf_describe`):
the screw's pitch by SDFormat version (1.10's ``screw_thread_pitch`` in m/rev, right-handed
positive; ``thread_pitch`` in rad/m, left-handed positive), ``revolute2`` as two revolute joints
through a massless link (ODE's suspension warned about), ``gearbox`` as a coupling of the two
joints that hang its links from the reference body, other layouts refused at the joint's line."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from jaxsim_like.parsers.errors import ModelLoadError, ModelLoadWarning
from jaxsim_like.parsers.sdf import parse_sdf

GEARS = Path(__file__).resolve().parents[1] / "assets" / "sdf_joints" / "gears.sdf"


def screw(version: str, pitch: str) -> str:
    return f"""<sdf version="{version}"><model name="m"><link name="a"/><link name="b"/>
      <joint name="s" type="screw"><parent>a</parent><child>b</child>{pitch}
        <axis><xyz>0 0 2</xyz><limit><lower>-1</lower><upper>4</upper></limit><dynamics><damping>0.2</damping></dynamics></axis>
      </joint></model></sdf>"""


def quietly(source: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_sdf(source)


@pytest.mark.parametrize(
    "version, pitch, expected",
    [
        ("1.10", "<screw_thread_pitch>0.004</screw_thread_pitch>", 0.004 / (2 * math.pi)),
        ("1.11", "<screw_thread_pitch>-0.5</screw_thread_pitch>", -0.5 / (2 * math.pi)),
        ("1.9", "<thread_pitch>250</thread_pitch>", -1 / 250),
        ("1.6", "<thread_pitch>-10</thread_pitch>", 0.1),
        ("1.10", "<thread_pitch>3</thread_pitch><screw_thread_pitch>0.01</screw_thread_pitch>", 0.01 / (2 * math.pi)),
    ],
)
def test_the_screw_pitch_by_version(version, pitch, expected):
    (joint,) = quietly(screw(version, pitch)).joints
    assert joint.type == "screw" and joint.pitch == pytest.approx(expected, rel=1e-15)
    assert np.allclose(joint.axis, [0, 0, 1]) and (joint.limits.lower, joint.limits.upper) == (-1.0, 4.0) and joint.damping == 0.2


def test_thread_pitch_in_a_1_10_file_is_deprecated():
    with pytest.warns(ModelLoadWarning, match="thread_pitch is deprecated since SDFormat 1.10") as caught:
        (joint,) = parse_sdf(screw("1.10", "<thread_pitch>20</thread_pitch>")).joints
    assert joint.pitch == pytest.approx(-0.05) and caught[0].message.line == 2


@pytest.mark.parametrize("version, expected", [("1.10", 1 / (2 * math.pi)), ("1.9", -1.0)])
def test_a_screw_without_pitch_takes_its_version_default_with_a_warning(version, expected):
    with pytest.warns(ModelLoadWarning, match="screw joint 'm::s' has no <(screw_)?thread_pitch>"):
        (joint,) = parse_sdf(screw(version, "")).joints
    assert joint.pitch == pytest.approx(expected)


def test_a_zero_thread_pitch_is_refused():
    with pytest.raises(ModelLoadError, match="thread_pitch must not be zero") as caught:
        parse_sdf(screw("1.9", "<thread_pitch>0</thread_pitch>"))
    assert caught.value.line == 2


REVOLUTE2 = """<sdf version="1.9"><model name="m"><link name="hub"/><link name="wheel"><pose>0 0.2 0 0 0 0</pose></link>
  <joint name="steer" type="revolute2"><parent>hub</parent><child>wheel</child>
    <axis><xyz>0 0 1</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>
    <axis2><xyz>0 1 0</xyz><dynamics><damping>0.1</damping></dynamics></axis2>{physics}
  </joint></model></sdf>"""


def test_revolute2_is_two_revolute_joints_through_a_massless_link():
    description = quietly(REVOLUTE2.format(physics=""))
    first, second = description.joints
    assert (first.name, first.type, first.parent, first.child) == ("steer", "revolute", "hub", "wheel::steer")
    assert (second.name, second.type, second.parent, second.child) == ("steer::axis2", "revolute", "wheel::steer", "wheel")
    assert np.allclose(first.axis, [0, 0, 1]) and np.allclose(second.axis, [0, 1, 0])
    assert (first.limits.lower, first.limits.upper, second.damping) == (-0.5, 0.5, 0.1)
    link = description.link("wheel::steer")
    assert link.inertial is None or link.inertial.mass == 0.0


def test_revolute2_suspension_is_not_modelled_and_warns():
    physics = "\n    <physics><ode><suspension><cfm>0.1</cfm><erp>0.3</erp></suspension></ode></physics>"
    with pytest.warns(ModelLoadWarning, match="revolute2 joint 'steer': ODE's suspension is not modelled") as caught:
        parse_sdf(REVOLUTE2.format(physics=physics))
    assert caught[0].message.line == 5


def test_revolute2_with_parallel_axes_is_refused():
    with pytest.raises(ModelLoadError, match="revolute2 joint 'steer' has parallel <axis> and <axis2>") as caught:
        parse_sdf(REVOLUTE2.format(physics="").replace("<xyz>0 1 0</xyz>", "<xyz>0 0 -3</xyz>"))
    assert caught.value.line == 2


def test_a_gearbox_couples_the_joints_of_its_links_by_its_ratio():
    """theta_2 = -ratio theta_1 about the gearbox's axes; the output joint's axis points against
    <axis2>, so q_output = +2 q_input; flipping <axis2> flips the sign."""
    source = GEARS.read_text()
    joints = {joint.name: joint for joint in quietly(source).joints}
    assert set(joints) == {"input_shaft", "output_shaft"}
    mimic = joints["output_shaft"].mimic
    assert (mimic.joint, mimic.multiplier, mimic.offset) == ("input_shaft", 2.0, 0.0)
    flipped = source.replace("<axis2><xyz>0 1 0</xyz></axis2>", "<axis2><xyz>0 -1 0</xyz></axis2>").replace(
        "<gearbox_ratio>2</gearbox_ratio>", "<gearbox_ratio>0.5</gearbox_ratio>"
    )
    mimic = {joint.name: joint for joint in quietly(flipped).joints}["output_shaft"].mimic
    assert (mimic.joint, mimic.multiplier) == ("input_shaft", -0.5)


@pytest.mark.parametrize(
    "change, message",
    [
        (("<gearbox_reference_body>frame</gearbox_reference_body>", "<gearbox_reference_body>input</gearbox_reference_body>"),
         "link 'input' hangs from 'frame' by the revolute joint 'input_shaft'; a gearbox needs both of its links to hang "
         "from its reference body 'input' by revolute joints"),
        (("<gearbox_reference_body>frame</gearbox_reference_body>", ""), "gearbox joint 'mesh' has no <gearbox_reference_body>"),
        (("<axis2><xyz>0 1 0</xyz></axis2>", "<axis2><xyz>1 0 0</xyz></axis2>"),
         "its <axis2> is not parallel to the axis of joint 'output_shaft', which turns link 'output'"),
        (('name="output_shaft" type="continuous"', 'name="output_shaft" type="prismatic"'),
         "link 'output' hangs from 'frame' by the prismatic joint 'output_shaft'"),
    ],
)
def test_other_gearbox_layouts_are_refused_at_the_joint(change, message):
    source = GEARS.read_text().replace(*change)
    with pytest.raises(ModelLoadError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        parse_sdf(source)
    assert caught.value.line == 33 and "gearbox" in str(caught.value)
