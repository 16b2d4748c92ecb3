#!/usr/bin/env bash
# Installs everything boardlab needs on a Debian bookworm host. Idempotent:
# a second run only checks. Root for apt; the Python side goes into .venv.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stamp="$top/.venv/.setup-stamp"

# Host packages: the virtual lab host (QEMU + U-Boot, ser2net, tftpd-hpa, an NFS
# server, rpcbind), image building (mkimage, cpio, cross gcc), LAVA's dispatcher.
APT_PACKAGES=(
  qemu-system-arm u-boot-qemu u-boot-tools
  ser2net tftpd-hpa tftp-hpa nfs-ganesha nfs-ganesha-vfs rpcbind nfs-kernel-server
  iproute2 cpio xz-utils zstd file binutils
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross binutils-arm-linux-gnueabihf
  tmux socat python3-venv
)

log() { printf 'setup: %s\n' "$*" >&2; }

need_apt=0
if ! grep -qs 'non-free' /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list 2>/dev/null; then
  log "adding contrib non-free components (lmbench lives in non-free)"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed -i -E 's/^Components: main$/Components: main contrib non-free/' /etc/apt/sources.list.d/debian.sources
  else
    sed -i -E 's/^(deb .* main)$/\1 contrib non-free/' /etc/apt/sources.list
  fi
  need_apt=1
fi
if ! dpkg --print-foreign-architectures | grep -qx armhf; then
  log "adding the armhf architecture (target kernel, busybox, rt-tests, lmbench)"
  dpkg --add-architecture armhf
  need_apt=1
fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ $need_apt = 1 ] || [ ! -e /var/lib/apt/lists/lock ] ; then
  log "apt-get update"
  apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  # Debian's postinst would start daemons (tftpd-hpa, rpcbind, ganesha) host-wide:
  # the lab runs its own instances inside the lab netns, so keep the host ones down.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
fi

# Python side: a venv with the pinned dependencies and boardlab itself (editable).
py=${PYTHON:-python3}
if [ ! -x "$top/.venv/bin/python" ]; then
  log "creating $top/.venv"
  "$py" -m venv "$top/.venv"
fi
if [ ! -f "$stamp" ] || [ "$top/pyproject.toml" -nt "$stamp" ]; then
  log "pip install -e . into .venv"
  "$top/.venv/bin/pip" install -q --upgrade pip
  "$top/.venv/bin/pip" install -q -e "$top[test]"
  touch "$stamp"
fi
log "host ready"
