"""Configuration: the inventory and every file it names, loaded and cross-validated once (gateconfig).

    gateconfig.py         GateConfig: the inventory, profiles, references and gate profiles of a run
    inventory/            the lab as the site engineer writes it: schema and loader
    bounds.py             upper bounds of every quantity a file states (a typo is refused on load)
    engine_profile.py     how to launch, probe, reset and scrape a serving engine, as data
    engine_templates.py   the placeholders of engine profiles, rendered without injection
    engine_series.py      Prometheus series names, so profiles validate their metrics
    fio_job.py            a typed fio job, rendered to a jobfile only at the edge
    fio_matrix.py         G2's baseline matrix: a workload profile → fio jobs
    model_profiles.py     model profiles of the storage-level workloads
    gate_profiles/        G3's and G4's gate profiles (``workloads/<gate>/<scale>.yaml``)
    references.py         the seed's figures (R1–R9): load them, judge a site against them
    reference_schema.py   the schema of gates/references.yaml
    waivers.py            a named approver accepts a FAIL or INVALID check, with a reason

Pure data: nothing here runs a command or opens a connection.
"""
