#!/bin/sh
# hackbench: the metric of testsuites/test_hackbench.py, same name and unit, from the same
# run (./runs.sh: the pytest suite runs it too)
. ../lib/gate.sh
. ./runs.sh
hb_run | tee /tmp/hb.out
report time_s "$(sed -n 's/^Time: *\([0-9.][0-9.]*\).*/\1/p' /tmp/hb.out | tail -n 1)" s
rm -f /tmp/hb.out
