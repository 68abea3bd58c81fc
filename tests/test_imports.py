"""Jobs that only read files (scores, tables, figures, analyses) must start fast: importing torch or
transformers costs seconds per job, so their modules must not pull them in."""

import subprocess
import sys

CPU_MODULES = ("tables", "scoring", "paper_comparison", "analyses", "human_eval", "baselines", "bootstrap", "prepare")


def test_cpu_only_job_modules_do_not_import_torch():
    probe = "; ".join(f"import gold_textgen.{name}" for name in CPU_MODULES)
    probe += "; import sys; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
