"""Probes: what runs on (or against) a host and measures it, over a transport Executor.

    facts/             G1's arrival facts: a collector and a pure parser per tool family
    fio/               fio with safe targets, a watchdog, json+ parsed and aggregated
    agent/             stdlib-only storage workloads shipped to a host as a zipapp
    agentctl.py        ship the agent, run a workload detached, follow it, fetch its result
    evidence/          the cold proof: a volume's devices, their counters, the engines' reads
    hostevidence.py    the evidence module on a host, for the controller
    engines/           serving engines driven from their profiles: start, ready, scrape, stop
    loadgen/           the streaming load generator (vLLM bench serve's metrics)
    workload_results.py  the agent's results as measurements
    scratch.py         the one check before anything is written on a volume
    nfs_server.py      an NFS volume's server cache, dropped or outsized, or the cold read unproven

This package's ``__init__`` imports nothing: the agent's zipapp ships it as it is.
"""
