# A family's output, raw and tagged, for `boardlab lava results` to parse off the board
# with the family's own parser (boardlab.measure.tagged) and judge with the one judge:
# no figure is computed and no verdict given here.
#   raw_begin FAMILY      '@boardlab-raw FAMILY begin'
#   raw_end FAMILY RC     '@boardlab-raw FAMILY end rc=RC', and LAVA's one test case of the
#                         family, `measured`: pass when its runs exited 0, else fail
# TOOLS=own: the project's programs (target/measure/), under the tools' own names
[ "$TOOLS" = own ] && PATH=/usr/lib/boardlab/bin:$PATH && export PATH
echo "boardlab: programs: ${TOOLS:-debian}"

raw_begin() { echo "@boardlab-raw $1 begin"; }
raw_end() {
    echo "@boardlab-raw $1 end rc=$2"
    if [ "$2" = 0 ]; then lava-test-case measured --result pass
    else lava-test-case measured --result fail; fi
}
