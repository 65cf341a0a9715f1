"""Paper 000's 33 OpenML regression tasks (the Grinsztajn et al. benchmark), named `openml_<task_id>`.

The numbers are paper 000 Table II: n rows, # raw feature columns, d after
one-hot (k columns for a categorical with k levels) and the 'true bound'
max |y| printed with 6 decimals.  Mirror layout: features (categoricals as
pandas `category`), the target last, so the default Schema reads them.
"""

from __future__ import annotations

from dpbench.data.registry import DatasetSpec, register
from dpbench.data.sources import OpenMLTask

# task id, OpenML dataset name, n, # columns, d, true bound
TABLE_II = """
361072 cpu_act 8192 21 21 99.000000
361073 pol 15000 26 26 100.000000
361074 elevators 16599 16 16 0.078000
361075 isolet 7797 613 613 26.000000
361076 wine_quality 6497 11 11 9.000000
361077 Ailerons 13750 33 33 0.003600
361078 houses 20640 8 8 13.122367
361079 house_16H 22784 16 16 13.122367
361080 diamonds 53940 6 6 9.842888
361081 Brazilian_houses 10692 8 8 13.928840
361082 Bike_Sharing_Demand 17379 6 6 977.000000
361083 nyc-taxi-green-dec-2016 581835 9 9 5.528238
361084 house_sales 21613 15 15 15.856731
361085 sulfur 10081 6 6 1.000000
361086 medical_charges 163065 3 3 11.958631
361087 MiamiHousing2016 13932 13 13 14.790071
361088 superconduct 21263 79 79 185.000000
361089 california 20640 8 8 1.791761
361090 fifa 18063 5 5 12.765691
361091 year 515345 90 90 2011.000000
361092 yprop_4_1 8885 62 82 1.000000
361093 analcatdata_supreme 4052 7 12 2.300000
361094 visualizing_soil 8641 4 5 40.000000
361095 black_friday 166821 9 23 10.084141
361096 diamonds 53940 9 26 9.842888
361097 Mercedes_Benz_Greener_Manufacturing 4209 359 735 265.320000
361098 Brazilian_houses 10692 11 17 13.928840
361099 Bike_Sharing_Demand 17379 11 20 977.000000
361100 OnlineNewsPopularity 39644 59 73 13.645079
361101 nyc-taxi-green-dec-2016 581835 16 31 5.528238
361102 house_sales 21613 17 19 15.856731
361103 particulate-matter-ukair-2017 394299 6 26 6.480505
361104 SGEMM_GPU_kernel_performance 241600 9 15 8.113915
"""

_seen: set[str] = set()
for _line in TABLE_II.strip().splitlines():
    _tid, _title, _n, _cols, _d, _bound = _line.split()
    register(DatasetSpec(
        name=f"openml_{_tid}", task="regression", source=OpenMLTask(int(_tid)), title=_title,
        url=f"https://www.openml.org/t/{_tid}", group="openml_all",
        slug=_title.lower() + ("_categorical" if _title in _seen else ""),  # the later task is the categorical one
        paper={"n": int(_n), "columns": int(_cols), "d": int(_d), "true_bound": float(_bound)},
        paper_table="paper 000 Table II",
    ))
    _seen.add(_title)
