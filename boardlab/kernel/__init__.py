"""Kernels by what they are: built from Debian's linux-source by version and registered
(`build`), shown with their pins and identities (`show`), pins moved by re-measuring (`pin`)."""
