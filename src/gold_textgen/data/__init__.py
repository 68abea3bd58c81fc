"""Data: the demo task, readers of every source kind (sources/: NQG, IWSLT14, hub datasets, downloads),
dataset preparation, tokenizers, the copy vocabulary, NQG's word features and seq2seq batches."""
