# Reports one metric to LAVA with its verdict against the stored baseline.
# GATE (a test definition parameter, rendered by `boardlab lava render` from
# kernels/<kernel>/<board>.yaml) holds "NAME:DIRECTION:LIMIT" entries separated by
# spaces, one per exact metric (boardlab.measure.catalogue): LIMIT is the baseline's median plus
# its floor. A noisy metric has no limit one figure could check (skip here; `boardlab
# lava results` judges it from its samples), nor has a host-bound one measured elsewhere.
#   report NAME VALUE UNITS   ->  lava-test-case NAME --result pass|fail|skip ...
# skip: no limit for NAME. fail without a measurement: VALUE could not be parsed.
# TOOLS=own: the project's programs (target/measure/), under the tools' own names
[ "$TOOLS" = own ] && PATH=/usr/lib/boardlab/bin:$PATH && export PATH
echo "boardlab: programs: ${TOOLS:-debian}"

verdict() {  # NAME VALUE
    echo "$GATE" | tr ' ' '\n' | awk -F: -v n="$1" -v v="$2" '
        $1 == n { found = 1
                  if (($2 == "lower" && v + 0 > $3 + 0) || ($2 == "higher" && v + 0 < $3 + 0)) r = "fail"
                  else r = "pass" }
        END { if (!found) r = "skip"; print r }'
}

report() {  # NAME VALUE UNITS
    case "$2" in
        ''|*[!0-9.]*)
            echo "boardlab: $1: no number in the output (got '$2')"
            lava-test-case "$1" --result fail
            return ;;
    esac
    result=$(verdict "$1" "$2")
    limit=$(echo "$GATE" | tr ' ' '\n' | awk -F: -v n="$1" '$1 == n { print $2 " than " $3 }')
    echo "boardlab: $1 = $2 $3: $result${limit:+ (limit: $limit)}"
    lava-test-case "$1" --result "$result" --measurement "$2" --units "$3"
}
