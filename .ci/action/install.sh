#!/usr/bin/env bash
# The GitHub Action's first step (action.yml): puts ripple-render on the job's PATH.
#
# The release archive of this runner's platform is downloaded with its SHA-256 sum and checked
# against it; a sum that does not match stops the job (nothing is installed). Where there is no
# archive to download (no release for this platform or version, no network to GitHub), it falls
# back to `cargo install --locked`, which builds from crates.io.
#
# Inputs (environment): VERSION (`latest` or 1.2.3), RELEASES (the releases' address),
# RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP and GITHUB_PATH as GitHub sets them.
set -euo pipefail

releases=${RELEASES:-https://github.com/ripple-render/ripple-render/releases}
version=${VERSION:-latest}
version=${version#v}
temp=${RUNNER_TEMP:-$(mktemp -d)}

case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
    Linux/X64) target=x86_64-unknown-linux-musl ;;
    Linux/ARM64) target=aarch64-unknown-linux-musl ;;
    macOS/X64) target=x86_64-apple-darwin ;;
    macOS/ARM64) target=aarch64-apple-darwin ;;
    Windows/X64) target=x86_64-pc-windows-msvc ;;
    *) target="" ;;
esac

# Falls back to building from crates.io, saying why.
from_source() {
    echo "::notice title=ripple-render::$1; building it with cargo install instead (a few minutes)"
    if [ "$version" = latest ]; then
        cargo install --locked ripple-render
    else
        cargo install --locked "ripple-render@$version"
    fi
    exit 0
}

[ -n "$target" ] || from_source "no release archive for ${RUNNER_OS:-this OS} on ${RUNNER_ARCH:-this machine}"
if [ "$version" = latest ]; then
    # The latest release's page address ends in its tag.
    tag=$(curl -fsSLI -o /dev/null -w '%{url_effective}' "$releases/latest" 2>/dev/null || true)
    version=${tag##*/v}
    case $version in
        [0-9]*.[0-9]*.[0-9]*) ;;
        *) version=latest; from_source "the latest release could not be found at $releases" ;;
    esac
fi
case $target in
    *windows*) archive="ripple-render-$version-$target.zip" ;;
    *) archive="ripple-render-$version-$target.tar.gz" ;;
esac
where=$(mktemp -d "$temp/ripple-render-install.XXXXXX")
url="$releases/download/v$version"
if ! curl -fsSL -o "$where/$archive" "$url/$archive" || ! curl -fsSL -o "$where/$archive.sha256" "$url/$archive.sha256"; then
    from_source "$url/$archive could not be downloaded"
fi
# The sum must match: a mismatch is never built around.
if command -v sha256sum >/dev/null; then
    sum=$(cd "$where" && sha256sum "$archive" | awk '{print $1}')
else
    sum=$(cd "$where" && shasum -a 256 "$archive" | awk '{print $1}')
fi
if [ "$sum" != "$(awk '{print $1}' "$where/$archive.sha256")" ]; then
    echo "::error title=ripple-render::the SHA-256 of $archive is $sum, not the one its release publishes: not installed"
    exit 1
fi
case $archive in
    *.zip) (cd "$where" && unzip -q "$archive") ;;
    *) tar -xzf "$where/$archive" -C "$where" ;;
esac
bin="$where/${archive%.zip}"
bin="${bin%.tar.gz}"
"$bin/ripple-render" --version
echo "$bin" >>"${GITHUB_PATH:-/dev/null}"
