#!/usr/bin/env bash
# Install hashed lock files into the active virtual environment with uv, then lshsim itself
# (editable, no dependencies). The test command of README.md runs it after installing uv from
# requirements/lock-uv.txt with pip:
#
#   requirements/install.sh requirements/lock.txt requirements/lock-ffht.txt
#
# Every lock is installed with --require-hashes. requirements/lock-ffht.txt is installed after
# the others, without build isolation and without dependencies (ffht-unofficial's build imports
# numpy and pybind11 without declaring them). uv does not read pip's configuration: where pip is
# configured with --find-links (this project's machines keep torch's CPU wheel there), the same
# folders are passed to uv, so both installers find the same wheels.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ]; then
  echo "install.sh: activate a virtual environment first (python3 -m venv .venv && . .venv/bin/activate)" >&2
  exit 2
fi
if [ "$#" -eq 0 ]; then
  echo "install.sh: name the lock files to install (e.g. requirements/lock.txt)" >&2
  exit 2
fi
links=()
for folder in $(pip config get global.find-links 2>/dev/null || true); do
  [ -d "$folder" ] && links+=(--find-links "$folder")
done
for lock in "$@"; do
  if [ ! -f "$lock" ]; then
    echo "install.sh: no lock file $lock" >&2
    exit 2
  fi
  case "$(basename "$lock")" in
    lock-ffht.txt) uv pip install --require-hashes --no-deps --no-build-isolation -r "$lock" ;;
    *) uv pip install --require-hashes "${links[@]}" -r "$lock" ;;
  esac
done
uv pip install --no-deps --no-build-isolation -e .
