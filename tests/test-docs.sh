#!/bin/bash
# test-docs.sh -- make check's part of make check-docs: every `sh run`
# block of README.md and docs/*.md runs in a scratch directory, and
# docs/ARCHITECTURE.md names every source file under server/
# (tools/check-docs; the conventions are in docs/README.md).
cd "$(dirname "$0")/.." || exit 1
exec tools/check-docs
