#!/usr/bin/env bash
# cmake/revision.cmake: the header names the checkout's revision as it is when
# the build runs (a new commit, an edit: -dirty), is rewritten only when that
# changes (so an unchanged tree rebuilds nothing), and says "unknown" outside
# a git checkout.
set -euo pipefail
script=$(cd "$(dirname "$0")/.." && pwd)/cmake/revision.cmake
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "revision.sh: $*" >&2; exit 1; }
header() { cmake -DSRC="$dir/src" -DOUT="$dir/rev.h" -DGIT="$(command -v git)" -P "$script"; cat "$dir/rev.h"; }
mkdir "$dir/src"
cd "$dir/src"
git init -q
git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
[[ $(header) == *"#define CHECKMPI_GIT_REVISION \"$(git rev-parse --short HEAD)\""* ]] || fail "first commit: $(cat "$dir/rev.h")"
touch -d '2000-01-01' "$dir/rev.h"
header >/dev/null
[ "$(stat -c %Y "$dir/rev.h")" = "$(date -d 2000-01-01 +%s)" ] || fail "rewritten though the revision is the same"
git -c user.name=t -c user.email=t@t commit -q --allow-empty -m two
[[ $(header) == *"\"$(git rev-parse --short HEAD)\""* ]] || fail "second commit not seen: $(cat "$dir/rev.h")"
echo a >f && git add f && git -c user.name=t -c user.email=t@t commit -q -m three && echo b >f
[[ $(header) == *"\"$(git rev-parse --short HEAD)-dirty\""* ]] || fail "an edit not seen: $(cat "$dir/rev.h")"
rm -rf .git
[[ $(header) == *'"unknown"'* ]] || fail "outside a checkout: $(cat "$dir/rev.h")"
echo "revision.sh: ok"
