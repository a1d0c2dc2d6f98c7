#!/usr/bin/env bash
# One-command reproduction of the attempt to build HyperShift's karpenter-operator, the package
# github.com/openshift/hypershift/karpenter-operator of hypershift's root module at 3ee9615567ac
# (issue 39, point 2). See README.md beside this script.
#
#   bash test/upstream/hypershift-karpenter-operator/reproduce.sh
#       go.mod.attempt through the Go module proxy: prints the proxy's refusal of hypershift, its
#       api module and both Karpenter forks, and exits 1 (the set-up can only use what the proxy
#       serves).
#   bash test/upstream/hypershift-karpenter-operator/reproduce.sh --from-source [GIT_DIR]
#       also builds ./karpenter-operator from a git copy of hypershift (default: the bare mirror
#       /work/.mirror/openshift+hypershift/repo) with hypershift's own vendor/ (which holds the two
#       forks' API packages), timed. A blob the copy lacks is taken from the proxy's module of the
#       version vendor/modules.txt names, and must hash to the same git blob id. Still exits 1 when
#       the proxy refused.
set -euo pipefail

HYPERSHIFT_COMMIT=3ee9615567acffaf3e3ee25c2ca2942d650565cf
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="/usr/local/go/bin:$PATH" GOTOOLCHAIN=local GOFLAGS=-modcacherw GOWORK=off CGO_ENABLED=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

echo "== $(go version); GOPROXY=$(go env GOPROXY); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
refused=0
mkdir "$scratch/module"
cp "$here/go.mod.attempt" "$scratch/module/go.mod"
echo "== go mod download github.com/openshift/hypershift (go.mod.attempt)"
if (cd "$scratch/module" && go mod download github.com/openshift/hypershift 2>&1); then
  echo "the proxy served hypershift: (cd $scratch/module && go mod tidy && go build -o karpenter-operator github.com/openshift/hypershift/karpenter-operator)"
else
  refused=1
fi
# Each module alone, and the version lists, so that the answer for each module is on record.
mkdir "$scratch/outside"
for target in \
  github.com/openshift/hypershift@v0.1.82-0.20260822141928-3ee9615567ac \
  github.com/openshift/hypershift@$HYPERSHIFT_COMMIT \
  github.com/openshift/hypershift@v0.1.81 \
  github.com/openshift/hypershift/api@v0.0.0-20260822141928-3ee9615567ac \
  github.com/openshift/hypershift/api@v0.0.0-20260224085943-34e30acde920 \
  github.com/openshift/aws-karpenter-provider-aws@v0.0.0-20260722223016-abcf7d1e3417 \
  github.com/openshift/kubernetes-sigs-karpenter@v0.0.0-20260721214330-2b8ed744bf1c \
  k8s.io/kube-openapi@v0.0.0-20260519202549-bbf5c5577288 \
  github.com/openshift/hypershift@latest \
  github.com/openshift/hypershift/api@latest; do
  echo "== go mod download $target"
  (cd "$scratch/outside" && go mod download "$target" 2>&1) && echo served || refused=1
done

if [ "${1:-}" = --from-source ]; then
  git_dir=${2:-/work/.mirror/openshift+hypershift/repo}
  src="$scratch/src"
  mkdir "$src"
  echo "== source of $HYPERSHIFT_COMMIT from $git_dir"
  # The tree at the commit, less any blob the copy lacks (a mirror may omit its largest files);
  # those are filled below.
  git --git-dir="$git_dir" ls-tree -r "$HYPERSHIFT_COMMIT" | awk '$2 == "blob" { print $3 " " $4 }' > "$scratch/blobs"
  cut -d' ' -f1 "$scratch/blobs" | git --git-dir="$git_dir" cat-file --batch-check |
    awk '$2 == "missing" { print $1 }' > "$scratch/missing-ids"
  grep -F -f "$scratch/missing-ids" "$scratch/blobs" > "$scratch/missing" || true
  export GIT_INDEX_FILE="$scratch/index"
  git --git-dir="$git_dir" --work-tree="$src" read-tree "$HYPERSHIFT_COMMIT"
  cut -d' ' -f2- "$scratch/missing" | git --git-dir="$git_dir" --work-tree="$src" update-index --force-remove --stdin
  git --git-dir="$git_dir" --work-tree="$src" checkout-index -a
  unset GIT_INDEX_FILE
  while read -r blob path; do
    case "$path" in vendor/*) ;; *) echo "missing outside vendor/: $path" >&2; exit 1 ;; esac
    case "$path" in *.go | *.s | *.h | *.c) ;; *) echo "left out $path (not a build input)"; continue ;; esac
    pkg=${path#vendor/}
    # The vendored module whose path is the longest prefix of the file's path.
    mod=$(sed -n 's/^# \([^ ]*\) \(v[^ ]*\)$/\1 \2/p' "$src/vendor/modules.txt" |
      awk -v p="$pkg" 'index(p, $1 "/") == 1 && length($1) > best { best = length($1); m = $1 "@" $2 } END { print m }')
    [ -n "$mod" ] || { echo "no vendored module holds $path" >&2; exit 1; }
    dir=$(cd "$scratch/outside" && go mod download -json "$mod" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    mkdir -p "$(dirname "$src/$path")"
    cp "$dir/${pkg#"${mod%@*}"/}" "$src/$path"
    chmod 644 "$src/$path"
    [ "$(git hash-object "$src/$path")" = "$blob" ] || { echo "$path from $mod differs from blob $blob" >&2; exit 1; }
    echo "filled $path from $mod (same git blob $blob)"
  done < "$scratch/missing"
  echo "== go build -mod=vendor -p 2 -trimpath ./karpenter-operator"
  start=$(date +%s)
  (cd "$src" && nice -n 15 go build -mod=vendor -p 2 -trimpath -o "$scratch/karpenter-operator" ./karpenter-operator)
  echo "built in $(($(date +%s) - start)) s: $(du -h "$scratch/karpenter-operator" | cut -f1)"
  "$scratch/karpenter-operator" --help 2>&1 | head -3 || true
fi

if [ "$refused" = 1 ]; then
  echo "refused by the Go module proxy (above): the set-up cannot build hypershift's karpenter-operator" >&2
  exit 1
fi
