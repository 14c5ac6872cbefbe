"""fio's latency bins (stat.h, stat.c): values under 128 ns one bin each, then every power
of two in 64 bins of equal width, 29 groups (1856 bins); a bin is printed as the middle of
its range. fio's percentiles are read off the bins: for each percentile in order, the
first bin at which the running count reaches that share of the samples. Used by the
writer of fio's JSON and logs (json_write.py, logs.py) and by their readers (logs.py)."""

from __future__ import annotations

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_NR = 29 * PLAT_VAL
DEFAULT_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0,
                       99.5, 99.9, 99.95, 99.99)


def _bin(idx: int) -> tuple[int, int, int]:
    """Bin `idx` above the exact ones: its group's first value, its place in the group and
    log2 of its width (ns)."""
    width_bits = (idx >> PLAT_BITS) - 1
    return 1 << (width_bits + PLAT_BITS), idx % PLAT_VAL, width_bits


def bin_value(idx: int) -> int:
    """The value fio prints for bin `idx` (ns): the bin below 128, else its range's middle
    (fio's plat_idx_to_val, whose half-ns middle the integer drops)."""
    if idx < PLAT_VAL << 1:
        return idx
    base, k, width_bits = _bin(idx)
    return base + (((2 * k + 1) << width_bits) >> 1)


def plat_idx_to_val(idx: int) -> float:
    """Bin `idx`'s middle (ns) as a float, the half ns kept: the latency a histogram log's
    bin stands for when the logs are read."""
    if idx < (PLAT_VAL << 1):
        return float(idx)
    base, k, width_bits = _bin(idx)
    return base + (k + 0.5) * (1 << width_bits)


def bin_index(value: int) -> int:
    """The bin fio prints as `value` (a json+ `bins` key): bin_value's inverse; KeyError
    for a value no bin prints."""
    return _INDEX[value]


_INDEX = {bin_value(i): i for i in range(PLAT_NR)}


def percentiles(bins: dict[int, int], n: int, wanted: list[float]) -> list[int]:
    """fio's calc_clat_percentiles over the non-empty `bins` (index -> count) of `n`
    samples: each wanted percentile's bin value, in the order wanted (sorted)."""
    out: list[int] = []
    j, total = 0, 0
    for idx in sorted(bins):
        total += bins[idx]
        while j < len(wanted) and total >= wanted[j] / 100.0 * n:
            out.append(bin_value(idx))
            j += 1
        if j == len(wanted):
            break
    last = bin_value(max(bins)) if bins else 0
    return out + [last] * (len(wanted) - len(out))
