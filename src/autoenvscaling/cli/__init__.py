"""The ``autoenv`` command: a typer app (``app``) with one module per command group (``*_cmd``).

Commands parse options, build configs, show rich progress and tables, and say where outputs went. They hold no
policy: how a model is tuned or which agent runs lives in ``roles/``; runs themselves in the layers below.
"""
