#!/usr/bin/env bash
# Installs everything boardlab needs on a Debian bookworm host, as root; with --main-job
# only what the main job uses (the tests install the rest), with --builds what building
# the PowerPC board's images uses (scripts/test.sh starts that build there, beside the
# rest of the set-up). Idempotent: a second run only checks. Host
# packages with apt (adding Debian's contrib and non-free components, source packages and
# the armhf architecture); Python packages into .venv (and the history's into .venv-squad).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# What the main job uses (scripts/main-job.sh: the virtual lab, the default board's images,
# the suites, the report): `setup-host.sh --main-job` installs these alone.
MAIN_JOB_PACKAGES=(
  # the virtual lab hosts: QEMU + U-Boot (both boards' QEMU: the lab checks every host's
  # boards), the console server, TFTP, NFS (user space ganesha where the kernel has no
  # nfsd), the LAN's rule set, sshd + rsync (kernels are staged over ssh)
  qemu-system-arm qemu-system-ppc u-boot-qemu u-boot-tools ser2net tftpd-hpa tftp-hpa
  nfs-ganesha nfs-ganesha-vfs rpcbind iproute2 nftables openssh-client openssh-server rsync
  # building the board's images: cross compiler for target/ programs, cpio, xz
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross binutils-arm-linux-gnueabihf
  cpio xz-utils file curl
  # the build-size suite: what building a kernel needs (its source is the kernel's pinned
  # linux-source version, fetched by version: kernels/virt-nfs/pin.yaml)
  make gcc libc6-dev flex bison bc
  python3-venv
)
# What the tests build beside it
TEST_BUILD_PACKAGES=(
  # the study's PowerPC boards (TQM860L, Sandpoint): the powerpc cross compiler; the
  # virtual PowerPC board's user land cross-built from Debian's source packages
  gcc-powerpc-linux-gnu binutils-powerpc-linux-gnu libc6-dev-powerpc-cross dpkg-dev
  # boardlab bisect: incremental kernel builds through ccache, git for `git bisect run`;
  # the installed linux-source-6.1, the bisects' test tree (tests/kerneltree.py) and what
  # a kernel without a pin is built from
  ccache git linux-source-6.1
  # the project's measurement programs and the real boards' roots are run on each CPU
  # they are built for (armhf, e500mc, 603e, MPC860) under QEMU's user mode
  qemu-user
)
# The servers and tools the tests use beside them (installed last, while the history's
# venv is filled and, under scripts/test.sh, the PowerPC board's images build)
TEST_SERVICE_PACKAGES=(
  # interactive console checks
  tmux microcom   # microcom: labgrid-client console
  # LAVA: lava-run and LAVA's schemas (lava-dispatcher), the device-type templates and
  # the server for the full loop (lava-server needs PostgreSQL running to install),
  # lavacli to submit, telnet for the device's connection command
  postgresql lava-dispatcher lava-server lavacli telnet
  # real lab hosts switch power through pdudaemon; the tests put one in front of the
  # virtual lab's switch
  pdudaemon
  # the report and history pages are looked at by a test in a real headless browser
  chromium
)
# What building the PowerPC board's images uses, of the two lists above (`--builds`): its
# kernel and user land are the longest step of a host's first run, so scripts/test.sh
# installs these first and starts that build while apt fetches and unpacks the rest. Its
# kernel source is the pinned version (kernels/virt-nfs/pin.yaml), fetched by the build
# itself, not the installed linux-source-6.1
BOARD_BUILD_PACKAGES=(
  make gcc libc6-dev flex bison bc u-boot-tools cpio xz-utils file python3-venv
  gcc-powerpc-linux-gnu binutils-powerpc-linux-gnu libc6-dev-powerpc-cross dpkg-dev
)
FIRST_PACKAGES=("${MAIN_JOB_PACKAGES[@]}" "${TEST_BUILD_PACKAGES[@]}")
LAST_PACKAGES=("${TEST_SERVICE_PACKAGES[@]}")
for p in "${BOARD_BUILD_PACKAGES[@]}"; do   # a subset: the whole set-up installs each of them too
  case " ${FIRST_PACKAGES[*]} " in *" $p "*) ;;
    *) printf 'setup: BOARD_BUILD_PACKAGES lists %s, which neither list above has\n' "$p" >&2; exit 2 ;; esac
done
mode=all
case "${1:-}" in
  --main-job) mode=main-job; FIRST_PACKAGES=("${MAIN_JOB_PACKAGES[@]}"); LAST_PACKAGES=() ;;
  --builds) mode=builds; FIRST_PACKAGES=("${BOARD_BUILD_PACKAGES[@]}"); LAST_PACKAGES=() ;;
  "") ;;
  *) printf 'setup: unknown option %s (--main-job, --builds or none)\n' "$1" >&2; exit 2 ;;
esac

# each line with the seconds since the set-up began: where a first run's time goes
log() { printf 'setup: [%4ds] %s\n' "$SECONDS" "$*" >&2; }

