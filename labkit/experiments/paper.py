"""The published numbers the tournament is compared with (Morrill et al., 2021).

FIGURE_E5_FIXED and FIGURE_E5_SIMULTANEOUS: Leduc poker, milli-big-blinds, mean over rounds
t = 0..499, rows = learners, columns = opponents, in the order of `FIGURE_E5_VARIANTS`; one
decimal as printed. `FIGURE_E5_AVERAGES` holds each table's avg column, avg row and corner.
TABLE_2: goofspiel win %, each variant averaged over rounds and the eight opponents of
`TABLE_2_VARIANTS` (the avg column of an 8 x 8 tournament); the printed (rounded) numbers.
"""
import numpy as np

from labkit.experiments.tournament import FIGURE_E5_VARIANTS, TABLE_2_VARIANTS

FIGURE_E5_FIXED = np.array([
    # columns in the same order as the rows
    [-0.0, -25.3, -1.5, -15.6, -6.2, -27.3, -19.2, -25.3, -17.0, -17.6, -6.7],    # ACT_IN
    [1951.7, -0.0, 7.8, -0.8, 3.4, 2.1, 1.3, 1.1, 6.0, 2.2, 10.8],                # CF
    [1951.0, 2.7, -0.0, 14.1, 5.6, -5.4, -5.8, 2.7, 6.7, 1.5, 5.8],               # CF_IN
    [1951.9, 4.3, 6.2, -0.0, 5.2, 1.5, 0.3, 2.9, 6.6, 2.1, 11.8],                 # CF_EX+IN
    [1951.6, 76.0, 90.3, 61.7, -0.0, 23.5, 1.7, 11.4, 10.0, 9.3, 15.8],           # BPS
    [1951.0, 55.5, 85.8, 86.0, 39.4, -0.0, 30.4, 40.8, 5.5, 57.0, 22.9],          # CFPS
    [1951.9, 67.3, 98.1, 79.0, 7.4, 10.4, -0.0, 13.5, 9.4, 8.4, 17.8],            # CFPS_EX+IN
    [1951.9, 68.4, 59.7, 96.3, 59.3, 63.2, 96.3, -0.0, 17.8, 47.1, 44.9],         # CSPS
    [1951.0, 91.5, 67.1, 124.5, 78.0, 69.9, 84.9, 21.5, 0.0, 60.1, 36.1],         # TIPS
    [1952.0, 75.0, 58.6, 83.9, 62.2, 76.3, 88.4, 17.3, 17.4, -0.0, 41.5],         # TIPS_EX+IN
    [1950.9, 129.4, 113.3, 185.4, 76.2, 66.6, 137.1, 53.0, 68.7, 70.0, 0.0],      # BHV
])

FIGURE_E5_SIMULTANEOUS = np.array([
    [-0.0, -221.8, -319.1, -235.7, -248.3, -331.8, -359.7, -253.7, -347.7, -372.6, -321.6],
    [221.8, -0.0, -1.7, -2.6, -6.9, -5.0, -12.1, -12.1, -11.2, -10.9, -17.6],
    [319.1, 1.7, -0.0, 1.0, -11.6, -11.4, -9.7, -14.3, -11.1, -13.0, -11.6],
    [235.7, 2.6, -1.0, -0.0, -6.7, -8.5, -9.0, -13.7, -6.2, -13.3, -13.0],
    [248.3, 6.9, 11.6, 6.7, -0.0, -1.2, 1.5, -5.8, -5.3, -8.1, -3.7],
    [331.8, 5.0, 11.4, 8.5, 1.2, -0.0, 2.0, -10.4, -6.4, -4.3, -8.2],
    [359.7, 12.1, 9.7, 9.0, -1.5, -2.0, -0.0, -2.0, -2.7, -3.0, -2.5],
    [253.7, 12.1, 14.3, 13.7, 5.8, 10.4, 2.0, -0.0, 2.9, -3.9, -4.1],
    [347.7, 11.2, 11.1, 6.2, 5.3, 6.4, 2.7, -2.9, 0.0, -4.1, -3.6],
    [372.6, 10.9, 13.0, 13.3, 8.1, 4.3, 3.0, 3.9, 4.1, -0.0, 1.1],
    [321.6, 17.6, 11.6, 13.0, 3.7, 8.2, 2.5, 4.1, 3.6, -1.1, 0.0],
])

# (avg column over rows, avg row over columns, corner) as printed
FIGURE_E5_AVERAGES = {
    "fixed": (np.array([-14.7, 180.5, 179.9, 181.2, 204.7, 215.9, 205.8, 227.7, 235.0, 224.8, 259.1]),
              np.array([1774.1, 49.5, 53.2, 65.0, 30.0, 25.5, 37.8, 12.6, 11.9, 21.8, 18.2]), 190.9),
    "simultaneous": (np.array([-273.8, 12.9, 21.7, 15.2, 22.8, 30.1, 34.3, 27.9, 34.6, 39.5, 35.0]),
                     np.array([273.8, -12.9, -21.7, -15.2, -22.8, -30.1, -34.3, -27.9, -34.6, -39.5, -35.0]),
                     0.0),
}

FIGURE_E5 = {"fixed": FIGURE_E5_FIXED, "simultaneous": FIGURE_E5_SIMULTANEOUS}

# rows whose means do not depend on the fixed-point solver's rounding (printed decimal must match)
ROUNDING_INSENSITIVE = ("cf", "cf_in", "cf_ex+in", "bps", "cfps", "cfps_ex+in")
ROUNDING_SENSITIVE = ("act_in", "csps", "tips", "tips_ex+in", "bhv")

# Table 2 as printed, per variant: (fixed g(5,asc,2p), simultaneous g(5,asc,2p), fixed g(4,asc,3p),
# simultaneous g(4,asc,3p)), win %. The column order is the one of the extracted text; the garbled
# header suggests another, which the tournament's own numbers settle (see labkit/data/efr/README.md).
TABLE_2 = dict(zip(TABLE_2_VARIANTS, ((52, 46, 48, 87), (56, 50, 51, 84), (57, 50, 52, 91), (58, 51, 52, 85),
                                      (59, 51, 52, 83), (60, 51, 52, 91), (60, 51, 53, 88), (65, 51, 53, 93)),
                   strict=True))
TABLE_2_COLUMNS = (("fixed", 2), ("simultaneous", 2), ("fixed", 3), ("simultaneous", 3))
# the first column recomputed from the authors' current data files, T = 500 (two decimals)
TABLE_2_AUTHORS_DATA_FIXED_2P = dict(zip(TABLE_2_VARIANTS, (51.25, 56.18, 56.74, 57.98, 58.41, 59.42, 60.39,
                                                            64.66), strict=True))

assert FIGURE_E5_FIXED.shape == FIGURE_E5_SIMULTANEOUS.shape == (len(FIGURE_E5_VARIANTS),) * 2
