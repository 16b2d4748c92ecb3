#!/bin/sh
# free (kB) and mem_eat (kB): the same metric names as testsuites/test_memory.py
. ../lib/gate.sh

free | awk '/^Mem:/ { print $2, $3, $4 }' > /tmp/free.kb
read -r total used free < /tmp/free.kb
report free_total_kb "$total" kB
report free_used_kb "$used" kB
report free_free_kb "$free" kB

dmesg -n 1   # the OOM killer's report would flood the console
mem_eat > /tmp/mem_eat.log 2>&1
tail -n 2 /tmp/mem_eat.log
kb=$(sed -n 's/.*total = [0-9]* = \([0-9]*\)kB.*/\1/p' /tmp/mem_eat.log | tail -n 1)
rm -f /tmp/mem_eat.log /tmp/free.kb
report mem_eat_kb "$kb" kB
