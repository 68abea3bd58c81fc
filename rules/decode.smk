# Generation: one output file per model, split, decoder and sampling run ({sample} is the sampling seed,
# 1..samples for a sampling decoder, 0 for a deterministic one).


# snakemake --cores 2 results/generations/demo/mle/seed1/test/greedy/sample0.jsonl
rule decode:
    input:
        model="results/models/{task}/{objective}/seed{seed}",
        data="results/data/{task}/{split}.jsonl",
    output:
        "results/generations/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.jsonl",
    log:
        "logs/decode/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.log",
    benchmark:
        "benchmarks/decode/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.tsv"
    threads: config["threads"]["decode"]
    resources:
        gpu=requested("decode", "gpu"),
        mem_mb=requested("decode", "mem_mb"),
        runtime=requested("decode", "runtime"),
    params:
        task=decoding_settings,
        decoder=decoder_settings,
    script:
        "../workflow_scripts/decode.py"
