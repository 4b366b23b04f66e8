"""Process setup for kvgate's own test suite (the gates' pytest runs do not load it)."""

import signal

# A suite started in the background without job control (`nohup make test &`, `( … & )`) inherits
# SIGINT ignored, and Python keeps it so: the Ctrl-C tests, which deliver SIGINT to kvgate in this
# process and to its CLI in child processes, would fail for the way they were launched. Python's
# own handler comes back here; a child exec'd from this process starts with SIGINT's default again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
