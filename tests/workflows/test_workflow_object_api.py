"""The ScenarIO client of examples/object_api.py in its --quick form: the documented idioms
(``assert not`` on failures, ``set_physics_engine`` before the time flows, tuples) hold."""

from __future__ import annotations


def test_scenario_client_example(example, workflow_figures):
    figures = example("object_api").run(quick=True, verbose=False)
    for name, value in figures.items():
        workflow_figures(f"object-API client: {name}", value)
    assert figures["time_s"] == 1.0  # 2 x 50 runs of 10 steps of 1 ms, none before set_physics_engine
    assert figures["feet_in_contact"] == 4 and 0.35 < figures["standing_height_m"] < 0.45
    assert figures["pushed_m"] > 0.05
