"""The claims registry: what the paper claims (paper_claims.py, with its numbers and the rows a run is
compared with: paper_numbers.py, paper_rows.py) and what the objectives that followed it claim
(successor_claims.py), each fixed before any run and tested by whichever grid covers it."""
