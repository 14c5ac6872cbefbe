"""fio's unit choice and number shapes in the normal output's latency lines (stat.c
display_lat, show_clat_percentiles; stat.h nsec_to_usec/nsec_to_msec). The expected lines
were printed by fio 3.33 (null engine for nsec, psync with fsync for usec) or follow its
rule for the msec range."""

from ssdlab.fioformat.text_output import lat_line, pct_lines

PCTS = ("1.000000", "5.000000", "10.000000", "20.000000", "30.000000", "40.000000", "50.000000",
        "60.000000", "70.000000", "80.000000", "90.000000", "95.000000", "99.000000", "99.500000",
        "99.900000", "99.950000", "99.990000")


def _lat(lo, hi, mean, dev, pct=()):
    return {"min": lo, "max": hi, "mean": mean, "stddev": dev, "percentile": dict(zip(PCTS, pct))}


def test_nsec_range_as_fio_null_engine():
    x = _lat(0, 7271, 10.11, 56.77, [0, 9] + [10] * 10 + [11, 20, 20, 20, 20])
    assert lat_line("clat", x) == "    clat (nsec): min=0, max=7271, avg=10.11, stdev=56.77"
    assert pct_lines("clat", x) == [
        "    clat percentiles (nsec):",
        "     |  1.00th=[    0],  5.00th=[    9], 10.00th=[   10], 20.00th=[   10],",
        "     | 30.00th=[   10], 40.00th=[   10], 50.00th=[   10], 60.00th=[   10],",
        "     | 70.00th=[   10], 80.00th=[   10], 90.00th=[   10], 95.00th=[   10],",
        "     | 99.00th=[   11], 99.50th=[   20], 99.90th=[   20], 99.95th=[   20],",
        "     | 99.99th=[   20]"]


def test_under_100us_stays_nsec_and_min_not_rounded():
    # 10.7 us to 80 us: fio keeps nsec (max not over 99.999 us)
    assert lat_line("clat", _lat(10700, 80000, 20000.0, 5000.0)) == \
        "    clat (nsec): min=10700, max=80000, avg=20000.00, stdev=5000.00"


def test_usec_range_as_fio_psync():
    x = _lat(2033, 224225, 2935.77, 5829.66,
             [2128, 2192, 2224, 2288, 2320, 2384, 2448, 2512, 2704, 3280, 3472, 3696, 4640, 6112,
              63232, 118272, 224256])
    assert lat_line("clat", x) == "    clat (usec): min=2, max=224, avg= 2.94, stdev= 5.83"
    assert pct_lines("clat", x) == [
        "    clat percentiles (usec):",
        "     |  1.00th=[    3],  5.00th=[    3], 10.00th=[    3], 20.00th=[    3],",
        "     | 30.00th=[    3], 40.00th=[    3], 50.00th=[    3], 60.00th=[    3],",
        "     | 70.00th=[    3], 80.00th=[    4], 90.00th=[    4], 95.00th=[    4],",
        "     | 99.00th=[    5], 99.50th=[    7], 99.90th=[   64], 99.95th=[  119],",
        "     | 99.99th=[  225]"]
    assert lat_line("sync", _lat(174130, 554903, 217979.23, 25714.94)) == \
        "    sync (usec): min=174, max=554, avg=217.98, stdev=25.71"


def test_small_spread_keeps_smaller_unit():
    # display_lat also asks a stdev over one of the unit
    assert lat_line("clat", _lat(150000, 151000, 150500.0, 300.0)).startswith("    clat (nsec): min=150000,")
    assert lat_line("clat", _lat(3_000_000, 150_000_000, 9e6, 5e5)).startswith("    clat (usec): min=3000,")


def test_msec_range_and_wide_percentiles():
    assert lat_line("clat", _lat(3_500_000, 250_000_000, 12_345_678.0, 4_000_000.0)) == \
        "    clat (msec): min=3, max=250, avg=12.35, stdev= 4.00"
    # percentiles in msec, rounded up; usec values of 7 digits make rows of three
    ms = pct_lines("clat", _lat(0, 0, 0, 0, [2_100_000] * 16 + [250_000_001]))
    assert ms[0] == "    clat percentiles (msec):" and ms[1].startswith("     |  1.00th=[    3],")
    assert ms[-1] == "     | 99.99th=[  251]"
    us = pct_lines("clat", _lat(0, 0, 0, 0, [3000] * 16 + [9_999_000_000]))
    assert us[0] == "    clat percentiles (usec):" and us[1].count("th=") == 3
    assert us[1] == "     |  1.00th=[      3],  5.00th=[      3], 10.00th=[      3],"
    assert us[-1] == "     | 99.95th=[      3], 99.99th=[9999000]"
