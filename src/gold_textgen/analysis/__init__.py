"""Analysis of scored outputs: tables, the paper comparison, figures, exposure bias, NLL analyses,
diversity, examples, the human-evaluation sheet, bootstrap intervals, objective names, and the test about
the method (method_test.py) that the significance table and the claims (claims.py) share."""
