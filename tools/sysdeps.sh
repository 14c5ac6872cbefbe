#!/usr/bin/env bash
# Installs the distribution packages a make target needs (Debian/Ubuntu, apt-get), only
# those missing. As root: non-interactive apt-get. Otherwise: prints the one command to
# run and exits 1, so `make test` never runs (and skips) tests whose tools are absent.
#   tools/sysdeps.sh test   fio, chromium, smartmontools, nvme-cli, util-linux, e2fsprogs,
#                           fdisk, fonts (real-drive, browser and report tests), nbdkit and
#                           libnbd-bin (nbdinfo, nbdfuse: ssdlab serve and its tests),
#                           openssh-server, openssh-client, iproute2 (drives on other hosts:
#                           a real sshd in a network namespace of its own),
#                           qemu-system-x86, linux-image-amd64, busybox-static (the NVMe VM
#                           of tests/nvme: QEMU's NVMe controller under virtme-ng)
#   tools/sysdeps.sh demo   fonts (the report's PNGs and HTML)
set -euo pipefail
want=(fonts-dejavu-core:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf)
if [[ "${1:-test}" == test ]]; then
  want+=(fio:fio chromium:chromium smartmontools:smartctl nvme-cli:nvme util-linux:losetup
         util-linux:blkdiscard util-linux:wipefs e2fsprogs:mkfs.ext4 fdisk:sfdisk
         nbdkit:nbdkit libnbd-bin:nbdinfo libnbd-bin:nbdfuse util-linux:fstrim libnbd-bin:nbdcopy
         openssh-server:/usr/sbin/sshd openssh-client:ssh openssh-client:ssh-keygen
         iproute2:ip iproute2:ss util-linux:nsenter util-linux:runuser
         qemu-system-x86:qemu-system-x86_64 "linux-image-amd64:/boot/vmlinuz-*" busybox-static:busybox)
fi
need=()
for pc in "${want[@]}"; do
  pkg=${pc%%:*} what=${pc#*:}
  if [[ $what == /* ]]; then compgen -G "$what" >/dev/null && continue  # a path or a glob
  else PATH=$PATH:/usr/sbin:/sbin command -v "$what" >/dev/null 2>&1 && continue; fi
  [[ " ${need[*]} " == *" $pkg "* ]] || need+=("$pkg")
done
((${#need[@]})) || exit 0
if [[ $(id -u) -ne 0 ]]; then
  echo "missing system packages; run once: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "missing system packages (${need[*]}) and no apt-get: install them with your package manager" >&2
  exit 1
fi
echo "installing ${need[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
# the tests start their own sshd (in a network namespace); installing openssh-server must
# not start a system one listening on port 22: no service starts during this install
policy=/usr/sbin/policy-rc.d
if [[ " ${need[*]} " == *" openssh-server "* && ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
if [[ " ${need[*]} " == *" openssh-server "* ]] && command -v systemctl >/dev/null; then
  systemctl disable --quiet ssh.service 2>/dev/null || true  # nor at the next boot
fi
