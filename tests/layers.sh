#!/usr/bin/env bash
# The C++ layers depend one way (src/CMakeLists.txt): a file may include
# headers of its own layer and of the layers below it, never above. Prints
# every include that breaks the order and exits 1 if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed=(
  [core]="core"
  [grid]="core grid"
  [backends]="core grid backends"
  [strategies]="core grid backends strategies"
  [halo]="core grid backends strategies halo"
  [p2p]="core backends p2p"
  [apps]="core halo p2p"
)
bad=0
for layer in "${!allowed[@]}"; do
  dir=src/$layer
  [ "$layer" = apps ] && dir=apps
  while IFS=: read -r file line text; do
    target=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$text")
    if [[ " ${allowed[$layer]} " != *" $target "* ]]; then
      echo "$file:$line: $layer includes $target: $text"
      bad=1
    fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$dir" || true)
done
exit $bad