# apt-get install with a progress line per 10 % of its downloads and of its unpacking and
# configuring (apt's own status on fd 3, APT::Status-Fd): a fresh host takes minutes here
apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -o APT::Status-Fd=3 "$@" 3>&1 >/dev/null |
    awk -F: '$1 == "dlstatus" || $1 == "pmstatus" {
      kind = ($1 == "dlstatus") ? "downloading" : "installing"; p = int($3 / 10) * 10
      if (kind != last) { last = kind; shown = -1 }
      if (p > shown) { shown = p; printf "setup:   %s %3d %% (%s)\n", kind, p, $4 > "/dev/stderr"; fflush("/dev/stderr") }
    }'
}

if [ "$(id -u)" != 0 ]; then
  log "run as root (apt-get, network namespaces, port 69)"; exit 1
fi

changed=0
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && ! grep -q '^Components:.*non-free' "$src"; then
  log "adding contrib non-free to $src (lmbench is in non-free)"
  sed -i -E 's/^Components: main$/Components: main contrib non-free/' "$src"
  changed=1
elif [ ! -f "$src" ] && ! grep -qs '^deb .* non-free' /etc/apt/sources.list; then
  log "adding contrib non-free to /etc/apt/sources.list"
  sed -i -E 's/^(deb .* main)$/\1 contrib non-free/' /etc/apt/sources.list
  changed=1
fi
if [ -f "$src" ] && ! grep -q '^Types:.*deb-src' "$src"; then
  log "adding deb-src to $src (the PowerPC board's programs are built from Debian's sources)"
  sed -i -E 's/^Types: deb$/Types: deb deb-src/' "$src"
  changed=1
elif [ ! -f "$src" ] && ! grep -qs '^deb-src ' /etc/apt/sources.list; then
  log "adding deb-src lines to /etc/apt/sources.list"
  sed -n -E 's/^deb (.*)$/deb-src \1/p' /etc/apt/sources.list >> /etc/apt/sources.list
  changed=1
fi
if ! dpkg --print-foreign-architectures | grep -qx armhf; then
  log "adding the armhf architecture (the virtual board's kernel and userland)"
  dpkg --add-architecture armhf
  changed=1
fi

