"""boardlab: hardware-in-the-loop test lab definitions for embedded Linux boards."""
