"""Objectives compared as claims about the method: the test that weighs the seeds' spread and the shared
test set (method_test.py), paired tests, the significance table, the registered claims' verdicts
(claim_verdicts.py) and their report, the objectives and on-policy tables, and the demo's signatures."""
