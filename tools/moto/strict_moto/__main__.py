"""python -m strict_moto: starts the launcher (see the package's docstring)."""
from strict_moto.cli import main

main()
