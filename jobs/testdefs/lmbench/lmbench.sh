#!/bin/sh
# lmbench: the runs of testsuites/test_lmbench.py (./runs.sh: the pytest suite runs it
# too), raw: `boardlab lava results` reads each figure with the suite's parser. SMALL=true
# (a board under 32 MB) leaves out the context switch and bandwidth runs, which ran out of
# memory there in the study.
. ../lib/raw.sh
. ./runs.sh
raw_begin lmbench
lm_groups; rc=$?
raw_end lmbench $rc
