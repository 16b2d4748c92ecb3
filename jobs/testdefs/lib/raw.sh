# A family's output, raw and tagged, for `boardlab lava results` to parse off the board
# with the family's own parser (boardlab.measure.tagged) and judge with the one judge:
# no figure is computed and no verdict given here.
#   raw_begin FAMILY      '@boardlab-raw FAMILY begin'
#   raw_end FAMILY RC     '@boardlab-raw FAMILY end rc=RC', and LAVA's one test case of the
#                         family, `measured`: pass when its runs exited 0, else fail
# TOOLS=own: the project's programs (target/measure/), under the tools' own names: the
# root's, else (a root that carries Debian's set) those that came with these definitions
# for the board's CPU (OWN_ISA: own/<cpu>/, the multi-call binary and its programs' names)
if [ "$TOOLS" = own ]; then
    own=../own/$OWN_ISA
    root_bin=${OWN_ROOT_BIN:-/usr/lib/boardlab/bin}   # where a root of the project's set has them
    if [ ! -x $root_bin/blmeasure ] && [ -n "$OWN_ISA" ] && [ -x $own/blmeasure ]; then
        bin=${OWN_BIN_DIR:-/tmp/boardlab-bin}
        mkdir -p $bin && cp $own/blmeasure $bin/ &&
            for p in $(cat $own/programs); do ln -sf blmeasure $bin/$p; done
        PATH=$bin:$PATH
        echo "boardlab: the project's programs for $OWN_ISA from the test definitions"
    elif [ -x $root_bin/blmeasure ]; then
        PATH=$root_bin:$PATH
    else   # never a program of the same name from Debian's set in their place
        echo "boardlab: TOOLS=own, but the project's programs are neither on the root" \
             "($root_bin) nor in these definitions (own/${OWN_ISA:-<OWN_ISA unset>})"
        lava-test-case measured --result fail
        exit 1
    fi
    export PATH
fi
echo "boardlab: programs: ${TOOLS:-debian}"

raw_begin() { echo "@boardlab-raw $1 begin"; }
raw_end() {
    echo "@boardlab-raw $1 end rc=$2"
    if [ "$2" = 0 ]; then lava-test-case measured --result pass
    else lava-test-case measured --result fail; fi
}
