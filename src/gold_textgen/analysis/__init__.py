"""Analysis of scored outputs: tables, the paper comparison, figures, exposure bias, NLL analyses,
diversity, examples, the human-evaluation sheet, bootstrap intervals, objective names and training curves."""
