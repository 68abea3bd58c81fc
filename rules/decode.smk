# Generation: one output file per model, split and decoder.


# snakemake --cores 2 results/generations/demo/mle/seed1/test/greedy.jsonl
rule decode:
    input:
        model="results/models/{task}/{objective}/seed{seed}",
        data="results/data/{task}/{split}.jsonl",
    output:
        "results/generations/{task}/{objective}/seed{seed}/{split}/{decoder}.jsonl",
    log:
        "logs/decode/{task}/{objective}/seed{seed}/{split}/{decoder}.log",
    benchmark:
        "benchmarks/decode/{task}/{objective}/seed{seed}/{split}/{decoder}.tsv"
    threads: config["threads"]["decode"]
    params:
        task=decoding_settings,
        decoder=decoder_settings,
    script:
        "../workflow_scripts/decode.py"
