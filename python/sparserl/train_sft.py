"""The seed's SFT entry point, verbatim:

    python -m sparserl.train_sft --dataset-dir dataset --max-nnz 128 --steps 2
    python -m sparserl.train_sft --data sft_samples.jsonl --steps 2

runs the C++ SFT trainer in this process (`sparserl train_sft`, an alias of train-sft), which
takes the seed's flags as they are: --dataset-dir (.mtx files labelled by the heuristic, or SFT
.jsonl files), --data, --max-nnz, --steps, --model-path, --tokenizer-path, and the CLI's own
(`python -m sparserl.train_sft --help`). The run goes to runs/sft unless -o says otherwise.
"""

from .cli import main

if __name__ == "__main__":
    import sys

    main(["train_sft", *sys.argv[1:]])
