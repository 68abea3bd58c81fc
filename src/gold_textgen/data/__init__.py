"""Data: the demo task, readers of every source kind, dataset preparation, tokenizers and seq2seq batches."""
