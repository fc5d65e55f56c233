"""What the compiled map kernels (_extend.py, _report.py) and their Python callers agree on: the
indices of the params array, the columns of the placement table and CIGAR's operation numbers.
A module without Numba, so that the callers load the kernels precompiled (precompiled.py)."""

OP_M, OP_I, OP_D = 0, 1, 2  # SAM's numbering of CIGAR operations

# params of place_chain and place_chains, one int64 array (extend.kernel_params)
P_MATCH, P_MISMATCH, P_AMBIGUOUS, P_OPEN, P_EXTEND, P_CLIP, P_BAND, P_UNGAPPED, P_MAX_TRACE = range(9)
PARAMS = 9

# columns of place_chains' table: one row a placement
(C_READ, C_RECORD, C_POSITION, C_STRAND, C_QB, C_QE, C_SCORE, C_TOTAL, C_SPAN, C_OPS, C_RUNS) = range(11)
COLUMNS = 11
