"""Link and frame Jacobians and bias accelerations ``J_dot nu`` against Pinocchio: the links'
in every representation, the frames' in the mixed one (``FULL``: the same conversions as the links').

Ours in representation r maps ``nu`` (base part in r) to the velocity in r: Pinocchio's
``getFrameJacobian`` (LOCAL, WORLD, LOCAL_WORLD_ALIGNED) times ``G_r``. ``J_dot nu`` is the
acceleration at zero ``nu_dot`` in r: Pinocchio's spatial acceleration for body and inertial,
its classical acceleration in LOCAL_WORLD_ALIGNED for mixed, at the matching base acceleration.
"""

from __future__ import annotations

import pytest

from .conftest import FULL


def test_link_jacobians(lab, case, rep):
    lab.results(case).check(rep, "link_jacobians")


def test_link_bias_accelerations(lab, case, rep):
    lab.results(case).check(rep, "link_bias_accelerations")


def test_frame_jacobians_and_bias_accelerations(lab, case):
    results = lab.results(case)
    if not results.twin.frame_names:
        pytest.skip(f"{case} has no frames (no fixed joints)")
    results.check(FULL, "frame_jacobians")
    results.check(FULL, "frame_bias_accelerations")
