#!/usr/bin/env bash
# minilm autograder: build the image (Gradescope runs this once, as root, from $AUTOGRADER_ROOT/source).
#   1. Python 3.10+ with pip, readable by every user (the graded children run unprivileged);
#   2. the kit's dependencies (requirements.txt, from the kit's setup.cfg);
#   3. the kit itself stays in source/kit with its reference solutions: it is NOT pip-installed, since a
#      copy in site-packages would be readable by the student's code; autograder.py puts it on the path;
#   4. byte-compile the kit and smoke-test it: import it and grade nothing.
# Environment: PYTHON (default python3), PIP_ARGS (extra pip options, e.g. --no-index --find-links DIR).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"

if ! command -v "$PY" >/dev/null 2>&1 || ! "$PY" -c 'import sys; assert sys.version_info >= (3, 10)' 2>/dev/null; then
    if command -v apt-get >/dev/null 2>&1; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 python3-pip python3-venv
        PY=python3
    else
        echo "setup.sh: need Python >= 3.10 ($PY not found or too old)" >&2; exit 1
    fi
fi
"$PY" -m pip --version >/dev/null 2>&1 || "$PY" -m ensurepip --upgrade
# Ubuntu 23.04+ marks the system Python as externally managed: Gradescope's image is disposable.
PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install -q ${PIP_ARGS:-} -r "$HERE/requirements.txt"

if ! out="$("$PY" -m compileall -q "$HERE/kit" 2>&1)"; then
    echo "setup.sh: the kit does not compile:" >&2; echo "$out" >&2; exit 1
fi
chmod +x "$HERE/run_autograder"
cd "$HERE/kit"
"$PY" -c 'import numpy, numba, pytest, minilm.grading, solutions; print("minilm autograder: the kit imports")'
mkdir -p "$ROOT/results"
echo "minilm autograder: setup done ($("$PY" --version), kit at $HERE/kit)"
