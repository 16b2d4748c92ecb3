#!/bin/sh
# mem_bw: the run of testsuites/test_mem_bw.py (./runs.sh: the pytest suite runs it too),
# raw: `boardlab lava results` reads its figures with the family's reader
. ../lib/raw.sh
. ./runs.sh
raw_begin mem_bw
mb_run; rc=$?
raw_end mem_bw $rc
