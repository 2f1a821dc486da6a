# WebSearch flow sizes: the web search cluster measured in the DCTCP paper (Alizadeh et
# al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Figure 4: background flows of a query
# cluster), as tabulated for simulation by pFabric (Alizadeh et al., SIGCOMM 2013) and the
# HPCC simulator's traffic generator (HPCC, Li et al., SIGCOMM 2019,
# alibaba-edu/High-Precision-Congestion-Control traffic_gen/WebSearch_distribution.txt).
#
# Format (rocelab CDF file): one point per line, "flow_size_bytes cumulative_probability".
# Sizes and probabilities never decrease; the last probability is 1. Between points the
# size is interpolated linearly in probability. Mean 1.71 MB; heavy tail to 30 MB.
0        0
10000    0.15
20000    0.20
30000    0.30
50000    0.40
80000    0.53
200000   0.60
1000000  0.70
2000000  0.80
5000000  0.90
10000000 0.97
30000000 1.00
