# hackbench (rt-tests, on every image that has cyclictest), as the hackbench suite runs it:
# the one definition. LAVA's hackbench.sh sources this file; the pytest side writes it to
# the board (boardlab.measure.target_load) and runs hb_run (its family's record).
#   hb_run   one run: HB_GROUPS groups of 20 senders and 20 receivers (processes, over
#            sockets: 40 tasks a group), each sender passing HB_LOOPS messages of 100 bytes
#            to each receiver of its group. hackbench prints its settings, then
#            'Time: SECONDS', its own count of the run on the board's clock.
# 4 groups, 160 tasks: four times the jitter suite's load (hackbench -g 2 -l 50), within
# the RAM of the virtual boards; hackbench's own default is 10 groups, 400 tasks.
HB_GROUPS=4
HB_LOOPS=100
hb_run() { hackbench -g "$HB_GROUPS" -l "$HB_LOOPS" 2>&1; }
