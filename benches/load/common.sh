# Shared by run.sh, scale.sh and soak.sh, which source it: messages, flag values, the median in awk.
# The sourcing script sets PROG, the name its messages start with.

die() {
  echo "$PROG: $*" >&2
  exit 1
}
note() { echo "$PROG: $*" >&2; }

need_value() { [[ $# -ge 2 ]] || die "flag $1 needs a value"; }

# An awk function, to put in front of a program: the median of a space-separated list of
# numbers (0 for none). Insertion sort: the lists are a few rounds long.
# shellcheck disable=SC2034 # used by the sourcing scripts
AWK_MEDIAN='
  function median(list,    v, n, i, j, t) {
    n = split(list, v, " ")
    if (n == 0) return 0
    for (i = 2; i <= n; i++) {
      t = v[i] + 0
      for (j = i - 1; j >= 1 && v[j] + 0 > t; j--) v[j + 1] = v[j]
      v[j + 1] = t
    }
    if (n % 2) return v[(n + 1) / 2]
    return (v[n / 2] + v[n / 2 + 1]) / 2
  }
'
