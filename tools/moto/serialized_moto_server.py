#!/usr/bin/env python3
"""Starts the launcher, the strict_moto package beside this file (see its docstring), as `python -m strict_moto`
does: the path compose, ./run.sh and the tests start, so that they need not set a working directory."""
from strict_moto.cli import main

if __name__ == "__main__":
    main()
