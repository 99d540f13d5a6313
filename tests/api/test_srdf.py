"""SRDF on the model: groups, group states, end effectors and disabled collision pairs."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like import api

from .helpers import ARM, ARM_SRDF, FREE_BOX, approx

HOME = [0, 0, 0, -1.5, 0, 1.5, 0.8]


def test_semantic_description_of_the_arm(make_world):
    sim, world = make_world((FREE_BOX, None, "box"))
    assert world.insert_model(str(ARM), None, "arm7", srdf=ARM_SRDF)
    arm = world.get_model("arm7")
    assert arm.srdf().name == "arm7" and arm.group_names() == ("arm", "wrist", "gripper")
    assert arm.group_joints("arm") == arm.joint_names() and arm.group_joints("wrist") == ("joint5", "joint6", "joint7")
    assert arm.group_links("gripper") == ("hand",) and arm.group_state_names("arm") == ("home",)
    assert arm.group_state("wrist", "flick") == {"joint5": 0.3, "joint6": 0.5, "joint7": -0.2}
    (hand,) = arm.end_effectors()
    assert (hand.name, hand.parent_link, hand.component_group, hand.parent_group) == ("hand", "link7", "gripper", "arm")
    assert arm.disabled_collision_pairs() == (("link0", "link1"), ("link5", "link7"))
    assert arm.collision_disabled("link1", "link0") and not arm.collision_disabled("link1", "link2")

    assert arm.apply_group_state("arm", "home")
    assert approx(arm.joint_positions(), np.zeros(7), 0)  # a reset: applied by the next run
    sim.run(paused=True)
    assert approx(arm.joint_positions(), HOME, 1e-15)
    assert arm.set_joint_control_mode(api.JointControlMode.position, ["joint5", "joint6", "joint7"])
    assert arm.apply_group_state("wrist", "flick")
    assert approx(arm.joint_position_targets(["joint5", "joint6", "joint7"]), [0.3, 0.5, -0.2], 0)

    with pytest.raises(api.ModelError, match="no SRDF group named 'legs'"):
        arm.group_joints("legs")
    assert not arm.apply_group_state("arm", "away")
    box = world.get_model("box")
    with pytest.raises(api.ModelError, match=r"\[box\] the model has no SRDF"):
        box.group_names()
    with pytest.warns(UserWarning, match="SRDF is for robot 'arm7'"):
        assert not box.load_srdf(ARM_SRDF)
    assert arm.load_srdf(ARM_SRDF.read_text()) and arm.group_names() == ("arm", "wrist", "gripper")
