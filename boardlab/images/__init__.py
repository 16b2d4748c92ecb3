"""A virtual board's images, from Debian packages only: packages downloaded and unpacked,
the busybox root file system, userland a foreign architecture lacks, the uImages, the
ramdisk and the NFS root tree, ready at a board's first use."""
