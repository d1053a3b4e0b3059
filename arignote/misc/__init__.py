"""Helpers at ``pytensor.misc``'s path: small containers (:mod:`.ordered_set`,
:mod:`.frozendict`), memory-sharing checks for dense and sparse values
(:mod:`.may_share_memory`) and a pickler that leaves out where nodes were created
(:mod:`.pkl_utils`).

PyTensor's ``misc`` also holds scripts that time its C backend's BLAS and OpenMP
elemwise loops and check its C compilation cache (``check_blas``, ``check_duplicate_key``,
``elemwise_openmp_speedup``, ``elemwise_time_test``); arignote has no C backend (its
benchmarks are in ``bench/``), so they have no counterpart here.
"""
