"""Forward kinematics, link velocities, centre of mass, centroidal momentum and energies
against Pinocchio, for every case, in the mixed representation (``FULL``; the conversions of the
other representations are checked on the quantities of ``CONVERTED``), and the conversion of the
base velocity between every pair of representations."""

from __future__ import annotations

from jaxsim_like import dynamics as D

from .conftest import FULL, assert_close, from_body


def test_link_poses(lab, case):
    lab.results(case).check(FULL, "link_poses")


def test_frame_poses(lab, case):
    """Lumped links (fixed joints) stay addressable as frames, with Pinocchio's poses."""
    results = lab.results(case)
    names = results.twin.frame_names
    assert set(names) == set(results.model.frame_names), "every frame of a URDF model is a link in Pinocchio's"
    order = [results.model.frame_index(name) for name in names]
    for k, (ours, ref) in enumerate(zip(results.ours, results.reference)):
        if names:
            assert_close(ours[FULL]["frame_poses"][order], ref[FULL]["frame_poses"], "frame_poses", where=f"{case} sample {k}")


def test_link_velocities(lab, case):
    results = lab.results(case)
    results.require_extended()
    results.check(FULL, "link_velocities")


def test_with_velocity_representation(lab, case, rep):
    """Converting the base velocity between representations matches the numpy conversion."""
    results = lab.results(case)
    for sample, states in zip(results.samples, results.states):
        converted = D.with_velocity_representation(results.model, states["body"], rep)
        assert converted.velocity_representation == rep
        expected = from_body(rep, sample.base_pose) @ sample.velocity
        assert_close(converted.base_velocity, expected, f"with_velocity_representation [{rep}]", where=str(case))
        back = D.with_velocity_representation(results.model, converted, "body")
        assert_close(back.base_velocity, sample.velocity, "with_velocity_representation round trip", where=str(case))


def test_center_of_mass(lab, case):
    lab.results(case).check(FULL, "com_position")


def test_center_of_mass_velocity_jacobian_and_bias(lab, case):
    results = lab.results(case)
    results.require_extended()
    for quantity in ("com_velocity", "com_jacobian", "com_bias_acceleration"):
        results.check(FULL, quantity)


def test_centroidal_momentum(lab, case):
    results = lab.results(case)
    results.check(FULL, "centroidal_momentum")
    results.check(FULL, "centroidal_momentum_matrix")


def test_kinetic_energy(lab, case):
    results = lab.results(case)
    results.check(FULL, "kinetic_energy")
    assert all(ours[FULL]["kinetic_energy"] >= 0 for ours in results.ours)


def test_potential_energy(lab, case):
    results = lab.results(case)
    results.require_extended()
    results.check(FULL, "potential_energy")
