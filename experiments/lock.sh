#!/usr/bin/env bash
# Regenerate the hashed lock files from pyproject.toml's extras, for CPython 3.11 on Linux x86_64
# (uv pip compile --generate-hashes; pyproject.toml keeps its ranges for library users):
#
#   requirements/lock.txt       the README's test command: the core dependencies, the extras test,
#                               jax, hf, bench, sweep, launch and docs, the build tools of the
#                               --no-build-isolation installs (setuptools, wheel, pybind11) and
#                               torch 2.13.0+cpu (the CPU wheel: PyPI's Linux torch is a CUDA build)
#   requirements/lock-ffht.txt  ffht-unofficial alone: its build imports numpy and pybind11 without
#                               declaring them, so it is built after lock.txt, --no-build-isolation
#   requirements/lock-run.txt   the README's first command: the core dependencies, the extras jax,
#                               sweep (lshsim sweep: dask, pyarrow) and hf (torch 2.13.0+cpu and
#                               transformers: lshsim reproduce trains and probes a tiny Mixtral;
#                               lshsim probe --hf), setuptools and wheel, at lock.txt's versions
#   requirements/lock-uv.txt    uv (requirements/uv.in), the test command's installer
#
# An existing lock's pins are kept where they still resolve (uv prefers the output file's pins):
# adding an extra adds its packages without moving the others.
#
# Usage: experiments/lock.sh   (uv from PATH or $UV; $TORCH_WHEELS: a folder holding the wheel
# torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl, default /opt/wheels, where this
# project's machines keep it; elsewhere: pip download torch==2.13.0+cpu --no-deps
# --index-url https://download.pytorch.org/whl/cpu -d DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-uv}
TORCH=2.13.0+cpu
TORCH_WHEELS=${TORCH_WHEELS:-/opt/wheels}
if ! ls "$TORCH_WHEELS"/torch-"$TORCH"-cp311-*.whl >/dev/null 2>&1; then
  echo "lock.sh: no torch-$TORCH wheel for cp311 in $TORCH_WHEELS (set TORCH_WHEELS)" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--generate-hashes --python-version 3.11 --python-platform x86_64-unknown-linux-gnu
        --custom-compile-command "experiments/lock.sh" --quiet)
extras=(--extra test --extra jax --extra hf --extra bench --extra sweep --extra launch --extra docs)
test_lock() {  # the test command's environment; extra arguments go to uv
  "$UV" pip compile pyproject.toml requirements/build.in "${extras[@]}" "${common[@]}" \
    --find-links "$TORCH_WHEELS" --constraint requirements/torch-cpu.txt "$@"
}
pins() { sed -n 's/^\([A-Za-z0-9][A-Za-z0-9._-]*==[^ ;]*\).*/\1/p' "$1"; }

cp requirements/lock.txt "$tmp/full.txt"  # the current pins as preferences
test_lock -o "$tmp/full.txt"
ffht=$(pins "$tmp/full.txt" | grep '^ffht-unofficial==')
test_lock --no-emit-package ffht-unofficial -o requirements/lock.txt
# one resolution: lock.txt is the full lock less ffht-unofficial
diff <(pins "$tmp/full.txt" | grep -v '^ffht-unofficial==') <(pins requirements/lock.txt)
printf '%s\n' "$ffht" | "$UV" pip compile - --no-deps "${common[@]}" -o requirements/lock-ffht.txt
# the first command's environment, at the versions of lock.txt
"$UV" pip compile pyproject.toml requirements/run.in --extra jax --extra sweep --extra hf \
  "${common[@]}" --find-links "$TORCH_WHEELS" --constraint requirements/torch-cpu.txt \
  --constraint requirements/lock.txt -o requirements/lock-run.txt
# uv itself, which the test command installs with pip before installing the locks with it
"$UV" pip compile requirements/uv.in "${common[@]}" -o requirements/lock-uv.txt
for f in requirements/lock.txt requirements/lock-ffht.txt requirements/lock-run.txt requirements/lock-uv.txt; do
  echo "$f: $(pins "$f" | wc -l) pins, sha256 $(sha256sum "$f" | cut -c1-16)"
done
