#!/bin/sh
# free and mem_eat, raw: `boardlab lava results` reads them as testsuites/test_memory.py does
. ../lib/raw.sh

raw_begin memory
echo "@free"
free; rc=$?
echo "@mem_eat"
dmesg -n 1   # the OOM killer's report would flood the console
# mem_eat ends killed by the OOM killer or when malloc fails: its exit code says nothing
mem_eat > /tmp/mem_eat.log 2>&1
tail -n 3 /tmp/mem_eat.log
rm -f /tmp/mem_eat.log
raw_end memory $rc
