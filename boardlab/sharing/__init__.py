"""A board as people and schedulers share it, from the side of one who uses it: a place
held at the coordinator while LAVA shares the board (placehold), and the lock on the
board's console and power on this lab host (boardlock)."""
