"""LoRA adapters (peft) for decoder-only models: `model.lora` trains a low-rank adapter over a frozen base
instead of every weight, in MLE (SFT) and fine-tuning alike (Hu et al. 2022, LoRA).

GOLD keeps three versions of the weights beside each other: the policy, the lagged policy pi_tilde and
the frozen MLE/SFT model. With full weights that is three copies of the model, which keeps a 7B model off
one GPU. With an adapter the policy is the base plus its adapter, and pi_tilde and the frozen SFT model are
two more adapters of the same base module (training/helper_models.py, `AdapterHelper`): one copy of the
base weights in memory.
"""

from __future__ import annotations

import torch

# The adapter the policy trains: peft's default name, so a saved model loads as any peft model does.
POLICY_ADAPTER = "default"


def lora_config(settings: dict):
    """peft's LoraConfig from the config's `model.lora` block (r, alpha, dropout, target_modules)."""
    from peft import LoraConfig

    return LoraConfig(
        r=settings["r"],
        lora_alpha=settings["alpha"],
        lora_dropout=settings["dropout"],
        target_modules=settings["target_modules"],
        task_type="CAUSAL_LM",
    )


def with_lora(language_model: torch.nn.Module, settings: dict) -> torch.nn.Module:
    """`language_model` with a trainable LoRA adapter over its frozen weights (a peft model)."""
    from peft import get_peft_model

    return get_peft_model(language_model, lora_config(settings))


def peft_model_in(model: torch.nn.Module):
    """The peft model that is `model` or that `model` holds (a causal LM in the prompt -> completion
    contract), or None for a model without adapters."""
    for module in model.modules():
        if hasattr(module, "peft_config") and hasattr(module, "add_adapter") and hasattr(module, "active_adapter"):
            return module
    return None
