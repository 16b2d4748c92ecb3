"""Boot: a board from power-off to a shell with a given kernel. The plan (which kernel,
which root), the labgrid strategy that carries it out over the drivers (power, console,
U-Boot, shell), the board's lock, staging to TFTP, and the record each boot leaves."""