missing_of() {   # the packages of "$@" not installed, one a line
  local p
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = 'install ok installed' ] || echo "$p"
  done
}
mapfile -t missing_first < <(missing_of "${FIRST_PACKAGES[@]}")
mapfile -t missing_last < <(missing_of "${LAST_PACKAGES[@]}")
# (grep without -q: an early exit would kill the producer with SIGPIPE under pipefail)
lists_ok() { apt-cache policy lmbench:armhf 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; }
# apt's lists as this script last fetched them: a set-up in steps (scripts/test.sh) fetches
# them once, not at each step
updated_stamp=/var/lib/boardlab/apt-lists-updated
lists_recent() { [ -n "$(find "$updated_stamp" -mmin -60 2>/dev/null)" ]; }
if [ $changed = 1 ] || ! lists_ok || { [ $((${#missing_first[@]} + ${#missing_last[@]})) -gt 0 ] && ! lists_recent; }; then
  for try in 1 2 3; do
    log "apt-get update (try $try)"
    # an index in the middle of a mirror sync fails the whole command: the others are
    # still fresh, so go on when apt has everything this set-up installs (a sync takes
    # minutes: retrying seconds later rarely helps), else retry, then go on with what is there
    if apt-get update -qq; then break; fi
    if lists_ok && apt-get install -s -qq "${missing_first[@]}" "${missing_last[@]}" >/dev/null 2>&1; then
      log "apt-get update: an index failed (above), but apt can install all this set-up needs: going on"
      break
    fi
    sleep 3
  done
  lists_ok || { log "apt has no lmbench:armhf even after apt-get update"; exit 1; }
  mkdir -p "${updated_stamp%/*}" && touch "$updated_stamp"
fi

install_missing() {   # the packages "$@" (none installed yet), their daemons kept from starting
  [ $# -gt 0 ] || return 0
  log "installing: $*"
  # the packages' own daemons (tftpd-hpa, rpcbind, ganesha) must not start host-wide:
  # the lab runs its instances inside the lab network namespace
  # An existing policy-rc.d (container images ship one) is the host's: it is put back
  # as it was afterwards, never deleted.
  local policy_saved=
  if [ -e /usr/sbin/policy-rc.d ]; then
    policy_saved=$(mktemp /usr/sbin/.policy-rc.d.boardlab.XXXXXX)
    cp -p /usr/sbin/policy-rc.d "$policy_saved"
    trap 'mv -f "'"$policy_saved"'" /usr/sbin/policy-rc.d' EXIT
  else
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  # explicit codes, not set -e: the last step is called in an `||` (set -e is off there)
  local rc=0 started_pg=
  if printf '%s\n' "$@" | grep -qx lava-server; then
    # lava-server's postinst creates its database: PostgreSQL must answer during the
    # install (no systemd here, policy-rc.d blocks invoke-rc.d), so start it by hand
    apt_install postgresql || rc=$?
    if [ $rc = 0 ] && pg_lsclusters -h | awk '$4 != "online" {found=1} END {exit !found}'; then
      log "starting PostgreSQL for lava-server's install"
      pg_lsclusters -h | awk '$4 != "online" {print $1, $2}' | while read -r ver cl; do
        pg_ctlcluster "$ver" "$cl" start; done
      started_pg=1
    fi
  fi
  if [ $rc = 0 ]; then apt_install "$@" || rc=$?; fi
  if [ -n "$started_pg" ]; then   # stop only what this script started
    pg_lsclusters -h | awk '$4 == "online" {print $1, $2}' | while read -r ver cl; do
      pg_ctlcluster "$ver" "$cl" stop; done
  fi
  if [ -n "$policy_saved" ]; then mv -f "$policy_saved" /usr/sbin/policy-rc.d; else rm -f /usr/sbin/policy-rc.d; fi
  trap - EXIT
  [ $rc = 0 ] || log "apt-get install failed (exit $rc)"
  return $rc
}

py=${PYTHON:-python3}
# The locked packages go in with uv (the history's 107 packages took pip 47 CPU-seconds, uv
# 24), itself put into .venv by pip from its own lock, hash checked. Byte-compiled at
# install: where PYTHONDONTWRITEBYTECODE is set, nothing else writes a .pyc, and every
# process would compile what it imports. uv reads pip's find-links and index settings only
# through its own names.
export UV_FIND_LINKS="${UV_FIND_LINKS:-${PIP_FIND_LINKS:-}}" UV_INDEX_URL="${UV_INDEX_URL:-${PIP_INDEX_URL:-}}"
[ -n "$UV_FIND_LINKS" ] || unset UV_FIND_LINKS
[ -n "$UV_INDEX_URL" ] || unset UV_INDEX_URL
uv="$top/.venv/bin/uv"
locked_install() {   # venv lock [more uv arguments]: exactly the lock, each hash checked
  local venv=$1 lock=$2; shift 2
  "$uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" --require-hashes -r "$lock" "$@"
}
uv_ready() {   # .venv, with uv in it: the other installs use it
  if [ ! -x "$top/.venv/bin/python" ]; then
    log "creating $top/.venv"
    "$py" -m venv "$top/.venv"
  fi
  if [ ! -x "$uv" ] || [ "$top/scripts/uv.lock" -nt "$top/.venv/.boardlab-installed" ]; then
    "$top/.venv/bin/pip" install -q --disable-pip-version-check --require-hashes -r "$top/scripts/uv.lock"
  fi
}
main_venv() {
  local stamp="$top/.venv/.boardlab-installed"
  if [ ! -f "$stamp" ] || [ "$top/requirements.lock" -nt "$stamp" ] || [ "$top/pyproject.toml" -nt "$stamp" ] \
     || [ "$top/scripts/uv.lock" -nt "$stamp" ]; then
    # exactly the locked versions (scripts/lock-deps.sh writes the lock from
    # pyproject.toml's pins); then boardlab itself, nothing more
    log "installing $(grep -c '^[A-Za-z]' "$top/requirements.lock") locked packages (requirements.lock, hashes checked) into .venv"
    locked_install "$top/.venv" "$top/requirements.lock"
    "$uv" pip install --quiet --python "$top/.venv/bin/python" --no-deps -e "$top"
    touch "$stamp"
  fi
  # boardlab's own modules too (a .pyc is used while its source is unchanged)
  "$top/.venv/bin/python" -m compileall -q "$top/boardlab" >/dev/null || true
}
# the results database (SQUAD, `boardlab history up`) in a venv of its own: its Django and
# Jinja2 pins are not boardlab's. Made by uv, without pip (nothing installs into it but uv).
squad_venv() {
  local lock="$top/history/requirements.lock" stamp="$top/.venv-squad/.boardlab-installed"
  if [ ! -x "$top/.venv-squad/bin/python" ]; then
    log "creating $top/.venv-squad"
    "$uv" venv --quiet --python "$(command -v "$py")" "$top/.venv-squad"
  fi
  if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
    log "installing $(grep -c '^[A-Za-z]' "$lock") locked packages (history/requirements.lock, hashes checked) into .venv-squad"
    locked_install "$top/.venv-squad" "$lock"
    touch "$stamp"
  fi
}
install_missing "${missing_first[@]}"
uv_ready
main_venv
case $mode in
  main-job) log "host ready for the main job (${#MAIN_JOB_PACKAGES[@]} packages; scripts/test.sh installs the tests' $((${#TEST_BUILD_PACKAGES[@]} + ${#TEST_SERVICE_PACKAGES[@]})) more and the history's venv)"
            exit 0 ;;
  builds) log "host ready for the PowerPC board's build"; exit 0 ;;
esac
# the history's venv beside the last packages (uv waits on downloads, apt on downloads and dpkg)
squad_venv & squad_pid=$!
rc=0
install_missing "${missing_last[@]}" || rc=$?
squad_rc=0
wait "$squad_pid" || squad_rc=$?
[ "$rc" = 0 ] || exit "$rc"
[ "$squad_rc" = 0 ] || exit "$squad_rc"
log "host ready"
