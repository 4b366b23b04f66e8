"""The base every stage stands on: errors, safe files and YAML, redaction, units, the pure verdict.

    errors.py       every exception kvgate raises, in one tree
    safefile.py     writing in a run directory without following what someone left there
    safe_yaml.py    YAML for files people edit by hand
    config_file.py  a user's YAML file into a pydantic model; every error names file, field, expectation
    redact.py       secrets never reach a run directory
    criteria.py     a criterion and a measurement → a verdict, pure (the condition text shown everywhere)
    units.py        byte units, one home
    crash.py        a bug in kvgate: a short message, the traceback in a file

Nothing here imports another kvgate package.
"""
