"""sparserl: the harness that judges sparse CUDA kernels (SpMV, SpMM), its rewards for RL engines
and its trainers, from Python. Everything runs in this process through the C++ core (python/
bindings/); model-written device code runs only in the harness's sandbox.

    import sparserl
    A = sparserl.as_matrix("A.mtx")            # or a scipy.sparse / torch sparse CSR matrix
    program = sparserl.heuristic_program(A)    # the expert library's pick
    verdict = sparserl.evaluate(program, A, op="spmv", device="cpu")   # sparserl eval --json
    ranking = sparserl.tune(A, device="gpu")
    k = sparserl.compile(program, A); y = k(x)   # on a GPU: x a torch CUDA tensor / CuPy array
    from sparserl.rewards import compute_score, sparserl_reward        # verl, TRL

`python -m sparserl ...` is the command line; `python -m sparserl.train_sft` and
`python -m sparserl.train_minimal` are the seed's commands.
"""

from ._helpers import use_installed_helpers

use_installed_helpers()  # before the core starts any helper

from ._core import Error, Evaluator, Matrix  # noqa: E402
from .evaluate import (evaluate, evaluate_many, evaluator, expert_programs,  # noqa: E402
                       heuristic_program, tune)
from .device_kernel import DeviceKernel, compile  # noqa: E402
from .matrix import (as_matrix, from_coordinates, from_csr_arrays, from_scipy,  # noqa: E402
                     from_torch, generate, read_matrix_market, write_matrix_market)

__version__ = "0.1.0"
__all__ = ["DeviceKernel", "Error", "Evaluator", "Matrix", "as_matrix", "compile", "evaluate",
           "evaluate_many", "evaluator", "expert_programs", "from_coordinates", "from_csr_arrays",
           "from_scipy", "from_torch", "generate", "heuristic_program", "read_matrix_market",
           "tune", "write_matrix_market"]
