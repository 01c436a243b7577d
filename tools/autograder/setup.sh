#!/usr/bin/env bash
# minilm autograder: build the image (Gradescope runs this once, as root, from $AUTOGRADER_ROOT/source).
#   1. Python 3.10+ with pip, readable by every user (the graded children run unprivileged): the image's
#      python3, with pip from apt-get when it has none (Debian and Ubuntu disable ensurepip);
#   2. the kit's dependencies (requirements.txt, from the kit's setup.cfg);
#   3. the kit itself stays in source/kit with its reference solutions: it is NOT pip-installed, since a
#      copy in site-packages would be readable by the student's code; autograder.py puts it on the path;
#   4. byte-compile the kit, then grade the reference itself through the whole pipeline
#      (autograder.py --calibrate): it must score full points; each test's CPU time on this machine
#      becomes the base of its time limit, and numba's compiled kernels are cached into the image.
# Environment: PYTHON (default python3), PIP_ARGS (extra pip options, e.g. --no-index --find-links DIR).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"
export DEBIAN_FRONTEND=noninteractive

apt_install() {  # apt_install PACKAGE...: only where apt-get exists
    command -v apt-get >/dev/null 2>&1 || return 1
    apt-get update -q && apt-get install -y -q --no-install-recommends "$@"
}

if ! command -v "$PY" >/dev/null 2>&1 || ! "$PY" -c 'import sys; assert sys.version_info >= (3, 10)' 2>/dev/null; then
    apt_install python3 python3-pip || { echo "setup.sh: need Python >= 3.10 ($PY not found or too old)" >&2; exit 1; }
    PY=python3
fi
if ! "$PY" -m pip --version >/dev/null 2>&1; then
    # Debian and Ubuntu ship python3 without pip and disable ensurepip: the distribution's package is the way
    apt_install python3-pip || true
    "$PY" -m pip --version >/dev/null 2>&1 || "$PY" -m ensurepip --upgrade || {
        echo "setup.sh: $PY has no pip, and neither apt-get install python3-pip nor ensurepip gave it one" >&2; exit 1; }
fi
PY="$(command -v "$PY")"
# Ubuntu 23.04+ marks the system Python as externally managed: Gradescope's image is disposable.
PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install -q ${PIP_ARGS:-} -r "$HERE/requirements.txt"
echo "$PY" > "$HERE/PYTHON"  # run_autograder uses the interpreter the dependencies went into

if ! out="$("$PY" -m compileall -q "$HERE/kit" 2>&1)"; then
    echo "setup.sh: the kit does not compile:" >&2; echo "$out" >&2; exit 1
fi
chmod +x "$HERE/run_autograder"
(cd "$HERE/kit" && "$PY" -c 'import numpy, numba, pytest, minilm.grading, solutions; print("minilm autograder: the kit imports")')
mkdir -p "$ROOT/results"
AUTOGRADER_ROOT="$ROOT" "$PY" -I "$HERE/autograder.py" --calibrate
echo "minilm autograder: setup done ($("$PY" --version), kit at $HERE/kit)"
