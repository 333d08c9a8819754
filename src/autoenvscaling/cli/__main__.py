"""``python -m autoenvscaling.cli``: the ``autoenv`` command."""

from autoenvscaling.cli.app import main

main()
