"""MJCF joint equalities loaded as joint couplings (issues 30 and 31): MuJoCo's rule
``qpos_a - qpos0_a = c0 + c1 (qpos_b - qpos0_b)`` holds through motion as softly as MuJoCo's,
the leader moves as in MuJoCo on the same file, a welded leader holds its joint at ``qpos0 +
c0``, the equality's ``solref`` becomes the coupling's reference and its ``solimp`` its
impedance (``test_sim_equality_solimp.py``), and what is not supported is refused with its line
(connects and welds load as loop closures: ``test_sim_loops.py``).

One file, three rods hanging from hinges with non-zero ``ref`` (``qpos0``) under the world:
``follower = 0.1 - 0.5 leader`` (MuJoCo's default solref and solimp), and ``held`` at ``0.25``
(no joint2) with ``solref="0.05 0.7"`` and a solimp of nearly one. 2 s at dt 1 ms from a state on
the coupling and 0.05 rad off the hold, semi-implicit Euler here and MuJoCo's Euler (the same
scheme without joint damping); one compilation for the module.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.couplings import NO_LEADER
from jaxsim_like.dynamics.model import build_model

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

C0, C1, HOLD = 0.1, -0.5, 0.25
EQUALITIES = f"""    <joint name="couple" joint1="follower" joint2="leader" polycoef="{C0} {C1} 0 0 0"/>
    <joint name="hold" joint1="held" polycoef="{HOLD} 0 0 0 0" solref="0.05 0.7" solimp="0.9999 0.9999 0.001"/>"""
RODS = """<mujoco model="rods">
  <compiler angle="radian"/>
  <option timestep="0.001"/>
  <worldbody>
    <body name="leader_rod" pos="0 0.1 1">
      <joint name="leader" type="hinge" axis="0 1 0" ref="0.3"/>
      <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02" mass="0.4" contype="0" conaffinity="0"/>
    </body>
    <body name="follower_rod" pos="0 -0.1 1">
      <joint name="follower" type="hinge" axis="0 1 0" ref="-0.2"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.15" size="0.02" mass="0.2" contype="0" conaffinity="0"/>
    </body>
    <body name="held_rod" pos="0 0.3 1">
      <joint name="held" type="hinge" axis="0 1 0" ref="0.4"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.3" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality>
{equalities}
  </equality>
</mujoco>"""
XML = RODS.format(equalities=EQUALITIES)
Q0 = np.array([0.6, C0 + C1 * 0.6, HOLD + 0.05])  # from qpos0: on the coupling, 0.05 rad off the hold
STEPS, DT = 2000, 0.001


@pytest.fixture(scope="module")
def model() -> js.Model:
    return js.load_model(XML)


@pytest.fixture(scope="module")
def runs(model, sim) -> tuple[np.ndarray, np.ndarray]:
    """The joint positions from ``qpos0`` ``(T, 3)`` after each step: here, and MuJoCo's."""
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler")
    _, states, _ = sim(model, js.State.build(model).replace(joint_positions=Q0), params, steps=STEPS)
    m = mujoco.MjModel.from_xml_string(XML)
    data = mujoco.MjData(m)
    data.qpos[:] = m.qpos0 + Q0
    reference = np.zeros((STEPS, 3))
    for k in range(STEPS):
        mujoco.mj_step(m, data)
        reference[k] = data.qpos - m.qpos0
    return np.asarray(states.joint_positions), reference


def test_a_joint_equality_is_a_coupling_with_mujocos_offset_and_solref(model):
    """``q = qpos - qpos0``, so MuJoCo's polynomial around ``qpos0`` is the coupling
    ``q_a = c1 q_b + c0``; the hold's solref (0.05, 0.7) is the reference of time constant
    0.05 * 0.7 s and ratio 0.7 (see ``parsers.mjcf._reference``), which the parameters take."""
    couplings = model.couplings
    assert model.joint_names == ("leader", "follower", "held")
    assert couplings.follower == (1, 2) and couplings.leader == (0, NO_LEADER)
    np.testing.assert_array_equal(couplings.multiplier, [C1, 0.0])
    np.testing.assert_array_equal(couplings.offset, [C0, HOLD])
    np.testing.assert_allclose(couplings.time_constant, [0.02, 0.035], rtol=1e-15)
    np.testing.assert_array_equal(couplings.damping_ratio, [1.0, 0.7])
    params = js.SimulationParams.build(model)
    np.testing.assert_array_equal(params.coupling_time_constant, couplings.time_constant)
    np.testing.assert_array_equal(js.SimulationParams.build(model, coupling_time_constant=0.01).coupling_time_constant, [0.01, 0.01])


def test_load_world_carries_the_couplings(model):
    world = js.load_world(XML)
    (description,) = world.models
    mimic = {joint.name: joint.mimic for joint in description.joints if joint.mimic is not None}
    assert mimic["follower"].joint == "leader" and mimic["held"].joint == ""
    built = build_model(description)
    assert (built.couplings.follower, built.couplings.leader) == (model.couplings.follower, model.couplings.leader)
    np.testing.assert_array_equal(built.couplings.offset, model.couplings.offset)


