"""``python -m diffphys ARGS`` runs the ``diffphys`` command-line program (diffphys._cli)."""

from ._cli import main

main()
