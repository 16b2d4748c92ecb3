#!/bin/sh
# hackbench: the run of testsuites/test_hackbench.py (./runs.sh: the pytest suite runs it
# too), raw: `boardlab lava results` reads its figure with the family's pattern
. ../lib/raw.sh
. ./runs.sh
raw_begin hackbench
hb_run; rc=$?
raw_end hackbench $rc
