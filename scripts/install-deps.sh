#!/usr/bin/env bash
# What the test command needs beyond the language toolchains, installed when missing: from
# Debian, protoc (etcd-client compiles its protos), etcd (the etcd suites), cJSON headers (the C
# tests), pkg-config (the C install test) and libfaketime (the cluster campaign's clock skew);
# from rustup, clippy and rustfmt.
#
#   scripts/install-deps.sh            everything the test command needs
#   scripts/install-deps.sh protoc     only the named ones (protoc, etcd, cjson, pkg-config,
#                                      faketime, rust)
#
# Sourced, it defines ensure_deps. apt-get runs as root, or through sudo when there is one.

ensure_deps() {
    local want=("$@") pkgs=() w
    [ ${#want[@]} -gt 0 ] || want=(protoc etcd cjson pkg-config faketime rust)
    for w in "${want[@]}"; do
        case "$w" in
            protoc) command -v protoc >/dev/null 2>&1 || pkgs+=(protobuf-compiler) ;;
            etcd) command -v etcd >/dev/null 2>&1 || pkgs+=(etcd-server) ;;
            cjson) [ -f /usr/include/cjson/cJSON.h ] || pkgs+=(libcjson-dev) ;;
            pkg-config) command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config) ;;
            faketime) [ -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || pkgs+=(libfaketime) ;;
            rust)
                if ! cargo clippy --version >/dev/null 2>&1 || ! cargo fmt --version >/dev/null 2>&1; then
                    rustup component add clippy rustfmt
                fi
                ;;
            *) echo "install-deps: unknown dependency $w" >&2; return 2 ;;
        esac
    done
    [ ${#pkgs[@]} -gt 0 ] || return 0
    local sudo=
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root or sudo to apt-get install ${pkgs[*]}" >&2; return 1; }
        sudo=sudo
    fi
    echo "installing ${pkgs[*]} (apt-get)"
    # A fresh machine has no package lists yet.
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    ensure_deps "$@"
fi
