"""Orchestration: each gate's plan and measurement, run as a pytest session.

g1.py, g2/, g3/, g4/, preflight/   per gate: plan (what is checked), fixtures (what is
                                   measured, when), report_rows (the numbers its report
                                   tables are laid out from: kvgate.report.gate_tables)
verdict_rows.py    a verdict as G3 and G4 keep it for their report's verdict tables
gate_plans.py      each gate's plan modules, by name (rejudge and the plugin plan from them)
deployments.py     every engine deployment of an inventory measured: hosts at once, in turn on a host
plan/              the tiering planner (``kvgate plan``): what G3 should measure, from G2
session.py         one gate run's state inside pytest
pytest_plugin.py   the plugin: inventory, run store, per-(host, check) parametrization
gatefixtures.py    fixtures gates share: executors, GateRun, deployments, G1 facts
gate_pytest.ini    the pytest configuration a gate runs with
capture.py         ``kvgate inventory capture HOST``: a known-good host's facts as expectations
"""
