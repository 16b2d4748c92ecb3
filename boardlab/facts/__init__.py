"""Facts: what a board and a lab host are (boards/<board>.yaml, places/<host>/lab-host.yaml),
read into typed objects and checked, and what is rendered from them for the lab host's
services (ser2net, tftpd-hpa, NFS, power) and the labgrid coordinator's places."""
