#!/bin/sh
# gen-lastnames.sh -- rebuilds the synthetic second part of
# client/lib/lastnames.txt: every prefix syllable joined to every suffix
# syllable below, in this order, skipping names already in the first part
# (the surnames written out by hand). Deterministic: run it and diff.
#
#   client/gen-lastnames.sh client/lib/lastnames.txt > /tmp/l && mv /tmp/l client/lib/lastnames.txt
set -eu
list=${1:-client/lib/lastnames.txt}
PREFIXES="Ash Black Brad Bram Brook Bur Cal Carl Chad Clay Cole Crom Dal Dar
Den Dun East Ed Elm Fair Farn Fen Fox Gar Glen Gold Gren Hal Ham Hart Haw
Hay Hol Hun Kel Ken Kin Lang Lin Lock Lyn Mar Mel Mid Mil Mor Nor Oak Pen
Ral Red Ren Rid Ros Rut Sal Sand Sher Stan Sum Thorn Tod Wal War Wen West
Whit Win Wood Wy"
SUFFIXES="bury by croft dale den ford gate ham hurst ington land ley lock
low mont more ridge sley stead stone ton well wick win worth"
sed '/^# --- synthetic/q' "$list"
sed '/^# --- synthetic/q' "$list" | grep -v '^#' | sort > /tmp/gen-lastnames.$$
for p in $PREFIXES; do
    for s in $SUFFIXES; do
        echo "$p$s"
    done
done | awk 'NR == FNR { have[$0] = 1; next } !have[$0]++' /tmp/gen-lastnames.$$ -
rm -f /tmp/gen-lastnames.$$
