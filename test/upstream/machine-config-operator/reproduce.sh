#!/bin/sh
# One-command reproduction of the machine-config-controller build attempt (issue 45):
#   sh test/upstream/machine-config-operator/reproduce.sh
# The Go module proxy refuses github.com/openshift/machine-config-operator at 7ff337a4 (403 for
# v0.0.0-20260820200403-7ff337a4ffac), so no go.mod of ours can require it. This builds from the
# source at that commit instead (MCO_GIT_DIR names a local clone, else one is made, blobless, from
# GitHub): with its committed vendor/ tree when VENDOR=1, else without it, resolving upstream's own
# go.mod and go.sum through the proxy. See README.md here for what happened.
set -eu
COMMIT=7ff337a4ffac8e7562692181178ede61e4b2eec5
OUT="${OUT:-${TMPDIR:-/tmp}/machine-config-controller}"
SRC="${SRC:-${TMPDIR:-/tmp}/machine-config-operator-$COMMIT-vendor${VENDOR:-0}}"
export PATH="$PATH:/usr/local/go/bin" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off GOFLAGS=-modcacherw
if [ -z "${MCO_GIT_DIR:-}" ]; then
  MCO_GIT_DIR="${TMPDIR:-/tmp}/machine-config-operator.git"
  [ -d "$MCO_GIT_DIR" ] || git clone --bare --filter=blob:none \
    https://github.com/openshift/machine-config-operator "$MCO_GIT_DIR"
fi
if [ ! -f "$SRC/go.mod" ]; then
  mkdir -p "$SRC.partial"
  if [ "${VENDOR:-0}" = 1 ]; then
    git --git-dir="$MCO_GIT_DIR" archive "$COMMIT" | tar -x -C "$SRC.partial"
  else
    # Every top-level entry but vendor/ (some of its large blobs may be missing from a blobless clone).
    for entry in $(git --git-dir="$MCO_GIT_DIR" ls-tree --name-only "$COMMIT" | grep -vx vendor); do
      if [ "$(git --git-dir="$MCO_GIT_DIR" cat-file -t "$COMMIT:$entry")" = tree ]; then
        mkdir -p "$SRC.partial/$entry"
        git --git-dir="$MCO_GIT_DIR" archive "$COMMIT:$entry" | tar -x -C "$SRC.partial/$entry"
      else
        git --git-dir="$MCO_GIT_DIR" show "$COMMIT:$entry" > "$SRC.partial/$entry"
      fi
    done
  fi
  mv "$SRC.partial" "$SRC"
fi
cd "$SRC"
start=$(date +%s)
mode="$([ "${VENDOR:-0}" = 1 ] && echo vendor || echo readonly)"
# A module the proxy refuses (403) is replaced by upstream's vendored copy of it, read from the
# same commit; at most 80 such rounds (openshift/kubernetes and each of its staging modules is one).
built=0
for round in $(seq 1 80); do
  # Without cgo: the pure-Go OpenPGP of containers/image instead of gpgme, no graph drivers that
  # need C (upstream builds with cgo and libgpgme).
  if timeout 1200 go build -mod="$mode" -p 2 -trimpath \
    -tags "${GOTAGS:-containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper}" \
    -o "$OUT" ./cmd/machine-config-controller \
    2> build-errors.txt; then
    built=1
    break
  fi
  cat build-errors.txt >&2
  refused=$(sed -n 's#.*reading https://proxy.golang.org/\(.*\)/@v/\(.*\)\.\(mod\|zip\): 403.*#\1@\2#p' build-errors.txt | head -1)
  [ -n "$refused" ] || exit 1
  mod=$(printf '%s' "$refused" | sed 's/@.*//; s/!\([a-z]\)/\U\1/g')
  # A refused replacement (upstream's fork of a module) is vendored under the module it replaces.
  replaced=$(awk -v m="$mod" '$2 == "=>" && $3 == m { print $1 } $1 == "replace" && $3 == "=>" && $4 == m { print $2 }' go.mod | head -1)
  [ -z "$replaced" ] || mod="$replaced"
  echo "round $round: the proxy refuses $refused; using upstream's vendor/$mod" >&2
  mkdir -p ".refused/$mod"
  git --git-dir="$MCO_GIT_DIR" archive "$COMMIT:vendor/$mod" | tar -x -C ".refused/$mod"
  goversion=$(git --git-dir="$MCO_GIT_DIR" show "$COMMIT:vendor/modules.txt" |
    sed -n "\|^# $mod |,/^# /s/^## explicit; go \(.*\)/\1/p" | head -1)
  printf 'module %s\n\ngo %s\n' "$mod" "${goversion:-1.18}" > ".refused/$mod/go.mod"
  go mod edit -replace "$mod=./.refused/$mod"
done
[ "$built" = 1 ] || { echo "not built after $round rounds" >&2; exit 1; }
echo "built in $(( $(date +%s) - start )) s: $OUT ($(du -h "$OUT" | cut -f1))"
