# Order statistics for the benchmarks' ratios (awk functions, no program):
#   awk -f tests/bench/stats.awk -f PROGRAM.awk
# A median's 90% interval here is [a[k], a[n+1-k]] of the sorted values,
# the k a binomial gives: it holds the median with at least 90% whatever
# the distribution, provided the values are independent (one per pair or
# round).  Fewer than 5 values give no interval ("-").

# Sorts a[1..n] in place.
function sort(a, n,   i, j, x) {
    for (i = 2; i <= n; i++) {
        x = a[i]
        for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]
        a[j + 1] = x
    }
}
# The median of sorted a[1..n].
function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
# The largest k with P(Binomial(n, 1/2) < k) <= 5%, or 0.
function lo(n,   k, p, c, i) {
    p = 0; c = 1; k = 0
    for (i = 0; i <= n; i++) {
        if (i > 0) c = c * (n - i + 1) / i
        if (p + c / 2 ^ n > 0.05) break
        p += c / 2 ^ n; k = i + 1
    }
    return k
}
# Sorts a[1..n] and returns its median and interval as
# "1.023 (0.998 to 1.051)"; sets the globals ilo and ihi (0 and 1e9 when
# there is no interval).
function summary(a, n,   k) {
    sort(a, n); k = lo(n)
    ilo = k >= 1 ? a[k] : 0; ihi = k >= 1 ? a[n + 1 - k] : 1e9
    return sprintf("%.3f (%s to %s)", med(a, n), k >= 1 ? sprintf("%.3f", ilo) : "-",
                   k >= 1 ? sprintf("%.3f", ihi) : "-")
}
