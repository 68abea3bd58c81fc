"""`python -m gold_textgen`: the gold-textgen command."""

from .cli.main import main

main()
