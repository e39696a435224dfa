# bench/ab_pairs.sh: the table of an interleaved A/B comparison, shared by
# bench/st/ab.sh and bench/lua/ab.sh (sourced, not run).
#   ab_pairs PAIRS A_NAME B_NAME COLUMN
# PAIRS holds one line per round, "ratio_A ratio_B"; the table gives each
# build's median, least and greatest over the rounds (COLUMN heads the
# names), and the median of the rounds' paired differences B - A with its
# middle half: processes minutes apart drift together, so the pairs
# resolve what the two medians alone do not.

# The q-quantile (0..1, nearest rank) of a column of numbers.
ab_q() { sort -n | awk -v q="$1" '{ v[NR] = $1 } END {
  i = int(q * (NR - 1) + 0.5) + 1; print v[i] }'; }

ab_pairs() {
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-6s %9s %9s %9s  %s\n' build median min max "$4"
  for c in 1 2; do
    col=$(awk -v c=$c '{ print $c }' "$1")
    printf '%-6s %9.4f %9.4f %9.4f  %s\n' "$(echo AB | cut -c$c)" \
      "$(echo "$col" | ab_q 0.5)" "$(echo "$col" | ab_q 0)" \
      "$(echo "$col" | ab_q 1)" "$(if [ $c = 1 ]; then echo "$2"; else echo "$3"; fi)"
  done
  d=$(awk '{ printf "%.6f\n", $2 - $1 }' "$1")
  printf 'B - A  %+9.4f (paired median; middle half %+.4f .. %+.4f)\n' \
    "$(echo "$d" | ab_q 0.5)" "$(echo "$d" | ab_q 0.25)" "$(echo "$d" | ab_q 0.75)"
}
