"""Snakemake adapter: rule decode -> gold_textgen.decoding.decode_split."""

from pathlib import Path

from gold_textgen.decoding import decode_split
from gold_textgen.logs import log_to_file
from gold_textgen.runtime import set_threads

with log_to_file(snakemake.log[0]):
    set_threads(snakemake.threads)
    decode_split(
        model_dir=Path(snakemake.input.model),
        data_path=Path(snakemake.input.data),
        output_path=Path(snakemake.output[0]),
        task=snakemake.params.task,
        decoder_name=snakemake.wildcards.decoder,
        decoder=snakemake.params.decoder,
        sample_seed=int(snakemake.wildcards.sample),
    )
