#!/usr/bin/env bash
# The release version lives in one place: `version` under [workspace.package] in Cargo.toml.
# Every crate inherits it, the wheel reads it through maturin, the C package through this
# script. npm and Maven need it written in their own manifests; this script keeps those in step:
#
#   scripts/version.sh              print the version
#   scripts/version.sh check        fail naming every manifest that disagrees
#   scripts/version.sh set X.Y.Z    write X.Y.Z into Cargo.toml, every npm and Maven manifest
#                                   and the C header's version macros
#
# Sourced (by package.sh and the install tests) it defines VERSION, ABI and check_versions.

_version_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

_workspace_version() {
    sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$_version_root/Cargo.toml"
}

VERSION=$(_workspace_version)
# The C ABI major: the header's SHARDLINE_ABI_VERSION, also the SONAME's suffix.
ABI=$(sed -n 's/^#define SHARDLINE_ABI_VERSION \([0-9][0-9]*\)$/\1/p' "$_version_root/include/shardline.h")

# The manifests that carry their own copy of the version.
_npm_manifests() {
    ls "$_version_root"/bindings/node/package.json "$_version_root"/bindings/node/npm/*/package.json
}
_pom_manifests() {
    ls "$_version_root"/bindings/java/pom.xml "$_version_root"/bindings/java/*/pom.xml
}

check_versions() {
    local bad=0 f v
    for f in $(_npm_manifests); do
        v=$(node -p "require('$f').version")
        if [ "$v" != "$VERSION" ]; then
            echo "version: ${f#"$_version_root"/} has $v, Cargo.toml has $VERSION (scripts/version.sh set $VERSION)" >&2
            bad=1
        fi
    done
    for f in $(_pom_manifests); do
        # The project's own version (parent pom) or its parent's (modules): the first
        # <version> after the artifactId of shardline-parent.
        v=$(sed -n '/<artifactId>shardline-parent<\/artifactId>/,/<\/version>/s/.*<version>\(.*\)<\/version>.*/\1/p' "$f" | head -n 1)
        if [ "$v" != "$VERSION" ]; then
            echo "version: ${f#"$_version_root"/} has ${v:-no version}, Cargo.toml has $VERSION (scripts/version.sh set $VERSION)" >&2
            bad=1
        fi
    done
    return $bad
}

_set_version() {
    local new=$1 f
    if ! [[ $new =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
        echo "version: $new is not a semantic version X.Y.Z[-pre]" >&2
        return 2
    fi
    sed -i "/^\[workspace.package\]/,/^\[/s/^version = \".*\"$/version = \"$new\"/" "$_version_root/Cargo.toml"
    for f in $(_npm_manifests); do
        node -e "const fs=require('fs');const p=JSON.parse(fs.readFileSync('$f','utf8'));p.version='$new';fs.writeFileSync('$f',JSON.stringify(p,null,2)+'\n')"
    done
    for f in $(_pom_manifests); do
        sed -i "/<artifactId>shardline-parent<\/artifactId>/,/<\/version>/s|<version>.*</version>|<version>$new</version>|" "$f"
    done
    # The C header's version macros (ffi/tests/header.rs checks them against Cargo's).
    local major minor patch
    IFS=. read -r major minor patch <<<"${new%%-*}"
    for f in "$_version_root/ffi/cbindgen.toml" "$_version_root/include/shardline.h"; do
        sed -i -e "s/^#define SHARDLINE_VERSION_MAJOR .*/#define SHARDLINE_VERSION_MAJOR $major/" \
            -e "s/^#define SHARDLINE_VERSION_MINOR .*/#define SHARDLINE_VERSION_MINOR $minor/" \
            -e "s/^#define SHARDLINE_VERSION_PATCH .*/#define SHARDLINE_VERSION_PATCH $patch/" "$f"
    done
    (cd "$_version_root/bindings/node" && npm install --package-lock-only --ignore-scripts --no-audit --no-fund >/dev/null)
    VERSION=$new
    check_versions && echo "$new"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
        "") echo "$VERSION" ;;
        check) check_versions && echo "all manifests at $VERSION" ;;
        set) _set_version "${2:?scripts/version.sh set X.Y.Z}" ;;
        *) echo "usage: scripts/version.sh [check | set X.Y.Z]" >&2; exit 2 ;;
    esac
fi
