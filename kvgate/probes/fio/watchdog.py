"""The host-side watchdog around fio, and the evidence it leaves when it fires.

fio can overrun its runtime or hang in uninterruptible I/O (D state) on a sick
device (fio #1414, #1004, #2041). The executor's ``timeout --kill-after`` bounds
the command, but kills blindly; this small POSIX-sh wrapper runs fio, writes its
pid file, and at the deadline first records ``/proc/<pid>/stat`` of fio and all
its descendants (fio's job processes call setsid, so a process-group kill would
miss them and their ``exec_prerun`` children; the state field shows D
for a hung device, T for a stopped one), then sends TERM, records again, sends
KILL and records the survivors. The Python side turns that record into the
INVALID reason.
"""

from __future__ import annotations

from dataclasses import dataclass

EVIDENCE_FILE = "watchdog.txt"  # in the run directory, next to fio.pid; the wrapper exits 124 when it fired
STDOUT_FILE, STDERR_FILE = "fio.stdout", "fio.stderr"

# usage: sh watchdog.sh DEADLINE_S GRACE_S RUN_DIR fio ARGS...
SCRIPT = r"""#!/bin/sh
# kvgate fio watchdog (rendered by kvgate/probes/fio/watchdog.py; do not edit)
deadline=$1 grace=$2 dir=$3
shift 3
# to files, not to our pipes: a survivor in D state cannot keep the executor waiting
"$@" >"$dir/fio.stdout" 2>"$dir/fio.stderr" &
pid=$!
echo "$pid" >"$dir/fio.pid"
t0=$(date +%s%N)
elapsed_ms() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
stat_of() { { read -r line <"/proc/$1/stat"; } 2>/dev/null && echo "$line"; }
alive() {
    line=$(stat_of "$1") || return 1
    rest=${line##*) }
    [ "${rest%% *}" != Z ]
}
tree() {  # $1 and its descendants (fio jobs call setsid: a process group would miss them)
    pids=" $1 " changed=1
    while [ "$changed" = 1 ]; do
        changed=0
        for f in /proc/[0-9]*/stat; do
            { read -r line <"$f"; } 2>/dev/null || continue
            p=${line%% *} rest=${line##*) }
            set -- $rest
            case "$pids" in *" $p "*) continue ;; esac
            case "$pids" in *" $2 "*) pids="$pids$p " changed=1 ;; esac
        done
    done
    echo $pids
}
snapshot() {
    phase=$1 ms=$(elapsed_ms)
    shift
    for p in "$@"; do line=$(stat_of "$p") && echo "$phase $ms $line" >>"$dir/watchdog.txt"; done
    echo "$phase $ms end" >>"$dir/watchdog.txt"
}
any_alive() { for p in "$@"; do alive "$p" && return 0; done; return 1; }
wait_gone() {
    n=0 limit=$(( $1 * 10 ))
    shift
    while any_alive "$@" && [ "$n" -lt "$limit" ]; do sleep 0.1; n=$((n + 1)); done
}
limit=$(( deadline * 1000 ))
while alive "$pid"; do
    if [ "$(elapsed_ms)" -ge "$limit" ]; then
        procs=$(tree "$pid")
        snapshot deadline $procs
        kill -TERM $procs 2>/dev/null
        wait_gone "$grace" $procs
        for p in $(tree "$pid"); do case " $procs " in *" $p "*) ;; *) procs="$procs $p" ;; esac; done
        snapshot after-term $procs
        kill -KILL $procs 2>/dev/null
        wait_gone 2 $procs
        snapshot after-kill $procs
        exit 124
    fi
    sleep 0.1
done
wait "$pid"
"""


@dataclass(frozen=True)
class ProcState:
    """One line of /proc/<pid>/stat as the watchdog saw it."""

    phase: str  # deadline | after-term | after-kill
    elapsed_ms: int
    pid: int
    comm: str
    state: str  # R S D T Z … (proc(5))

    @classmethod
    def parse(cls, line: str) -> ProcState:
        phase, ms, stat = line.split(" ", 2)
        pid, _, rest = stat.partition(" (")
        comm, _, tail = rest.rpartition(") ")
        return cls(phase, int(ms), int(pid), comm, tail.split(" ", 1)[0])


@dataclass(frozen=True)
class WatchdogReport:
    """Evidence of a watchdog kill: process states at the deadline, after TERM and after KILL."""

    deadline_s: float
    states: tuple[ProcState, ...]
    fired_after_ms: int
    raw: str = ""  # the evidence file as the wrapper wrote it

    @classmethod
    def parse(cls, text: str, deadline_s: float) -> WatchdogReport:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        states = tuple(ProcState.parse(ln) for ln in lines if not ln.endswith(" end"))
        first = int(lines[0].split(" ", 2)[1]) if lines else 0
        return cls(deadline_s=deadline_s, states=states, fired_after_ms=first, raw=text)

    def at(self, phase: str) -> tuple[ProcState, ...]:
        return tuple(s for s in self.states if s.phase == phase)

    @property
    def d_state(self) -> tuple[ProcState, ...]:
        """Processes in uninterruptible sleep at any phase (a hung device)."""
        return tuple(s for s in self.states if s.state == "D")

    @property
    def survivors(self) -> tuple[ProcState, ...]:
        """Processes still present after KILL (only a D-state process survives KILL)."""
        return tuple(s for s in self.at("after-kill") if s.state != "Z")

    def reason(self) -> str:
        """The INVALID reason, with the evidence spelled out."""
        seen = ", ".join(f"{s.pid} {s.comm} state {s.state}" for s in self.at("deadline")) or "none"
        hung = ", ".join(f"{s.pid} ({s.phase})" for s in self.d_state) or "none"
        left = ", ".join(f"{s.pid} state {s.state}" for s in self.survivors) or "none"
        return (
            f"fio overran its {self.deadline_s:g} s deadline and the watchdog killed it "
            f"(fired after {self.fired_after_ms / 1000:.1f} s); processes at the deadline: {seen}; "
            f"D-state (uninterruptible I/O): {hung}; alive after KILL: {left}"
        )
