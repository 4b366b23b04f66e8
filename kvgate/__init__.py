"""kvgate: gated acceptance tests for SSD-tiered KV-cache storage in LLM inference.

One folder per stage of the pipeline, lowest first; a module imports only its own stage and the
ones before it (tests/unit/test_import_layers.py):

    base/            errors, safe files and YAML, redaction, units, criterion × measurement → verdict
    configuration/   GateConfig: the inventory and every file it names, loaded and cross-validated once
    judgement/       Check (bound to its reference at plan time), the gate-verdict rule, catalogues
    record/          RunStore and the typed run record (run.json, checks.jsonl), manifest, gate order
    transport/       executors (local, SSH over paramiko) on their own route type; fan-out over hosts
    probes/          what measures a host: G1 facts, fio, the agent, the cold proof, engines, loadgen
    orchestration/   each gate's plan and measurement, run as a pytest session; preflight, the planner
    report/          HTML, PDF, JUnit, charts and run history, rendered from a stored run only
    cli/             the ``kvgate`` command and the commands that compose the stages (rejudge)

Each package is entered through its ``__init__``: ``__all__`` is what it offers, its docstring
maps what is inside. docs/architecture.md has a paragraph per folder.
"""

__version__ = "0.1.0"
