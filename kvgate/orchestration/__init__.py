"""Orchestration: each gate's plan and measurement, run as a pytest session.

g1/ g2/ g3/ g4/ preflight/  per gate: plan (what is checked, from the run's GateConfig),
                   fixtures (what is measured, when), the measurement modules, and
                   report_rows (the numbers its report tables are laid out from:
                   kvgate.report.gate_tables)
verdict_rows.py    a verdict as G3 and G4 keep it for their report's verdict tables
gate_plans.py      each gate's plan modules, by name (rejudge and the plugin plan from them); what
                   preflight records of G3's plan: the references this inventory lets G3 judge
g4_reach.py        what preflight finds of G4: its plan's rulings and each host's health counters
deployments.py     every engine deployment measured: hosts at once, in turn on a host
plan/              the tiering planner (``kvgate plan``): what G3 should measure, from G2
session.py         one gate run's state inside pytest
pytest_plugin.py   the plugin: inventory, run store, per-(host, check) parametrization
gatefixtures.py    fixtures gates share: GateRun (config, executors, store), deployments, G1 facts
gate_pytest.ini    the pytest configuration a gate runs with
capture.py         ``kvgate inventory capture HOST``: a known-good host's facts as expectations
"""
