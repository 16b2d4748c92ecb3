"""The lab as its people and its schedulers share it: a board's health, the lab at a
glance (`boardlab lab`)."""
