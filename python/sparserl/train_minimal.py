"""The seed's RL entry point, verbatim:

    python -m sparserl.train_minimal --steps 1 --max-nnz 128 --model-path M --tokenizer-path M

runs the C++ PPO trainer in this process (`sparserl train_minimal`, an alias of train-ppo) on
the harness's reward; M is an HF directory, e.g. a train_sft run's runs/sft/final. Without
--data / --dataset-dir it generates 8 matrices. The run goes to runs/ppo unless -o says
otherwise; `python -m sparserl.train_minimal --help` lists every flag.
"""

from .cli import main

if __name__ == "__main__":
    import sys

    main(["train_minimal", *sys.argv[1:]])
