"""The virtual lab host: QEMU boards wired through ser2net, tftpd-hpa, an NFS server
and a power switch, on a lab LAN that is a network namespace."""
