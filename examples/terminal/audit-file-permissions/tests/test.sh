#!/bin/bash
# Runs the hidden tests and writes the reward (1 = all passed, 0 = otherwise).
# These tests run in the agent's container (a shared verifier: they grade modes, owners and a link under
# /srv/data, which artifacts cannot carry), so they do not load what an agent could leave on the way: the
# interpreter is named by its path (no wrapper early on PATH), -I -S skip PYTHON* variables, the user site
# and every site hook (sitecustomize.py, usercustomize.py, .pth files), pytest comes from the distribution's
# dir only, without plugins found by entry point, without conftest.py files and without a rootdir config.
# An agent running as root can still rewrite /usr/bin/python3 or pytest itself: see docs/quality-probes.md.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p /logs/verifier
if PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 /usr/bin/python3 -I -S -c '
import sys
sys.path.append("/usr/lib/python3/dist-packages")
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--noconftest", "-c", "/dev/null", "--rootdir", "/tests",
                      "/tests/test_outputs.py"]))
'; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
