#!/usr/bin/python3
"""thpeval's Student-t quantiles and cdf against scipy.stats.t.

Reads the lines "df p quantile cdf_at_quantile" that tests/stats/t_table
prints (the file is argv[1]) and checks, for every point of the grid below,
that the quantile and the cdf at it agree with scipy to 1e-6 relative. The
cdf is compared on its smaller tail (cdf below the median, 1 - cdf above),
where a relative error is not hidden by the leading 0.99... . Prints the
largest relative errors; the last line is the tally. Exit 0 when all pass,
1 when any failed, 77 (skipped) when scipy is not installed.
"""
import math
import sys

TOL = 1e-6
# the grid of tests/stats/t_table.c
PROBS = [0.005, 0.6, 0.9, 0.95, 0.975, 0.995]
DFS = [float(d) for d in range(1, 201)] + [0.5, 1.5, 2.7, 7.3, 33.3, 150.5, 1e4, 1e5, 1e6]


def main():
    try:
        from scipy import stats
        import scipy
    except ImportError:
        print("SKIP: scipy is not installed (tools/deps.sh installs python3-scipy)")
        print("t_reference: 0 passed, 0 failed, 1 skipped")
        return 77
    if len(sys.argv) != 2:
        print("usage: t_reference.py TABLE (the output of build/tests/stats/t_table)")
        print("t_reference: 0 passed, 1 failed, 0 skipped")
        return 1

    passed = failed = 0
    rows = {}
    with open(sys.argv[1]) as f:
        for n, line in enumerate(f, 1):
            try:
                df, p, q, c = (float(w) for w in line.split())
            except ValueError:
                print("FAIL: line %d of the table is not 'df p quantile cdf': %r" % (n, line))
                failed += 1
                continue
            rows[(df, p)] = (q, c)

    worst = {"quantile": (0.0, None), "cdf": (0.0, None)}

    def check(what, df, p, got, want):
        nonlocal passed, failed
        err = abs(got - want) / abs(want) if want != 0 else abs(got)
        if not math.isfinite(got) or not (err <= TOL):
            print("FAIL: %s at df %g p %g: thpeval %.17g, scipy %.17g (relative error %.3g)"
                  % (what, df, p, got, want, err))
            failed += 1
        else:
            passed += 1
        if not err <= worst[what][0]:
            worst[what] = (err, (df, p))

    for df in DFS:
        for p in PROBS:
            if (df, p) not in rows:
                print("FAIL: the table has no line for df %g p %g" % (df, p))
                failed += 2
                continue
            q, c = rows[(df, p)]
            check("quantile", df, p, q, float(stats.t.ppf(p, df)))
            if q < 0:
                check("cdf", df, p, c, float(stats.t.cdf(q, df)))
            else:
                check("cdf", df, p, 1 - c, float(stats.t.sf(q, df)))

    print("scipy %s; %d grid points (df 0.5 to 1e6, p %s)" % (
        scipy.__version__, len(DFS) * len(PROBS), ", ".join("%g" % p for p in PROBS)))
    for what, (err, where) in worst.items():
        if where:
            print("largest relative error, %s: %.3g at df %g p %g" % (what, err, where[0], where[1]))
    print("t_reference: %d passed, %d failed, 0 skipped" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
