"""The engines a gate started, as an appendix: each one's command line, version and timings.

G3 and G4 record every engine they start (run.json's ``engines``: host/deployment → arm or
soak instance → launch); both reports end with this table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kvgate.record import EngineLaunch, Section
from kvgate.report.tables import Cells, table

Engines = Mapping[str, Mapping[str, EngineLaunch]]  # run.json's engines: host/deployment → arm → launch

ENGINE_COLUMNS = [
    "host/engine",
    "arm",
    "profile",
    "version",
    "command line",
    "ready s",
    "weights load s",
    "concurrency",
    "listening on (TCP)",
]
ENGINES_NOTE = (
    "Each engine as it was started, paths shortened to their file (…/name). Listening on: the TCP ports "
    "the engine's processes listened on once ready (0.0.0.0 and [::] are every interface; not read for an "
    "engine in a container)."
)


def engine_cells(where: str, engines: Mapping[str, EngineLaunch]) -> Cells:
    """Version, full command line and restart-to-ready of each engine the arms ran on."""
    rows = []
    for arm, rec in sorted(engines.items()):
        conc = "concurrent" if rec.serves_concurrently else "1 request at a time"
        weights = "not logged" if rec.weights_load_s is None else f"{rec.weights_load_s:.2f}"
        argv, ready = " ".join(short_paths(a) for a in rec.argv), f"{rec.ready_s:.2f}"
        rows.append([where, arm, rec.profile, rec.version, argv, ready, weights, conc, listening_cell(rec)])
    return rows


def listening_cell(rec: EngineLaunch) -> str:
    """The engine's open TCP ports, those open to every interface named so."""
    if rec.listening is None:
        return "not read"
    wide = [p for p in rec.listening if p.startswith(("0.0.0.0:", "[::]:"))]
    shown = ", ".join(rec.listening) or "none"
    return f"{shown}; open to every interface: {', '.join(wide)}" if wide else shown


ABSOLUTE_PATH = re.compile(r"(?<![\w.])/(?:[^\s/=:,]+/)+([^\s/=:,]+)")


def short_paths(word: str) -> str:
    """'--model=/var/tmp/kvgate-models/tiny.gguf' → '--model=…/tiny.gguf': the file, not this host's tree."""
    return ABSOLUTE_PATH.sub(lambda m: f"…/{m.group(1)}", word)


LAUNCH = (0, 1, 2, 3, 5, 6, 7)  # engine_cells' columns in the first table; the second: who, argv, ports
COMMAND = (0, 1, 4, 8)


def engine_tables(gate: str, rows: Cells, note: str = "") -> list[Section]:
    """'Appendix: G3 engines' and 'Appendix: G3 engine command lines' from every deployment's engine
    cells: the command line and its ports get the page's width (in one nine-column table they were
    squeezed to a dozen lines each)."""
    said = f"{ENGINES_NOTE} {note}" if note else ENGINES_NOTE

    def pick(cols: tuple[int, ...]) -> tuple[list[str], Cells]:
        return [ENGINE_COLUMNS[i] for i in cols], [[r[i] for i in cols] for r in rows]

    return [
        table(f"Appendix: {gate} engines", *pick(LAUNCH), ""),
        table(f"Appendix: {gate} engine command lines", *pick(COMMAND), said),
    ]
