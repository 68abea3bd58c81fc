"""The workflow's own bookkeeping: each step's code identity, the compute each rule requests, the index of
a results folder's experiments, whether the results a report shows are current, and whether a finished
training run had converged."""
