# hackbench's change for bench/gate_detection.py, in the board's init: the group count
# doubled (-g N runs as -g 2N) by a wrapper in hackbench's place
mv /usr/bin/hackbench /usr/bin/hackbench.orig
cat > /usr/bin/hackbench <<'EOF'
#!/bin/sh
set -- "$@" --end; args=""
while [ "$1" != --end ]; do
  if [ "$1" = -g ]; then args="$args -g $(($2 * 2))"; shift 2; else args="$args $1"; shift; fi
done
exec /usr/bin/hackbench.orig $args
EOF
chmod 755 /usr/bin/hackbench
