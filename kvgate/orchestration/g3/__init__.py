"""G3 main gate: the tiered-cache engine on this storage meets the reference gains (R1, R2, R3, R9).

plan.py         per engine deployment and host: the evidence checks (G3-KV-*) and the reference
                verdicts the gate profile binds; what this engine cannot measure is SKIP or INVALID
fixtures.py     every engine host measured at once, then each check handed its deployment's numbers
measure.py      one deployment on one host: stage the model, run the arms, keep every number
protocol.py     the cold-restore protocol: the tier probe, then recompute, ssd-restore and warm
                trial by trial, in blocks, one engine per GPU group at a time
context.py      one deployment on one host as every arm receives it (DeploymentContext): its Setup,
                profile, evidence sink, and what the run found (model id, tokens per word, device)
arms.py         what one trial measured (Outcome, Window, Trial) and an arm's trials summarised
                (medians, vLLM-style percentiles, CV)
load_arms.py    the arms under load at concurrency 8 and 16, bracketed by hit and device counters
tier_loads.py   a load on fresh tier engines: populate, prove write-through, make cold, measure
capacity.py     the capacity arms: the engine without (dram-only) and with its SSD tier (ssd-tier) on
                sessions over shared documents, per level and on the whole machine (kvgate's own figure)
volumes.py      R2/R3 as the seed measured them: the same SSD tier on the baseline volume and on the
                candidate, single waves of distinct sessions per level, each load proven cold by bytes
cold_read.py    R1's cold read with a serial and a parallel tier reader, one card, TP 1
window.py       one measured load bracketed by every counter G3 trusts; ``restore_reason``
hostio.py       what an engine's log says of a window: prompt tokens restored or reused
                (llama-cpp-python, which has no hit counter)
evidence.py     pure decisions on the evidence: write-through, workload shape, a capacity round
                that compared capacity; None or the reason with its numbers
verdicts.py     the arms' results → one Measurement per check (write-through, cold proof,
                correctness, cache hits, the reference comparisons)
prediction.py   held to the planner: no restore faster than G2 saw the storage deliver; each arm
                predicted from G2's figures beside what it measured
staging.py      whether every LMCache engine of a deployment can stage the restores G3 drives
client.py       where the load generator runs (on the engine host, or the controller) and one
                streamed request per trial
serving.py      TTFT, TPOT and ITL as the client saw them beside the engine's own histograms
storage.py      model loading (R9) and checkpoint (R1): the candidate volume against a baseline
engine_load.py  R9 by the real engine: a cold start from one volume, timed to a ready endpoint
starts.py       R9 without order bias: an untimed warm-up start, then timed starts alternating the
                volumes; each volume's median with every start and their spread
launches.py     every distinct engine launch G3 makes for a deployment; each started once (preflight)
report_rows.py  what G3 keeps in run.json for its report (``g3_rows``): each deployment's numbers
"""

from __future__ import annotations

from kvgate.orchestration.g3.launches import launches, start_each, start_model_load
from kvgate.orchestration.g3.measure import probe_deployment
from kvgate.orchestration.g3.plan import plan
from kvgate.orchestration.g3.storage import evaluate_storage, storage_pairs, storage_plan

__all__ = [
    "evaluate_storage",
    "launches",
    "plan",
    "probe_deployment",
    "start_each",
    "start_model_load",
    "storage_pairs",
    "storage_plan",
]
