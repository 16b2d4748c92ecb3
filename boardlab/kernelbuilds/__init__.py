"""Kernel builds: kernels from Debian's linux-source with a board's config, timed and
sized, and the U-Boot image (uImage) that wraps them. (Not `build/`: tools and ignore
files take that name for build output.)"""
