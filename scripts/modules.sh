#!/usr/bin/env bash
# Prints the directories of the repository's Go modules, one a line, the
# root first: the `use` list of go.work, which is where they are named once.
#
#   bash scripts/modules.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sed -n 's#^[[:space:]]*\(\.[^[:space:])]*\)[[:space:]]*$#\1#p' go.work | sed 's#^\./##'