def test_the_rule_is_as_soft_as_mujocos_and_the_leader_moves_as_in_mujoco(runs, figures):
    """The coupling has MuJoCo's impedance (the default solimp, 0.9 to 0.95) and compliance, so
    its rule gives under gravity's load as MuJoCo's does. Measured: rule error 1.46e-3 rad at
    most here, 1.32e-3 rad in MuJoCo, the two within 1.2e-4 rad RMS; the leader within 2.0e-5 rad
    RMS of MuJoCo's over 2 s of a 1.7 rad swing (held at an impedance of one, as before the
    solimp was read: rule error 5e-16 rad, leader 1.9e-4 rad RMS)."""
    q, reference = runs
    assert np.ptp(q[:, 0]) > 1.0
    rule, mujoco_rule = q[:, 1] - C1 * q[:, 0] - C0, reference[:, 1] - C1 * reference[:, 0] - C0
    figures("MJCF joint equality: max |rule error| [rad]", float(np.abs(rule).max()))
    figures("MJCF joint equality: MuJoCo's max |rule error| [rad]", float(np.abs(mujoco_rule).max()))
    rule_rms = figures("MJCF joint equality: rule error RMS vs MuJoCo's [rad]", float(np.sqrt(np.mean((rule - mujoco_rule) ** 2))))
    rms = figures("MJCF joint equality: leader RMS vs MuJoCo [rad]", float(np.sqrt(np.mean((q[:, 0] - reference[:, 0]) ** 2))))
    assert np.abs(rule).max() > 1e-3 and np.abs(mujoco_rule).max() < 2e-3
    assert rule_rms < 2e-4
    assert rms < 1e-4


def test_a_welded_leader_holds_its_joint_at_qpos0_plus_c0_as_in_mujoco(runs, figures):
    """From 0.05 rad off, the held joint returns to ``qpos0 + c0`` (within 8.4e-6 rad after 1 s:
    its solimp of nearly one leaves a compliance under gravity's load) along MuJoCo's path
    (1.3e-4 rad RMS; with the time constant 0.05 s taken as is instead of 0.05 * 0.7 s, 2.5e-3
    rad: the mapping of the solref matters)."""
    q, reference = runs
    held = figures("MJCF welded equality: max |q - c0| after 1 s [rad]", float(np.abs(q[STEPS // 2 :, 2] - HOLD).max()))
    rms = figures("MJCF welded equality: RMS vs MuJoCo [rad]", float(np.sqrt(np.mean((q[:, 2] - reference[:, 2]) ** 2))))
    assert held < 1e-4 and np.abs(reference[STEPS // 2 :, 2] - HOLD).max() < 1e-4
    assert rms < 5e-4


@pytest.mark.parametrize(
    ("equality", "match"),
    [
        (
            '<joint name="curve" joint1="follower" joint2="leader" polycoef="0 1 0.5 0 0"/>',
            r"rods\.xml:19: <joint name=\"curve\">: joint equality 'curve' with a nonlinear polycoef \(0 1 0\.5 0 0\) is not supported yet",
        ),
        (
            '<joint joint1="held" joint2="leader"/><joint name="again" joint1="held" joint2="follower"/>',
            r"rods\.xml:19: <joint name=\"again\">: joint 'held' is joint1 of two joint equalities \(#0, 'again'\): not supported yet",
        ),
    ],
    ids=["nonlinear", "two-equalities"],
)
def test_what_couplings_cannot_represent_is_refused_with_its_line(tmp_path: Path, equality: str, match: str):
    path = tmp_path / "rods.xml"
    path.write_text(RODS.format(equalities="    " + equality))
    with pytest.raises(js.ModelLoadError, match=match):
        js.load_model(path)


def test_an_inactive_equality_is_skipped_with_a_located_warning(tmp_path: Path):
    path = tmp_path / "rods.xml"
    path.write_text(RODS.format(equalities='    <joint name="off" joint1="follower" joint2="leader" active="false"/>'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = js.load_model(path)
    assert model.couplings.rows == 0
    assert [str(w.message) for w in caught if issubclass(w.category, js.ModelLoadWarning)] == [
        f"{path}:19: <joint name=\"off\">: equality 'off' is inactive (active=\"false\"): skipped"
    ]


def test_a_direct_solref_and_a_joint_equality_across_trees():
    """``solref="-k -b"`` (stiffness 400, damping 30): time constant 1/sqrt(400) = 0.05 s, ratio
    30 * 0.05 / 2 = 0.75. A joint of a free body's tree coupled to one of the world's: refused; a weld
    between them: a closure of the world."""
    direct = js.parsers.parse_mjcf(RODS.format(equalities='<joint joint1="follower" joint2="leader" solref="-400 -30"/>'))
    mimic = next(joint.mimic for joint in direct.joints if joint.name == "follower")
    assert (mimic.joint, mimic.time_constant, mimic.damping_ratio) == ("leader", 0.05, 0.75)
    across = RODS.replace("<worldbody>", '<worldbody><body name="box" pos="1 0 1"><freejoint/><geom size="0.1"/>'
                          '<body name="lid"><joint name="lid" type="hinge"/><geom size="0.05"/></body></body>')
    with pytest.raises(js.ModelLoadError, match=r"<joint name=\"cross\">: joint equality 'cross' between joints of two trees is not supported yet"):
        js.load_world(across.format(equalities='<joint name="cross" joint1="lid" joint2="leader"/>'))
    (grip,) = js.load_world(across.format(equalities='<weld name="grip" body1="lid" body2="leader_rod"/>')).closures
    assert (grip.link1, grip.model1, grip.link2) == ("lid", "box", "leader_rod")
